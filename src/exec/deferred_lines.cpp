#include "exec/deferred_lines.h"

#include "exec/steps.h"

namespace qpo::exec {

void DeferredLines::name_all(RunState& st) {
  static const std::string kSetup = "setup", kBringUp = "bring-up";
  auto& steps = st.report.steps;
  for (const auto& e : entries_) {
    if (e.line >= steps.size()) continue;  // the report was cut short (a failure before this line)
    auto& r = steps[e.line];
    switch (e.kind) {
      case Kind::Created:
        r.host = st.host;
        r.phase = kSetup;
        r.verb = e.step->verb;
        r.object = e.step->object;
        break;
      case Kind::Granted:
        r.host = e.qp->host;
        r.phase = kSetup;
        r.verb = "ibv_create_qp";
        r.object = e.qp->spec->name;
        r.message = "device granted: " + granted_text(e.qp->asked_cap, e.qp->granted_cap);
        break;
      case Kind::Modified:
        name_modify_line(st, r, *e.qp, e.qp->spec->transitions[e.transition], kBringUp);
        break;
    }
  }
  entries_.clear();
}

std::string granted_text(const ibv_qp_cap& asked, const ibv_qp_cap& granted) {
  std::string out;
  auto diff = [&](const char* n, uint32_t a, uint32_t g) {
    if (a != g) out += std::string(out.empty() ? "" : ", ") + n + " " + std::to_string(a) + " -> " + std::to_string(g);
  };
  diff("max_send_wr", asked.max_send_wr, granted.max_send_wr);
  diff("max_recv_wr", asked.max_recv_wr, granted.max_recv_wr);
  diff("max_send_sge", asked.max_send_sge, granted.max_send_sge);
  diff("max_recv_sge", asked.max_recv_sge, granted.max_recv_sge);
  diff("max_inline_data", asked.max_inline_data, granted.max_inline_data);
  return out;
}

}  // namespace qpo::exec
