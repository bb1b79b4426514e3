#include "cluster/codec.h"
#include "exec/directory_names.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <limits>
#include <map>
#include <memory>
#include <type_traits>

#include "report/workload_steps.h"
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

using util::json::Kind;

template <typename T>
T get(const Message& n, const char* key, T fallback) {
  return field_or<T>(n, key, fallback);
}

void require_object(const Message& n, const char* key) {
  if (!n.is(Kind::Object)) throw ProtocolError(std::string("expected an object holding '") + key + "'");
}

// A list or object field that is absent or null reads as empty.
const Message* present(const Message& n, const char* key) {
  require_object(n, key);
  const Message* v = n.find(key);
  return v && !v->is(Kind::Null) ? v : nullptr;
}

const char* kind_name(const std::string*) { return "a string"; }
const char* kind_name(const bool*) { return "true or false"; }
const char* kind_name(const double*) { return "a number"; }
template <typename T>
const char* kind_name(const T*) { return "an integer in range"; }

// What a scan of a message's text finds before it is parsed: the deepest nesting of [ and {,
// the number of values (each read costs ~120 bytes), and the first byte outside a string that
// JSON does not have (YAML's anchors, aliases, tags, block collections,
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
  for (auto st : report::kStepStatuses)
    if (s == report::status_name(st)) return st;
  return report::StepStatus::Failed;
}

// A summary value as render_json wrote it: strings, booleans, integers (a literal without a
// fraction or exponent) or numbers; null is a non-finite number.
report::Scalar scalar_from(const Message& n) {
  switch (n.kind) {
    case Kind::Null: return std::numeric_limits<double>::quiet_NaN();
    case Kind::String: return n.text;
    case Kind::Bool: return n.boolean;
    case Kind::Number: {
      int64_t i = 0;
      auto [end, ec] = std::from_chars(n.text.data(), n.text.data() + n.text.size(), i);
      if (ec == std::errc() && end == n.text.data() + n.text.size()) return i;
      return n.number;
    }
    default: throw ProtocolError("a result field is not a plain value");
  }
}

report::Fields fields_from(const Message& n) {
  report::Fields f;
  if (!n.is(Kind::Null) && !n.is(Kind::Object)) throw ProtocolError("a workload summary is not an object");
  for (const auto& [key, value] : n.members) f.emplace_back(key, scalar_from(value));
  return f;
}

