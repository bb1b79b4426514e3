#include "exec/deferred_lines.h"

#include <algorithm>

#include "exec/steps.h"

namespace qpo::exec {

void DeferredLines::reserve(size_t n) {
  entries_.resize(n);
  entries_.clear();  // keeps the capacity, and the pages it touched
}

void DeferredLines::name_all(RunState& st, report::RunReport& log) {
  if (entries_.empty()) return;
  static const std::string kSetup = "setup", kBringUp = "bring-up";
  log.steps.reserve(log.steps.size() + entries_.size());
  for (auto& e : entries_) {
    report::StepResult r;
    r.plan_step = e.plan_step;
    r.status = e.status;
    r.err = e.err;
    r.micros = e.micros;
    if (e.message != kNoMessage) r.message = std::move(messages_[e.message]);
    const auto* step = static_cast<const plan::Step*>(e.what);
    const auto* qp = static_cast<const QpState*>(e.what);
    switch (e.kind) {
      case Kind::Created:
        r.host = st.host;
        r.phase = kSetup;
        r.verb = step->verb;
        r.object = step->object;
        break;
      case Kind::Granted:
        r.host = qp->host;
        r.phase = kSetup;
        r.verb = "ibv_create_qp";
        r.object = qp->facts->name;
        r.message = "device granted: " + granted_text(qp->asked_cap, qp->granted_cap);
        break;
      case Kind::Modified:
        name_modify_line(st, r, *qp, *e.modify, kBringUp);
        break;
    }
    log.add(std::move(r));
  }
  entries_.clear();
  messages_.clear();
}

int DeferredLines::latest_step() const {
  int latest = 0;
  for (const auto& e : entries_) latest = std::max(latest, e.plan_step);
  return latest;
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
