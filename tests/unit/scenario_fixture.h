#pragma once
// Test helpers: load (and optionally validate) a scenario from an inline YAML string, and
// find diagnostics by code. Header-only; shared by the unit and golden tests.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.h"
#include "scenario/loader.h"
#include "scenario/model.h"
#include "util/source_text.h"
#include "validate/validate.h"

namespace qpo::test {

struct Loaded {
  util::SourceText source;
  std::optional<scenario::Scenario> scenario;  // as loaded
  std::optional<check::Checked> checked;       // load_validate: what the validator made of it
  diag::DiagSink sink;

  explicit Loaded(std::string text, std::string name = "t.yaml") : source(std::move(name), std::move(text)) {}

  std::vector<const diag::Diagnostic*> with_code(std::string_view code) const {
    std::vector<const diag::Diagnostic*> out;
    for (const auto& d : sink.all())
      if (d.code == code) out.push_back(&d);
    return out;
  }
  // The only diagnostic with `code`; nullptr when there are none or several.
  const diag::Diagnostic* one(std::string_view code) const {
    auto v = with_code(code);
    return v.size() == 1 ? v[0] : nullptr;
  }
  size_t errors() const { return sink.error_count(); }
  // "Q101@3:5 qps.qa.x: message" for every diagnostic: for failure messages.
  std::string dump() const {
    std::string out;
    for (const auto& d : sink.all())
      out += std::string(diag::severity_name(d.severity)) + " " + d.code + "@" + std::to_string(d.loc.line) + ":" +
             std::to_string(d.loc.col) + " " + d.path + ": " + d.message + " [hint: " + d.hint + "]\n";
    return out;
  }

  // The checked model when there is one (transitions elaborated), else the loaded scenario.
  const scenario::Qp* qp(std::string_view name) const {
    if (checked) return checked->model().qp(name);
    return scenario ? scenario->qp(name) : nullptr;
  }
  // The transition of QP `qp` that goes to `to` (the first one).
  const scenario::Transition* transition(std::string_view qp_name, spec::QpState to) const {
    const auto* q = qp(qp_name);
    if (!q) return nullptr;
    for (const auto& t : q->transitions)
      if (t.to == to) return &t;
    return nullptr;
  }
};

// Loader only.
inline Loaded load_only(std::string text) {
  Loaded l(std::move(text));
  l.scenario = scenario::load_scenario(l.source, l.sink);
  return l;
}

// Loader, then the validator when the loader produced a scenario.
#ifdef QPO_SOURCE_DIR
// A file of the source tree (`scenarios/two-host-cm-rc.yaml`), whole; "" when it is missing.
inline std::string source_file(const std::string& rel) {
  std::ifstream in(std::filesystem::path(QPO_SOURCE_DIR) / rel, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
#endif

inline Loaded load_validate(std::string text) {
  Loaded l(std::move(text));
  l.scenario = scenario::load_scenario(l.source, l.sink);
  if (l.scenario) l.checked = validate::validate(*l.scenario, l.sink);
  return l;
}

// 1-based number of the first line containing `needle` (0 when absent): lets tests name the
// expected line by its content instead of by counting.
inline int line_of(std::string_view text, std::string_view needle) {
  int line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (text.substr(start, end - start).find(needle) != std::string_view::npos) return line;
    start = end + 1;
    ++line;
  }
  return 0;
}

// 1-based column of `needle` on the first line containing it (0 when absent).
inline int col_of(std::string_view text, std::string_view needle) {
  size_t pos = text.find(needle);
  if (pos == std::string_view::npos) return 0;
  size_t line_start = text.rfind('\n', pos);
  line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
  return static_cast<int>(pos - line_start) + 1;
}

// A complete, valid RC loopback pair on one device (same shape as scenarios/rc-write-pair.yaml,
// kept here so unit tests do not depend on files other people edit). `qa_rtr` and `qb_rtr`
// replace the RTR bodies; `extra` is appended at the end (e.g. a workloads: section).
inline std::string rc_pair(std::string qa_rtr = "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, "
                                                "min_rnr_timer: 12, ah_attr: { is_global: true, grh: { dgid: peer, "
                                                "sgid_index: auto, hop_limit: 1 } } }",
                           std::string qb_rtr = "{ path_mtu: auto }", std::string extra = "") {
  return "version: 1\n"
         "name: rc-pair\n"
         "hosts:   { a: {} }\n"
         "devices: { da: { host: a, name: auto, port: 1, gid_index: auto } }\n"
         "pds:     { pa: { device: da } }\n"
         "mrs:\n"
         "  ma: { pd: pa, size: 64KiB, access: [local_write] }\n"
         "  mb: { pd: pa, size: 64KiB, access: [local_write, remote_write, remote_read] }\n"
         "cqs:     { ca: { device: da, depth: 512 } }\n"
         "qps:\n"
         "  qa:\n"
         "    pd: pa\n"
         "    type: RC\n"
         "    send_cq: ca\n"
         "    recv_cq: ca\n"
         "    cap: { max_send_wr: 128, max_recv_wr: 128, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 64 }\n"
         "    connect: qb\n"
         "    states:\n"
         "      INIT: { pkey_index: 0, port_num: 1, qp_access_flags: [remote_write, remote_read] }\n"
         "      RTR:  " + qa_rtr + "\n"
         "      RTS:  { sq_psn: random, timeout: 14, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 1 }\n"
         "  qb:\n"
         "    pd: pa\n"
         "    type: RC\n"
         "    send_cq: ca\n"
         "    recv_cq: ca\n"
         "    connect: qa\n"
         "    states:\n"
         "      INIT: { qp_access_flags: [remote_write, remote_read] }\n"
         "      RTR:  " + qb_rtr + "\n"
         "      RTS:  {}\n" + extra;
}

}  // namespace qpo::test