report::WorkloadResult workload_from(const Message& n) {
  report::WorkloadResult w;
  require_object(n, "name");
  w.name = get<std::string>(n, "name", "");
  w.script = get<std::string>(n, "script", "");
  w.summary = fields_from(member(n, "summary"));
  for (const auto& r : list_of(n, "runs")) w.runs.push_back(fields_from(r));
  w.table = get<std::string>(n, "table", "");
  for (const auto& t : list_of(n, "thresholds")) {
    report::ThresholdResult th;
    require_object(t, "name");
    th.name = get<std::string>(t, "name", "");
    th.field = get<std::string>(t, "field", "");
    th.unit = get<std::string>(t, "unit", "");
    th.limit = get<double>(t, "limit", 0);
    if (!member(t, "measured").is(Kind::Null)) th.measured = get<double>(t, "measured", 0);
    th.passed = get<bool>(t, "passed", false);
    th.message = get<std::string>(t, "message", "");
    w.thresholds.push_back(std::move(th));
  }
  w.group = get<std::string>(n, "group", "");
  w.aggregate = get<bool>(n, "aggregate", false);
  w.quality = fields_from(member(n, "quality"));
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
      if (!p.is(Kind::Array) || p.items.size() != 2) throw ProtocolError(at + " is not a point [usec, share]");
      d.cdf.emplace_back(value_of<double>(p.items[0], at + "[0]"), value_of<double>(p.items[1], at + "[1]"));
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

namespace {

// A QP type as the directory writes it: RC, UD, XRC_SEND (the rule table's names).
bool is_type_word(const std::string& t) {
  return !t.empty() && t.size() <= 16 &&
         std::all_of(t.begin(), t.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

// A host publishes a GID per device it uses: more than this is not a directory qpo wrote.
constexpr size_t kMaxGidsPerHost = 256;

}  // namespace

// A directory on the wire, by host: each host's GIDs once, and each entry one string of fields
// (10,000 QPs are 10,000 values to read, not 120,000: under TCG the reader's tree was most
// of the exchange's time). A QP's key is its peer id (exec/exchange.h: every host plans the
// same file, so ids agree):
//   {"hosts": {"a": {"gids": ["<32 hex>"],
//                    "qps": {"3": "TYPE QPN SQ_PSN QKEY LID GID# ACTIVE_MTU PORT SLOTS SLOT_SIZE"},
//                    "mrs": {"m0": "ADDR LENGTH RKEY"}}}}  (exec/directory_names.h: MR keys as text)
void write_directory(util::JsonWriter& w, const exec::Directory& d, const std::string& except) {
  struct Part {
    std::vector<std::array<uint8_t, 16>> gids;
    std::vector<std::pair<uint32_t, const exec::RemoteQp*>> qps;
    std::vector<std::pair<exec::MrKey, const exec::RemoteMr*>> mrs;
  };
  std::map<std::string, Part> hosts;
  for (const auto& [id, q] : d.qps)
    if (except.empty() || q.host != except) hosts[q.host].qps.emplace_back(id, &q);
  for (const auto& [key, m] : d.mrs)
    if (except.empty() || m.host != except) hosts[m.host].mrs.emplace_back(key, &m);
  w.begin_object().key("hosts").begin_object();
  char fields[160];
  for (auto& [host, part] : hosts) {
    std::vector<uint32_t> gid_of(part.qps.size());
    std::map<std::array<uint8_t, 16>, uint32_t> index;  // a host has a GID per device, mostly
    for (size_t i = 0; i < part.qps.size(); ++i) {
      const auto& gid = part.qps[i].second->gid;
      auto [at, added] = index.try_emplace(gid, static_cast<uint32_t>(part.gids.size()));
      if (added) part.gids.push_back(gid);
      gid_of[i] = at->second;
    }
    w.key(host).begin_object().key("gids").begin_array();
    for (const auto& g : part.gids) w.value(gid_hex(g));
    w.end_array().key("qps").begin_object();
    for (size_t i = 0; i < part.qps.size(); ++i) {
      const auto& q = *part.qps[i].second;
      // At most 16 + 9 x 10 digits + 9 spaces: the buffer holds any entry. No type goes as "-";
      // one that is no type word (none of qpo's) as "?", which the reader refuses naming the QP.
      const char* type = q.type.empty() ? "-" : is_type_word(q.type) ? q.type.c_str() : "?";
      std::snprintf(fields, sizeof fields, "%s %u %u %u %u %u %u %u %u %u", type, q.qpn,
                    q.sq_psn, q.qkey, unsigned{q.lid}, gid_of[i], unsigned{q.active_mtu}, unsigned{q.port}, q.slots_count,
                    q.slot_size);
      w.key(std::to_string(part.qps[i].first)).value(fields);
    }
    w.end_object().key("mrs").begin_object();
    for (const auto& [key, m] : part.mrs) {
      std::snprintf(fields, sizeof fields, "%llu %llu %u", static_cast<unsigned long long>(m->addr),
                    static_cast<unsigned long long>(m->length), m->rkey);
      w.key(exec::mr_key_text(key)).value(fields);
    }
    w.end_object().end_object();
  }
  w.end_object().end_object();
}

namespace {

// A directory entry's space-separated fields, read in order: a word, or an unsigned number
// within its field's range.
class Fields {
 public:
  // `entry` is the entry's value in the message (it outlives this reading).
  Fields(const Message& entry, std::string what) : what_(std::move(what)) {
    if (!entry.is(Kind::String)) throw ProtocolError(what_ + " is not a string");
    text_ = entry.text;
  }
  std::string word() {
    size_t end = text_.find(' ', at_);
    std::string w(text_.substr(at_, end == std::string_view::npos ? std::string_view::npos : end - at_));
    at_ = end == std::string_view::npos ? text_.size() : end + 1;
    if (w.empty()) throw ProtocolError(what_ + " has too few fields");
    return w;
  }
  uint64_t number(uint64_t max) {
    uint64_t v = 0;
    const char* begin = text_.data() + at_;
    const char* end = text_.data() + text_.size();
    auto [next, ec] = std::from_chars(begin, end, v);
    if (ec != std::errc() || next == begin || v > max || (next != end && *next != ' '))
      throw ProtocolError(what_ + ": field " + std::to_string(field_) + " is not a number in range");
    at_ = static_cast<size_t>(next - text_.data()) + (next != end);
    ++field_;
    return v;
  }
  void end() const {
    if (at_ < text_.size()) throw ProtocolError(what_ + " has too many fields");
  }

 private:
  std::string_view text_;
  std::string what_;
  size_t at_ = 0;
  int field_ = 1;
};

}  // namespace

exec::Directory read_directory(const Message& n) {
  exec::Directory d;
  for (const auto& [host, part] : map_of(n, "hosts")) {
    std::vector<std::array<uint8_t, 16>> gids;
    const auto& listed = list_of(part, "gids");
    if (listed.size() > kMaxGidsPerHost)
      throw ProtocolError("host '" + util::printable(host, 200) + "' lists " + std::to_string(listed.size()) + " GIDs (at most " +
                          std::to_string(kMaxGidsPerHost) + ")");
    for (const auto& g : listed) gids.push_back(gid_from_hex(value_of<std::string>(g, "a GID")));
    for (const auto& [key, entry] : map_of(part, "qps")) {
      std::string what = "QP '" + util::printable(key, 200) + "'";
      uint32_t id = 0;
      auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (ec != std::errc() || end != key.data() + key.size() || key.empty())
        throw ProtocolError(what + " is not a QP id (a number)");
      Fields f(entry, what);
      exec::RemoteQp q;
      q.host = host;
      q.type = f.word();
      if (q.type == "-") q.type.clear();
      else if (!is_type_word(q.type)) throw ProtocolError(what + ": '" + util::printable(q.type, 40) + "' is not a QP type");
      q.qpn = static_cast<uint32_t>(f.number(UINT32_MAX));
      q.sq_psn = static_cast<uint32_t>(f.number(UINT32_MAX));
      q.qkey = static_cast<uint32_t>(f.number(UINT32_MAX));
      q.lid = static_cast<uint16_t>(f.number(UINT16_MAX));
      uint64_t gid = f.number(UINT32_MAX);
      if (gid >= gids.size()) throw ProtocolError(what + " names GID " + std::to_string(gid) + " of " + std::to_string(gids.size()));
      q.gid = gids[gid];
      q.active_mtu = static_cast<uint8_t>(f.number(UINT8_MAX));
      q.port = static_cast<uint8_t>(f.number(UINT8_MAX));
      q.slots_count = static_cast<uint32_t>(f.number(UINT32_MAX));
      q.slot_size = static_cast<uint32_t>(f.number(UINT32_MAX));
      f.end();
      d.qps.insert_or_assign(id, std::move(q));
    }
    for (const auto& [text, entry] : map_of(part, "mrs")) {
      std::string what = "MR '" + util::printable(text, 200) + "'";
      auto key = exec::mr_key_from_text(text);
      if (!key) throw ProtocolError(what + " is not an MR key (m, s, w or x and an id)");
      Fields f(entry, what);
      exec::RemoteMr m;
      m.host = host;
      m.addr = f.number(UINT64_MAX);
      m.length = f.number(UINT64_MAX);
      m.rkey = static_cast<uint32_t>(f.number(UINT32_MAX));
      f.end();
      d.mrs.insert_or_assign(*key, std::move(m));
    }
  }
  return d;
}

std::string report_json(const report::RunReport& r) {
  util::JsonWriter w(false);
  report::render_json(w, r);
  return w.str();
}

size_t send_lines(const std::string& scenario, const std::vector<report::StepResult>& steps, size_t from, size_t to,
                  const std::function<bool(const std::string& message, size_t end)>& send) {
  to = std::min(to, steps.size());
  size_t count = kLinesPerMessage;
  while (from < to) {
    size_t end = std::min(to, from + count);
    report::RunReport part;
    part.scenario = scenario;
    part.steps.assign(steps.begin() + static_cast<std::ptrdiff_t>(from), steps.begin() + static_cast<std::ptrdiff_t>(end));
    std::string msg = "{\"type\":\"lines\",\"report\":" + report_json(part) + "}";
    if (msg.size() > kLinesMessageBytes && end - from > 1) {  // lines with big workload results: fewer at a time
      count = std::max<size_t>(1, (end - from) / 2);
      continue;
    }
    if (!send(msg, end)) break;
    from = end;
  }
  return from;
}

report::RunReport read_report(const Message& n) {
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
    if (o.is(Kind::String)) r.overrides.push_back(o.text);
  for (const auto& d : list_of(n, "disagreements")) {
    if (!d.is(Kind::String)) throw ProtocolError("a disagreement is not a string");
    r.disagreements.push_back(d.text);
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
      if (e.is(Kind::String)) seq.events.push_back(e.text);
    for (const auto& p : list_of(q, "packets")) {
      if (seq.packets.size() >= report::WireSequence::kMaxPackets) break;
      seq.packets.push_back({get<double>(p, "t_us", 0), get<bool>(p, "to_peer", true), get<std::string>(p, "what", ""),
                             get<uint32_t>(p, "psn", 0), get<std::string>(p, "note", "")});
    }
    r.wire.push_back(std::move(seq));
  }
  const auto& steps = list_of(n, "steps");
  r.steps.reserve(steps.size());
  for (const auto& s : steps) {
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

std::optional<Message> parse_message(const std::string& text, std::string* error) {
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
    if (!json->is(Kind::Object) || !member(*json, "type").is(Kind::String)) {
      *error = "message is not an object with a \"type\" string";
      return std::nullopt;
    }
    return json;
  } catch (const std::exception& e) {
    *error = std::string("unreadable message: ") + e.what();
    return std::nullopt;
  }
}

const Message& member(const Message& n, const char* key) {
  static const Message null_value;
  const Message* v = n.find(key);
  return v ? *v : null_value;
}

const std::vector<Message>& list_of(const Message& n, const char* key) {
  static const std::vector<Message> none;
  const Message* v = present(n, key);
  if (!v) return none;
  if (!v->is(Kind::Array)) throw ProtocolError(std::string("field '") + key + "' is not a list");
  return v->items;
}

const std::vector<util::json::Member>& map_of(const Message& n, const char* key) {
  static const std::vector<util::json::Member> none;
  const Message* v = present(n, key);
  if (!v) return none;
  if (!v->is(Kind::Object)) throw ProtocolError(std::string("field '") + key + "' is not an object");
  return v->members;
}

template <typename T>
T value_of(const Message& v, const std::string& what) {
  T out{};
  bool ok;
  if constexpr (std::is_same_v<T, std::string>) {
    ok = v.is(Kind::String);
    if (ok) out = v.text;
  } else if constexpr (std::is_same_v<T, bool>) {
    ok = v.is(Kind::Bool);
    out = v.boolean;
  } else if constexpr (std::is_floating_point_v<T>) {
    ok = v.is(Kind::Number);
    out = static_cast<T>(v.number);
  } else {  // an integer: the literal as written, whole and in T's range ("1.5", "-1" unsigned: no)
    ok = v.is(Kind::Number);
    if (ok) {
      auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), out);
      ok = ec == std::errc() && end == v.text.data() + v.text.size();
    }
  }
  if (!ok) throw ProtocolError(what + " is not " + kind_name(&out));
  return out;
}

template <typename T>
T field_or(const Message& n, const char* key, T fallback) {
  require_object(n, key);
  const Message* v = n.find(key);
  if (!v) return fallback;
  return value_of<T>(*v, std::string("field '") + key + "'");
}

template <typename T>
T field(const Message& n, const char* key) {
  if (!n.is(Kind::Object) || !n.find(key)) throw ProtocolError(std::string("field '") + key + "' is missing");
  return field_or<T>(n, key, T{});
}

template std::string field_or<std::string>(const Message&, const char*, std::string);
template bool field_or<bool>(const Message&, const char*, bool);
template int field_or<int>(const Message&, const char*, int);
template int64_t field_or<int64_t>(const Message&, const char*, int64_t);
template uint64_t field_or<uint64_t>(const Message&, const char*, uint64_t);
template uint32_t field_or<uint32_t>(const Message&, const char*, uint32_t);
template double field_or<double>(const Message&, const char*, double);
template std::string field<std::string>(const Message&, const char*);
template double value_of<double>(const Message&, const std::string&);
template uint64_t value_of<uint64_t>(const Message&, const std::string&);
template int64_t value_of<int64_t>(const Message&, const std::string&);
template bool field<bool>(const Message&, const char*);
template int field<int>(const Message&, const char*);
template int64_t field<int64_t>(const Message&, const char*);
template double field<double>(const Message&, const char*);

std::optional<Message> take_reply(std::deque<Message>& inbox, int64_t seq, std::vector<std::string>* dropped) {
  while (!inbox.empty()) {
    Message n = std::move(inbox.front());
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
