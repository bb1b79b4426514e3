#include "cluster/codec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <limits>
#include <memory>
#include <type_traits>

#include "cluster/json_node.h"
#include "report/workload_steps.h"
#include "util/json_reader.h"
#include "util/strings.h"

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
  auto nibble = [&](char c) -> uint8_t {
    if (c >= '0' && c <= '9') return static_cast<uint8_t>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<uint8_t>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<uint8_t>(c - 'A' + 10);
    throw ProtocolError("a GID is 32 hex digits, not '" + s.substr(0, 40) + "'");
  };
  if (s.size() != 32 && !s.empty()) throw ProtocolError("a GID is 32 hex digits, not " + std::to_string(s.size()));
  std::array<uint8_t, 16> g{};
  for (size_t i = 0; i < 16 && 2 * i + 1 < s.size(); ++i) g[i] = static_cast<uint8_t>(nibble(s[2 * i]) << 4 | nibble(s[2 * i + 1]));
  return g;
}

// A map's key, which the protocol always writes as a string.
std::string key_of(const YAML::Node& k) {
  if (!k.IsScalar()) throw ProtocolError("an object key is not a string");
  return k.Scalar();
}

template <typename T>
T get(const YAML::Node& n, const char* key, T fallback) {
  return field_or<T>(n, key, fallback);
}

void require_object(const YAML::Node& n, const char* key) {
  if (!n || !n.IsMap()) throw ProtocolError(std::string("expected an object holding '") + key + "'");
}

// A list field (absent or null: empty). Anything else breaks the protocol: iterating it would
// throw yaml-cpp's own errors, or walk a map's pairs as if they were elements.
YAML::Node list_of(const YAML::Node& n, const char* key) {
  require_object(n, key);
  YAML::Node v = n[key];
  if (!v || v.IsNull()) return YAML::Node(YAML::NodeType::Sequence);
  if (!v.IsSequence()) throw ProtocolError(std::string("field '") + key + "' is not a list");
  return v;
}

// An object field (absent or null: empty), as list_of.
YAML::Node map_of(const YAML::Node& n, const char* key) {
  require_object(n, key);
  YAML::Node v = n[key];
  if (!v || v.IsNull()) return YAML::Node(YAML::NodeType::Map);
  if (!v.IsMap()) throw ProtocolError(std::string("field '") + key + "' is not an object");
  return v;
}

const char* kind_name(const std::string*) { return "a string"; }
const char* kind_name(const bool*) { return "true or false"; }
const char* kind_name(const double*) { return "a number"; }
template <typename T>
const char* kind_name(const T*) { return "an integer in range"; }

// What a scan of a message's text finds before yaml-cpp is let at it: the deepest nesting of
// [ and {, the number of values (each costs yaml-cpp ~0.5 kB and ~10 us), and the first byte
// outside a string that JSON does not have (YAML's anchors, aliases, tags, block collections,
// unquoted text: an alias repeated 10^6 times would be a million copies to read).
struct Shape {
  int deepest = 0;
  size_t values = 0;
  char stray = 0;
};

Shape shape_of(std::string_view text) {
  Shape s;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      s.deepest = std::max(s.deepest, ++depth);
      ++s.values;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' || c == ':') {
      ++s.values;
    } else if (!std::strchr(" \t\r\n0123456789+-.eEtruefalsn", c) || c == '\0') {
      if (!s.stray) s.stray = c;
    }
  }
  size_t first = text.find_first_not_of(" \t\r\n");
  if (!s.stray && (first == std::string_view::npos || text[first] != '{')) s.stray = first == std::string_view::npos ? ' ' : text[first];
  return s;
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
  if (!n.IsScalar()) throw ProtocolError("a result field is not a plain value");
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
  if (n && !n.IsNull() && !n.IsMap()) throw ProtocolError("a workload summary is not an object");
  for (const auto& kv : n) f.emplace_back(key_of(kv.first), scalar_from(kv.second));
  return f;
}

