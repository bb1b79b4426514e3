// The HTML report (report/html_page.h): escaping of everything that comes from a scenario, the
// plots' data-* attributes, and a page that loads nothing.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/html_report.h"
#include "cluster/codec.h"
#include "report/html_escape.h"
#include "report/html_page.h"
#include "report/html_svg.h"
#include "report/latency_distribution.h"

using namespace qpo::report;

namespace {

// A report as the controller reads it back from an agent's message text.
qpo::report::RunReport read_back(const std::string& json) {
  std::string err;
  auto v = qpo::util::json::parse(json, &err);
  REQUIRE_MESSAGE(v, err);
  return qpo::cluster::read_report(*v);
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

const std::string kEvil = "</pre></script><script>alert(1)</script><img src=x onerror=alert(2)>\"'&";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

RunReport evil_report() {
  RunReport r;
  r.scenario = kEvil;
  r.file = kEvil + ".yaml";
  r.device = "rxe0";
  r.reason = kEvil;
  r.overrides = {"workloads.w.args.size=" + kEvil};
  StepResult s;
  s.plan_step = 1;
  s.phase = "traffic";
  s.verb = "script";
  s.object = kEvil;
  s.detail = kEvil;
  s.message = kEvil;
  auto w = std::make_shared<WorkloadResult>();
  w->name = kEvil;
  w->script = kEvil;
  w->summary = {{kEvil, std::string(kEvil)}};
  w->table = kEvil;
  std::vector<double> us{10, 12, 11, 30};
  w->latency.push_back(latency_distribution(us, 64));
  w->thresholds.push_back({kEvil, "p99", "usec", 20, 30.0, false, kEvil});
  s.workload = w;
  r.steps.push_back(s);
  r.counters.push_back({kEvil, kEvil, kEvil, 1, 5});
  return r;
}

}  // namespace

TEST_CASE("html escape: markup, quotes and control bytes become entities") {
  CHECK(html::escape("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  CHECK(html::escape(std::string("a\0b\x1b\tc\n", 7)) == "a&#xFFFD;b&#xFFFD;\tc\n");
}

TEST_CASE("html script_json: no </script> or <!-- survives in the embedded results") {
  CHECK(html::script_json(R"({"a":"</script><!--&"})") == R"({"a":"\u003c/script\u003e\u003c!--\u0026"})");
}

TEST_CASE("html page: markup from every scenario string is text (a YAML string cannot inject)") {
  std::string yaml = read(QPO_SOURCE_DIR "/tests/report/report-lab.yaml");
  REQUIRE(yaml.find("<script>document.title='injected'</script>") != std::string::npos);
  std::string page = render_html(evil_report(), yaml + kEvil);
  CHECK(count(page, "<script") == 2);  // the results block and qpo's own script
  CHECK(count(page, "</script>") == 2);
  CHECK(count(page, "<img") == 0);
  CHECK(count(page, "</pre>") == count(page, "<pre"));
  CHECK(page.find("&lt;script&gt;document.title=&#39;injected&#39;&lt;/script&gt;") != std::string::npos);
  CHECK(page.find("&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;") != std::string::npos);
  CHECK(page.find("\\u003cimg src=x onerror=alert(2)\\u003e") != std::string::npos);  // in the JSON block
}

TEST_CASE("html page: loads nothing (no src/href but in-page anchors, a policy that forbids loads)") {
  std::string page = render_html(evil_report(), "");
  CHECK(page.find(" src=\"") == std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("default-src 'none'") != std::string::npos);
}

TEST_CASE("latency distribution: every sample in a bin, the CDF ends at the largest with share 1") {
  std::vector<double> us;
  for (int i = 1000; i >= 1; --i) us.push_back(i);
  auto d = latency_distribution(us, 8);
  CHECK(d.samples == 1000);
  REQUIRE(d.counts.size() == kHistogramBins);
  REQUIRE(d.edges.size() == kHistogramBins + 1);
  uint64_t total = 0;
  for (auto c : d.counts) total += c;
  CHECK(total == 1000);
  CHECK(d.edges.front() == 1);
  CHECK(d.edges.back() == 1000);
  CHECK(d.edges[20] == doctest::Approx(std::sqrt(1000.0)));  // log-spaced
  REQUIRE(d.cdf.size() == kCdfPoints + 1);
  CHECK(d.cdf.front() == std::make_pair(1.0, 0.001));
  CHECK(d.cdf[100] == std::make_pair(500.0, 0.5));
  CHECK(d.cdf.back() == std::make_pair(1000.0, 1.0));
}

TEST_CASE("latency distribution: one value is one bin; no samples, no bins") {
  std::vector<double> same{5, 5, 5};
  auto d = latency_distribution(same, 0);
  CHECK(d.counts == std::vector<uint64_t>{3});
  CHECK(d.edges == std::vector<double>{5, 5});
  std::vector<double> none;
  CHECK(latency_distribution(none, 0).counts.empty());
}

TEST_CASE("html page: the plots carry the data they draw") {
  RunReport r;
  r.scenario = "plots";
  auto sweep = std::make_shared<WorkloadResult>();
  sweep->name = "bw";
  sweep->runs = {{{"size", int64_t{64}}, {"bw_avg", 1.5}}, {{"size", int64_t{1024}}, {"bw_avg", 20.25}}};
  sweep->thresholds.push_back({"min_bw", "bw_avg", "MB/s", 1, 20.25, true, ""});
  std::vector<double> us{10, 20, 40};
  sweep->latency.push_back(latency_distribution(us, 1024));
  StepResult a;
  a.workload = sweep;
  r.steps.push_back(a);
  for (int i = 0; i < 2; ++i) {
    auto m = std::make_shared<WorkloadResult>();
    m->name = "g." + std::to_string(i);
    m->group = "g";
    m->summary = {{"bw_avg", 3.0 + i}};
    StepResult s;
    s.workload = m;
    r.steps.push_back(s);
  }
  r.counters.push_back({"a", "rxe0 port 1", "sent_pkts", 10, 52});
  std::string page = render_html(r, "");
  CHECK(page.find("data-sizes=\"64 1024\" data-bw=\"1.5 20.25\"") != std::string::npos);
  CHECK(page.find("data-group=\"g\" data-qps=\"g.0 g.1\" data-bw=\"3 4\"") != std::string::npos);
  CHECK(page.find("data-size=\"1024\" data-samples=\"3\" data-edges=\"10 ") != std::string::npos);
  CHECK(page.find("data-cdf=\"10:0.333333 20:0.666667 40:1\"") != std::string::npos);
  CHECK(page.find("class=\"threshold\" data-name=\"min_bw\" data-field=\"bw_avg\" data-limit=\"1\"") != std::string::npos);
  CHECK(page.find("data-name=\"sent_pkts\" data-delta=\"42\"") != std::string::npos);
  CHECK(count(page, "<svg class=\"plot ") == 4);  // bw against size, histogram, CDF, per-QP bars
}

TEST_CASE("results JSON round trip (qpo report, agents): latency, counters and a group's aggregate survive") {
  RunReport r = evil_report();
  StepResult g;
  g.verb = "workload group";
  g.object = "grp";
  auto agg = std::make_shared<WorkloadResult>();
  agg->name = "grp";
  agg->group = "grp";
  agg->aggregate = true;
  std::vector<double> us{1, 2, 3};
  agg->latency.push_back(latency_distribution(us, 4096));
  g.workload = agg;
  r.steps.push_back(g);
  auto back = read_back(qpo::cluster::report_json(r));
  REQUIRE(back.steps.size() == 2);
  REQUIRE(back.steps[0].workload);
  REQUIRE(back.steps[0].workload->latency.size() == 1);
  CHECK(back.steps[0].workload->latency[0].counts == r.steps[0].workload->latency[0].counts);
  CHECK(back.steps[0].workload->latency[0].cdf.size() == 4);
  REQUIRE(back.steps[1].workload);
  CHECK(back.steps[1].workload->aggregate);
  CHECK(back.steps[1].workload->latency[0].size == 4096);
  REQUIRE(back.counters.size() == 1);
  CHECK(back.counters[0].after - back.counters[0].before == 4);
  CHECK(back.overrides == r.overrides);
}

TEST_CASE("html plots: an axis whose tick step is below the spacing of doubles ends, with 2 ticks (issue 30 item 6)") {
  // Near 1e20 doubles are 16384 apart: a tick step of 2000 added to 1e20 never moved.
  LatencyDistribution d;
  d.samples = 2;
  d.edges = {1e20, 1e20 + 16384};
  d.counts = {2};
  d.cdf = {{1e20, 0.5}, {1e20 + 16384, 1}};
  for (const auto& svg : {html::svg_histogram("w", d, {}), html::svg_cdf("w", d, {})}) {
    CHECK(count(svg, "text-anchor=\"middle\">1e+20</text>") == 2);  // x: 1e20 and 1e20 + 16384
    CHECK(count(svg, "<text class=\"tick\"") <= 12);
  }
}

namespace {

// A file with `text` in it, removed at the end of the test.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/qpo-report-test-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("qpo report input: JSON that is not a run result names the keys it lacks and what it looks like") {
  TempFile f(R"({"new": "a.json", "baseline": "b.json", "tolerance_pct": 5, "figures": [], "only_in_new": [], "only_in_baseline": []})");
  std::vector<RunReport> runs;
  std::string error;
  CHECK_FALSE(qpo::cli::read_run_results(f.path, &runs, &error));
  CHECK(error == f.path + ": not a run result: no \"verdict\" and no \"steps\" key (it looks like the output of "
                          "qpo compare --format json); write one with qpo run --format json");
  TempFile g(R"([{"verdict": "PASS", "steps": []}, {"verdict": "PASS"}])");
  CHECK_FALSE(qpo::cli::read_run_results(g.path, &runs, &error));
  CHECK(error == g.path + ": item 2 of the list: not a run result: no \"steps\" key; write one with qpo run --format json");
}

TEST_CASE("qpo report input: YAML aliases are not JSON") {
  TempFile f(R"([&r {"verdict": "PASS", "steps": []}, *r])");
  std::vector<RunReport> runs;
  std::string error;
  CHECK_FALSE(qpo::cli::read_run_results(f.path, &runs, &error));
  CHECK(error == f.path + ": not JSON: line 1, column 2: expected a value, found '&' (a YAML anchor or alias is not JSON)");
}

namespace {

RunReport wire_report() {
  RunReport r;
  r.scenario = "rc-write-drop-psn4";
  WireSequence q;
  q.host = "a";
  q.qp = "qa";
  q.peer = kEvil;
  q.total = 4;
  q.events = {"drop the first transmission of the request at relative PSN 4 from qa to " + kEvil};
  q.packets = {{0, true, "RC RDMA Write Middle", 0x104, ""},
               {10, false, "RC Acknowledge", 0x104, "NAK PSN sequence error msn 0"},
               {20, true, "RC RDMA Write Middle", 0x104, "RETX 1"},
               {30, false, "RC Acknowledge", 0x104, "ACK msn 1"}};
  r.wire.push_back(q);
  return r;
}

}  // namespace

TEST_CASE("the wire section draws each packet of a QP's sequence, coloured by what it is, names escaped") {
  std::string html = render_html(wire_report(), "");
  CHECK(html.find("<h2>On the wire</h2>") != std::string::npos);
  CHECK(count(html, "<g class=\"") == 4);
  CHECK(html.find("<g class=\"nak\" data-psn=\"260\" data-dir=\"in\">") != std::string::npos);
  CHECK(html.find("<g class=\"retx\" data-psn=\"260\" data-dir=\"out\">") != std::string::npos);
  CHECK(html.find("<g class=\"ack\" data-psn=\"260\" data-dir=\"in\">") != std::string::npos);
  CHECK(html.find("data-packets=\"4\"") != std::string::npos);
  CHECK(html.find("packet event: drop the first transmission") != std::string::npos);
  CHECK(html.find("<script>alert(1)") == std::string::npos);
}

TEST_CASE("a run without wire: entries has no wire section") {
  RunReport r;
  r.scenario = "plain";
  CHECK(render_html(r, "").find("On the wire") == std::string::npos);
}

TEST_CASE("the wire sequences survive the JSON results (qpo report, agents' reports)") {
  qpo::util::JsonWriter w;
  render_json(w, wire_report());
  std::vector<RunReport> back;
  std::string error;
  REQUIRE(qpo::cli::parse_run_results(w.str(), "r.json", &back, &error));
  REQUIRE(back.size() == 1);
  REQUIRE(back[0].wire.size() == 1);
  const auto& q = back[0].wire[0];
  CHECK(q.peer == kEvil);
  CHECK(q.total == 4);
  REQUIRE(q.packets.size() == 4);
  CHECK(q.packets[1].note == "NAK PSN sequence error msn 0");
  CHECK_FALSE(q.packets[1].to_peer);
  CHECK(q.packets[2].psn == 0x104);
  CHECK(q.events.size() == 1);
}
