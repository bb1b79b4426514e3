#include "cluster/codec.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <limits>
#include <memory>

namespace qpo::cluster {

namespace {

std::string gid_hex(const std::array<uint8_t, 16>& g) {
  std::string s;
  char b[3];
  for (uint8_t x : g) {
    std::snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}

std::array<uint8_t, 16> gid_from_hex(const std::string& s) {
  std::array<uint8_t, 16> g{};
  for (size_t i = 0; i < 16 && 2 * i + 1 < s.size(); ++i) g[i] = static_cast<uint8_t>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return g;
}

template <typename T>
T get(const YAML::Node& n, const char* key, T fallback) {
  return n[key] ? n[key].as<T>() : fallback;
}

report::StepStatus status_from(const std::string& s) {
  for (auto st : {report::StepStatus::Ok, report::StepStatus::Failed, report::StepStatus::ExpectedFailure,
                  report::StepStatus::Skipped, report::StepStatus::Warning, report::StepStatus::Info})
    if (s == report::status_name(st)) return st;
  return report::StepStatus::Failed;
}

// A summary value as render_json wrote it: quoted scalars are strings; plain ones are
// booleans, integers or numbers; null is a non-finite number.
report::Scalar scalar_from(const YAML::Node& n) {
  if (n.IsNull()) return std::numeric_limits<double>::quiet_NaN();
  std::string text = n.Scalar();
  if (n.Tag() == "!") return text;
  if (text == "true" || text == "false") return text == "true";
  if (!text.empty() && text.find_first_not_of("-0123456789") == std::string::npos) {
    try {
      return static_cast<int64_t>(std::stoll(text));
    } catch (const std::exception&) {
    }
  }
  try {
    size_t used = 0;
    double d = std::stod(text, &used);
    if (used == text.size()) return d;
  } catch (const std::exception&) {
  }
  return text;
}

report::Fields fields_from(const YAML::Node& n) {
  report::Fields f;
  for (const auto& kv : n) f.emplace_back(kv.first.as<std::string>(), scalar_from(kv.second));
  return f;
}

report::WorkloadResult workload_from(const YAML::Node& n) {
  report::WorkloadResult w;
  w.name = get<std::string>(n, "name", "");
  w.script = get<std::string>(n, "script", "");
  w.summary = fields_from(n["summary"]);
  for (const auto& r : n["runs"]) w.runs.push_back(fields_from(r));
  w.table = get<std::string>(n, "table", "");
  for (const auto& t : n["thresholds"]) {
    report::ThresholdResult th;
    th.name = get<std::string>(t, "name", "");
    th.field = get<std::string>(t, "field", "");
    th.unit = get<std::string>(t, "unit", "");
    th.limit = get<double>(t, "limit", 0);
    if (t["measured"] && !t["measured"].IsNull()) th.measured = t["measured"].as<double>();
    th.passed = get<bool>(t, "passed", false);
    th.message = get<std::string>(t, "message", "");
    w.thresholds.push_back(std::move(th));
  }
  return w;
}

report::Verdict verdict_from(const std::string& s) {
  for (auto v : {report::Verdict::Pass, report::Verdict::Fail, report::Verdict::Unsupported, report::Verdict::Error})
    if (s == report::verdict_name(v)) return v;
  return report::Verdict::Error;
}

}  // namespace

void write_directory(util::JsonWriter& w, const exec::Directory& d) {
  w.begin_object();
  w.key("qps").begin_object();
  for (const auto& [name, q] : d.qps) {
    w.key(name).begin_object();
    w.field("host", q.host).field("type", q.type).field("qpn", q.qpn).field("sq_psn", q.sq_psn).field("qkey", q.qkey);
    w.field("lid", static_cast<unsigned>(q.lid)).field("gid", gid_hex(q.gid));
    w.field("active_mtu", static_cast<unsigned>(q.active_mtu)).field("port", static_cast<unsigned>(q.port));
    w.field("slots_count", q.slots_count).field("slot_size", q.slot_size);
    w.end_object();
  }
  w.end_object();
  w.key("mrs").begin_object();
  for (const auto& [name, m] : d.mrs) {
    w.key(name).begin_object();
    w.field("host", m.host).field("addr", m.addr).field("length", m.length).field("rkey", m.rkey);
    w.end_object();
  }
  w.end_object();
  w.end_object();
}

exec::Directory read_directory(const YAML::Node& n) {
  exec::Directory d;
  for (const auto& kv : n["qps"]) {
    const auto& v = kv.second;
    exec::RemoteQp q;
    q.host = get<std::string>(v, "host", "");
    q.type = get<std::string>(v, "type", "");
    q.qpn = get<uint32_t>(v, "qpn", 0);
    q.sq_psn = get<uint32_t>(v, "sq_psn", 0);
    q.qkey = get<uint32_t>(v, "qkey", 0);
    q.lid = static_cast<uint16_t>(get<unsigned>(v, "lid", 0));
    q.gid = gid_from_hex(get<std::string>(v, "gid", ""));
    q.active_mtu = static_cast<uint8_t>(get<unsigned>(v, "active_mtu", 0));
    q.port = static_cast<uint8_t>(get<unsigned>(v, "port", 1));
    q.slots_count = get<uint32_t>(v, "slots_count", 0);
    q.slot_size = get<uint32_t>(v, "slot_size", 0);
    d.qps[kv.first.as<std::string>()] = q;
  }
  for (const auto& kv : n["mrs"]) {
    const auto& v = kv.second;
    d.mrs[kv.first.as<std::string>()] = {get<std::string>(v, "host", ""), get<uint64_t>(v, "addr", 0),
                                         get<uint64_t>(v, "length", 0), get<uint32_t>(v, "rkey", 0)};
  }
  return d;
}

std::string report_json(const report::RunReport& r) {
  util::JsonWriter w(false);
  report::render_json(w, r);
  return w.str();
}

report::RunReport read_report(const YAML::Node& n) {
  report::RunReport r;
  r.scenario = get<std::string>(n, "scenario", "");
  r.file = get<std::string>(n, "file", "");
  r.device = get<std::string>(n, "device", "");
  r.verdict = verdict_from(get<std::string>(n, "verdict", "ERROR"));
  r.reason = get<std::string>(n, "reason", "");
  r.qps_at_rts = get<uint64_t>(n, "qps_at_rts", 0);
  r.bringup_seconds = get<double>(n, "bringup_seconds", 0);
  for (const auto& d : n["disagreements"]) r.disagreements.push_back(d.as<std::string>());
  for (const auto& s : n["steps"]) {
    report::StepResult st;
    st.host = get<std::string>(s, "host", "");
    st.phase = get<std::string>(s, "phase", "");
    st.verb = get<std::string>(s, "verb", "");
    st.object = get<std::string>(s, "object", "");
    st.detail = get<std::string>(s, "detail", "");
    st.status = status_from(get<std::string>(s, "status", ""));
    st.err = get<int>(s, "errno", 0);
    st.micros = get<double>(s, "micros", 0);
    st.message = get<std::string>(s, "message", "");
    r.steps.push_back(std::move(st));
  }
  // render_json lists the workloads' results apart from the steps, in step order; each
  // belongs to its workload's script step (a workload runs once per host).
  for (const auto& n_w : n["workloads"]) {
    auto w = std::make_shared<report::WorkloadResult>(workload_from(n_w));
    for (auto& st : r.steps)
      if (st.verb == "script" && st.object == w->name && !st.workload) {
        st.workload = w;
        break;
      }
  }
  return r;
}

std::optional<YAML::Node> parse_message(const std::string& text, std::string* error) {
  try {
    YAML::Node n = YAML::Load(text);
    if (!n.IsMap() || !n["type"]) {
      *error = "message is not an object with a \"type\"";
      return std::nullopt;
    }
    return n;
  } catch (const std::exception& e) {
    *error = std::string("unreadable message: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace qpo::cluster
