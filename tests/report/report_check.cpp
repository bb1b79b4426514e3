// report_check DOM.html RESULTS.json: compares what the HTML report's plots draw (their data-*
// attributes, in the DOM headless Chromium dumped after running the page) with the JSON
// results of the same run, and checks the page ran its script, loads nothing and shows the
// scenario's markup as text. Prints every mismatch; exit 0 when there is none.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

int failures = 0;
void fail(const std::string& what) {
  std::cerr << "report_check: " << what << "\n";
  ++failures;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    size_t end = s.find(';', i);
    std::string e = end == std::string::npos ? "" : s.substr(i + 1, end - i - 1);
    if (e == "amp") out += '&';
    else if (e == "lt") out += '<';
    else if (e == "gt") out += '>';
    else if (e == "quot") out += '"';
    else if (e == "#39") out += '\'';
    else {
      out += s[i];
      continue;
    }
    i = end;
  }
  return out;
}

using Attrs = std::map<std::string, std::string>;

// Every start tag `<name ...>` of the DOM with its attributes.
std::vector<Attrs> tags(const std::string& dom, const std::string& name) {
  std::vector<Attrs> out;
  std::regex tag("<" + name + "(\\s[^>]*)?>", std::regex::icase);
  std::regex attr("([a-zA-Z_:][-a-zA-Z0-9_:.]*)=\"([^\"]*)\"");
  for (std::sregex_iterator it(dom.begin(), dom.end(), tag), end; it != end; ++it) {
    Attrs a;
    std::string inside = (*it)[1];
    for (std::sregex_iterator m(inside.begin(), inside.end(), attr); m != end; ++m) a[(*m)[1]] = unescape((*m)[2]);
    out.push_back(a);
  }
  return out;
}

std::vector<double> numbers(const std::string& text) {
  std::vector<double> out;
  std::istringstream in(text);
  std::string w;
  while (in >> w) out.push_back(std::stod(w));
  return out;
}