report::WorkloadResult workload_from(const YAML::Node& n) {
  report::WorkloadResult w;
  require_object(n, "name");
  w.name = get<std::string>(n, "name", "");
  w.script = get<std::string>(n, "script", "");
  w.summary = fields_from(n["summary"]);
  for (const auto& r : list_of(n, "runs")) w.runs.push_back(fields_from(r));
  w.table = get<std::string>(n, "table", "");
  for (const auto& t : list_of(n, "thresholds")) {
    report::ThresholdResult th;
    require_object(t, "name");
    th.name = get<std::string>(t, "name", "");
    th.field = get<std::string>(t, "field", "");
    th.unit = get<std::string>(t, "unit", "");
    th.limit = get<double>(t, "limit", 0);
    if (t["measured"] && !t["measured"].IsNull()) th.measured = get<double>(t, "measured", 0);
    th.passed = get<bool>(t, "passed", false);
    th.message = get<std::string>(t, "message", "");
    w.thresholds.push_back(std::move(th));
  }
  w.group = get<std::string>(n, "group", "");
  w.aggregate = get<bool>(n, "aggregate", false);
  w.quality = fields_from(n["quality"]);
  for (const auto& l : list_of(n, "latency")) {
    report::LatencyDistribution d;
    require_object(l, "size");
    d.size = get<int64_t>(l, "size", 0);
    d.samples = get<uint64_t>(l, "samples", 0);
    // Named as "latency[2].edges[5]" of workload 'w', so a broken agent's report says where.
    std::string where = "latency[" + std::to_string(w.latency.size()) + "]";
    auto in = [&](const char* list, size_t i) {
      return "workload '" + util::printable(w.name, 200) + "' " + where + "." + list + "[" + std::to_string(i) + "]";
    };
    for (const auto& e : list_of(l, "edges")) d.edges.push_back(value_of<double>(e, in("edges", d.edges.size())));
    for (const auto& c : list_of(l, "counts")) d.counts.push_back(value_of<uint64_t>(c, in("counts", d.counts.size())));
    for (const auto& p : list_of(l, "cdf")) {
      std::string at = in("cdf", d.cdf.size());
      if (!p.IsSequence() || p.size() != 2) throw ProtocolError(at + " is not a point [usec, share]");
      d.cdf.emplace_back(value_of<double>(p[0], at + "[0]"), value_of<double>(p[1], at + "[1]"));
    }
    if (d.counts.size() + 1 != d.edges.size() && !(d.counts.empty() && d.edges.empty()))
      throw ProtocolError("a latency histogram's edges and counts do not match");
    w.latency.push_back(std::move(d));
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
  for (const auto& kv : map_of(n, "qps")) {
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
    d.qps[key_of(kv.first)] = q;
  }
  for (const auto& kv : map_of(n, "mrs")) {
    const auto& v = kv.second;
    d.mrs[key_of(kv.first)] = {get<std::string>(v, "host", ""), get<uint64_t>(v, "addr", 0),
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
  require_object(n, "scenario");
  r.scenario = get<std::string>(n, "scenario", "");
  r.file = get<std::string>(n, "file", "");
  r.device = get<std::string>(n, "device", "");
  r.verdict = verdict_from(get<std::string>(n, "verdict", "ERROR"));
  r.reason = get<std::string>(n, "reason", "");
  r.qps_at_rts = get<uint64_t>(n, "qps_at_rts", 0);
  r.bringup_seconds = get<double>(n, "bringup_seconds", 0);
  for (const auto& o : list_of(n, "overrides"))
    if (o.IsScalar()) r.overrides.push_back(o.Scalar());
  for (const auto& d : list_of(n, "disagreements")) {
    if (!d.IsScalar()) throw ProtocolError("a disagreement is not a string");
    r.disagreements.push_back(d.Scalar());
  }
  for (const auto& c : list_of(n, "counters"))
    r.counters.push_back({get<std::string>(c, "host", ""), get<std::string>(c, "device", ""),
                          get<std::string>(c, "name", ""), get<uint64_t>(c, "before", 0), get<uint64_t>(c, "after", 0)});
  for (const auto& q : list_of(n, "wire")) {
    report::WireSequence seq;
    seq.host = get<std::string>(q, "host", "");
    seq.qp = get<std::string>(q, "qp", "");
    seq.peer = get<std::string>(q, "peer", "");
    seq.total = get<uint64_t>(q, "total", 0);
    for (const auto& e : list_of(q, "events"))
      if (e.IsScalar()) seq.events.push_back(e.Scalar());
    for (const auto& p : list_of(q, "packets")) {
      if (seq.packets.size() >= report::WireSequence::kMaxPackets) break;
      seq.packets.push_back({get<double>(p, "t_us", 0), get<bool>(p, "to_peer", true), get<std::string>(p, "what", ""),
                             get<uint32_t>(p, "psn", 0), get<std::string>(p, "note", "")});
    }
    r.wire.push_back(std::move(seq));
  }
  for (const auto& s : list_of(n, "steps")) {
    report::StepResult st;
    st.plan_step = get<int>(s, "step", 0);
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
  // belongs to its workload's step (a workload runs once per host).
  std::vector<std::shared_ptr<const report::WorkloadResult>> workloads;
  for (const auto& n_w : list_of(n, "workloads")) workloads.push_back(std::make_shared<report::WorkloadResult>(workload_from(n_w)));
  report::attach_workloads(r.steps, workloads);
  return r;
}

std::optional<YAML::Node> parse_message(const std::string& text, std::string* error) {
  constexpr int kMaxNesting = 32;  // a report: message, report, steps, a step, a workload's runs
  Shape shape = shape_of(text);
  if (shape.stray) {
    *error = "message is not a JSON object (found " + util::printable(std::string(1, shape.stray)) + " outside a string)";
    return std::nullopt;
  }
  if (shape.deepest > kMaxNesting) {
    *error = "message nests deeper than " + std::to_string(kMaxNesting) + " levels";
    return std::nullopt;
  }
  if (shape.values > kMaxMessageValues) {
    *error = "message holds " + std::to_string(shape.values) + " values (limit " + std::to_string(kMaxMessageValues) + ")";
    return std::nullopt;
  }
  try {
    // Messages are JSON that qpo writes: YAML's anchors and aliases would let a peer send a
    // node graph that expands as it is walked.
    std::string why;
    auto json = util::json::parse(text, &why);
    if (!json) {
      *error = "unreadable message (not JSON): " + why;
      return std::nullopt;
    }
    YAML::Node n = yaml_node(*json);
    if (!n.IsMap() || !n["type"] || !n["type"].IsScalar()) {
      *error = "message is not an object with a \"type\" string";
      return std::nullopt;
    }
    return n;
  } catch (const std::exception& e) {
    *error = std::string("unreadable message: ") + e.what();
    return std::nullopt;
  }
}

template <typename T>
T value_of(const YAML::Node& v, const std::string& what) {
  T out{};
  bool ok = v && v.IsScalar();
  if constexpr (std::is_same_v<T, bool>) ok = ok && (v.Scalar() == "true" || v.Scalar() == "false");  // JSON's, not YAML 1.1's yes/on
  if (!ok || !YAML::convert<T>::decode(v, out)) throw ProtocolError(what + " is not " + kind_name(&out));
  return out;
}

template <typename T>
T field_or(const YAML::Node& n, const char* key, T fallback) {
  require_object(n, key);
  const YAML::Node v = n[key];
  if (!v) return fallback;
  return value_of<T>(v, std::string("field '") + key + "'");
}

template <typename T>
T field(const YAML::Node& n, const char* key) {
  if (!n || !n.IsMap() || !n[key]) throw ProtocolError(std::string("field '") + key + "' is missing");
  return field_or<T>(n, key, T{});
}

template std::string field_or<std::string>(const YAML::Node&, const char*, std::string);
template bool field_or<bool>(const YAML::Node&, const char*, bool);
template int field_or<int>(const YAML::Node&, const char*, int);
template int64_t field_or<int64_t>(const YAML::Node&, const char*, int64_t);
template uint64_t field_or<uint64_t>(const YAML::Node&, const char*, uint64_t);
template uint32_t field_or<uint32_t>(const YAML::Node&, const char*, uint32_t);
template double field_or<double>(const YAML::Node&, const char*, double);
template std::string field<std::string>(const YAML::Node&, const char*);
template double value_of<double>(const YAML::Node&, const std::string&);
template uint64_t value_of<uint64_t>(const YAML::Node&, const std::string&);
template int64_t value_of<int64_t>(const YAML::Node&, const std::string&);
template bool field<bool>(const YAML::Node&, const char*);
template int field<int>(const YAML::Node&, const char*);
template int64_t field<int64_t>(const YAML::Node&, const char*);

std::optional<YAML::Node> take_reply(std::deque<YAML::Node>& inbox, int64_t seq, std::vector<std::string>* dropped) {
  while (!inbox.empty()) {
    YAML::Node n = inbox.front();
    inbox.pop_front();
    int64_t got = field<int64_t>(n, "seq");
    if (got == seq) return n;
    if (dropped)
      dropped->push_back("dropped a late reply: " + util::printable(field_or<std::string>(n, "type", "?"), 100) + " #" + std::to_string(got) +
                         " while awaiting #" + std::to_string(seq));
  }
  return std::nullopt;
}

}  // namespace qpo::cluster