bool same(double a, double b) { return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

void compare_lists(const std::string& what, const std::vector<double>& plotted, const std::vector<double>& json) {
  if (plotted.size() != json.size()) {
    fail(what + ": " + std::to_string(plotted.size()) + " values plotted, " + std::to_string(json.size()) + " in the JSON");
    return;
  }
  for (size_t i = 0; i < json.size(); ++i)
    if (!same(plotted[i], json[i])) {
      std::ostringstream m;
      m << what << "[" << i << "]: plotted " << plotted[i] << ", JSON " << json[i];
      fail(m.str());
      return;
    }
}

const Attrs* find_svg(const std::vector<Attrs>& svgs, const std::string& cls, const std::string& key, const std::string& value,
                      const std::string& size = "") {
  for (const auto& a : svgs) {
    auto c = a.find("class");
    if (c == a.end() || c->second != "plot " + cls) continue;
    if (a.count(key) && a.at(key) == value && (size.empty() || (a.count("data-size") && a.at("data-size") == size))) return &a;
  }
  return nullptr;
}

std::vector<double> json_numbers(const YAML::Node& n) {
  std::vector<double> out;
  for (const auto& v : n) out.push_back(v.as<double>());
  return out;
}

std::optional<double> summary_number(const YAML::Node& fields, const char* key) {
  if (!fields[key] || fields[key].IsNull()) return std::nullopt;
  return fields[key].as<double>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: report_check DOM.html RESULTS.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream buf;
  buf << in.rdbuf();
  std::string dom = buf.str();
  if (dom.empty()) {
    std::cerr << "report_check: " << argv[1] << " is empty\n";
    return 2;
  }
  YAML::Node run = YAML::LoadFile(argv[2]);
  const auto svgs = tags(dom, "svg");

  // The page's script ran (it marks the body) and counted what the JSON holds.
  auto body = tags(dom, "body");
  if (body.empty() || body[0]["data-rendered"] != "ok") fail("the page's script did not run (no data-rendered=\"ok\" on body)");
  else if (body[0]["data-workloads"] != std::to_string(run["workloads"].size()))
    fail("the page's script counted " + body[0]["data-workloads"] + " workloads, the JSON has " +
         std::to_string(run["workloads"].size()));

  // Nothing to load; the scenario's markup is text: the only elements with code are qpo's two scripts.
  if (tags(dom, "script").size() != 2) fail(std::to_string(tags(dom, "script").size()) + " script elements, expected 2");
  for (const char* t : {"img", "iframe", "link", "object", "embed"})
    if (!tags(dom, t).empty()) fail(std::string("a <") + t + "> element in the page");
  std::regex ref("\\s(src|href|xlink:href)=\"(?!#)[^\"]*\"");
  std::smatch m;
  if (std::regex_search(dom, m, ref)) fail("the page references " + m.str());
  std::regex title("<title>([^<]*)</title>");
  if (!std::regex_search(dom, m, title) || m[1].str().find("injected") != std::string::npos)
    fail("the page's title is not qpo's: " + (m.size() > 1 ? m[1].str() : std::string("(none)")));

  std::map<std::string, std::vector<std::pair<std::string, double>>> groups;
  for (const auto& w : run["workloads"]) {
    std::string name = w["name"].as<std::string>();
    bool member = w["group"] && !w["group"].as<std::string>().empty() && !w["aggregate"].as<bool>();
    if (member) {
      if (auto bw = summary_number(w["summary"], "bw_avg")) groups[w["group"].as<std::string>()].emplace_back(name, *bw);
      continue;  // a member's latency is plotted in its group's aggregate
    }
    for (const auto& l : w["latency"]) {
      std::string size = l["size"].as<std::string>();
      std::string what = "workload " + name + " size " + size;
      const Attrs* h = find_svg(svgs, "hist", "data-workload", name, size);
      const Attrs* c = find_svg(svgs, "cdf", "data-workload", name, size);
      if (!h || !c) {
        fail(what + ": no latency " + (h ? "CDF" : "histogram") + " in the page");
        continue;
      }
      if (h->at("data-samples") != l["samples"].as<std::string>()) fail(what + ": histogram of " + h->at("data-samples") + " samples");
      compare_lists(what + " histogram edges", numbers(h->at("data-edges")), json_numbers(l["edges"]));
      auto counts = numbers(h->at("data-counts"));
      compare_lists(what + " histogram counts", counts, json_numbers(l["counts"]));
      double total = 0;
      for (double x : counts) total += x;
      if (total != l["samples"].as<double>()) fail(what + ": the histogram's bars hold " + std::to_string(total) + " samples");
      std::vector<double> px, jx;
      std::string cdf = c->at("data-cdf");
      for (char& ch : cdf)
        if (ch == ':') ch = ' ';
      px = numbers(cdf);
      for (const auto& p : l["cdf"]) {
        jx.push_back(p[0].as<double>());
        jx.push_back(p[1].as<double>());
      }
      compare_lists(what + " CDF", px, jx);
    }
    std::vector<double> sizes, bws;
    for (const auto& r : w["runs"])
      if (r["size"] && r["bw_avg"]) {
        sizes.push_back(r["size"].as<double>());
        bws.push_back(r["bw_avg"].as<double>());
      }
    if (sizes.size() >= 2) {
      const Attrs* b = find_svg(svgs, "bw-size", "data-workload", name);
      if (!b) fail("workload " + name + ": no bandwidth-against-size plot");
      else {
        compare_lists("workload " + name + " sizes", numbers(b->at("data-sizes")), sizes);
        compare_lists("workload " + name + " bandwidth", numbers(b->at("data-bw")), bws);
      }
    }
    for (const auto& t : w["thresholds"]) {
      std::string field = t["field"].as<std::string>(), unit = t["unit"].as<std::string>();
      bool plotted = (unit == "usec" && w["latency"] && w["latency"].size()) || (field == "bw_avg" && sizes.size() >= 2);
      if (!plotted) continue;
      bool found = false;
      for (const auto& g : tags(dom, "g"))
        if (g.count("data-name") && g.at("data-name") == t["name"].as<std::string>() && g.at("data-field") == field)
          found = found || same(std::stod(g.at("data-limit")), t["limit"].as<double>());
      if (!found) fail("workload " + name + ": threshold " + t["name"].as<std::string>() + " is not drawn at its limit");
    }
  }
  for (const auto& [g, members] : groups) {
    const Attrs* b = find_svg(svgs, "qp-bars", "data-group", g);
    if (!b) {
      fail("group " + g + ": no per-QP bars");
      continue;
    }
    std::string names;
    std::vector<double> bws;
    for (const auto& [n, bw] : members) {
      names += (names.empty() ? "" : " ") + n;
      bws.push_back(bw);
    }
    if (b->at("data-qps") != names) fail("group " + g + ": bars for " + b->at("data-qps") + ", JSON members " + names);
    compare_lists("group " + g + " bandwidth", numbers(b->at("data-bw")), bws);
  }

  auto rows = tags(dom, "tr");
  size_t steps = 0;
  std::vector<const Attrs*> counter_rows;
  for (const auto& r : rows) {
    if (!r.count("class")) continue;
    if (r.at("class").rfind("step", 0) == 0) ++steps;
    if (r.at("class").rfind("counter", 0) == 0) counter_rows.push_back(&r);
  }
  if (steps != run["steps"].size())
    fail(std::to_string(steps) + " step rows, the JSON has " + std::to_string(run["steps"].size()) + " steps");
  if (run["counters"].size() == 0) fail("the JSON has no device counters");
  for (const auto& c : run["counters"]) {
    bool found = false;
    for (const auto* r : counter_rows)
      found = found || (r->at("data-host") == c["host"].as<std::string>() && r->at("data-device") == c["device"].as<std::string>() &&
                        r->at("data-name") == c["name"].as<std::string>() && r->at("data-delta") == c["delta"].as<std::string>());
    if (!found) fail("counter " + c["name"].as<std::string>() + " delta " + c["delta"].as<std::string>() + " is not in the table");
  }
  if (failures) return 1;
  std::cout << "report_check: " << svgs.size() << " plots, " << steps << " steps and " << run["counters"].size()
            << " counters agree with " << argv[2] << "\n";
  return 0;
}
