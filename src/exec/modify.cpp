// One ibv_modify_qp: the scenario's attributes with run-time values resolved, exactly the
// planned attr_mask, the rule tables' prediction compared with what the kernel said, then
// ibv_query_qp to check the QP is where it should be.

#include <cerrno>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <chrono>

#include "dataplane/recv_pool.h"
#include "exec/deferred_lines.h"
#include "exec/endpoints.h"
#include "exec/steps.h"
#include "spec/providers.h"
#include "verbs/qp_attr_fields.h"
#include "verbs/qp_control.h"

namespace qpo::exec {

namespace {

// "INIT->RTR mask=0x129 (IBV_QP_STATE|...)": the same few strings for thousands of QPs
// (`count:` expands one QP into many), so each is built once per session.
const std::string& mask_detail(RunState& st, const plan::ModifyPlan& t) {
  auto key = std::make_tuple(static_cast<int>(t.from), static_cast<int>(t.to), t.mask);
  auto it = st.mask_details.find(key);
  if (it != st.mask_details.end()) return it->second;
  return st.mask_details.emplace(key, verbs::transition_text(t.from, t.to, t.mask)).first->second;
}

// The attributes read back after a modify (verbs/qp_attr_fields.h), by mask bit, so verify()
// visits only the bits a transition set.
using Checked = verbs::QpAttrField;
constexpr int kComparable = [] {
  int m = 0;
  for (const auto& c : verbs::kQpAttrFields)
    if (c.read_back) m |= c.mask;
  return m;
}();
constexpr std::array<Checked, 32> kByBit = [] {
  std::array<Checked, 32> t{};
  for (const auto& c : verbs::kQpAttrFields)
    if (c.read_back) t[static_cast<size_t>(std::countr_zero(static_cast<unsigned>(c.mask)))] = c;
  return t;
}();

uint32_t read_field(const ibv_qp_attr& a, const Checked& c) { return verbs::load(a, c); }

}  // namespace

namespace {

// ibv_query_qp for the state and the attributes the transition set; 0 or the errno. Not
// zeroed: ibv_query_qp writes every attribute (libibverbs copies the whole response), and
// only the state and the bits in the mask are read. This runs for every modify.
int query_back(const QpState& q, const plan::ModifyPlan& t, ibv_qp_attr* got) {
  return verbs::query_qp(q.qp->get(), *got, IBV_QP_STATE | (static_cast<int>(t.mask) & kComparable));
}

// Calls differs(field, set, read) for each attribute the transition set that reads back
// otherwise; visits only the bits the transition set.
template <typename Fn>
void for_each_difference(const plan::ModifyPlan& t, const ibv_qp_attr& sent, const ibv_qp_attr& got, Fn differs) {
  for (auto bits = static_cast<unsigned>(static_cast<int>(t.mask) & kComparable); bits; bits &= bits - 1) {
    const Checked& c = kByBit[static_cast<size_t>(std::countr_zero(bits))];
    uint32_t want = read_field(sent, c), have = read_field(got, c);
    if (want != have) differs(c, want, have);
  }
}

}  // namespace

bool reads_back(const QpState& q, const plan::ModifyPlan& t, const ibv_qp_attr& sent) {
  ibv_qp_attr got;
  if (query_back(q, t, &got) != 0 || got.qp_state != static_cast<ibv_qp_state>(t.to)) return false;
  bool same = true;
  for_each_difference(t, sent, got, [&](const Checked&, uint32_t, uint32_t) { same = false; });
  return same;
}

bool verify(const QpState& q, const plan::ModifyPlan& t, const ibv_qp_attr& sent, std::string* differs) {
  ibv_qp_attr got;
  if (int e = query_back(q, t, &got)) {
    *differs = "ibv_query_qp failed: " + verbs::errno_name(e);
    return false;
  }
  bool state_ok = got.qp_state == static_cast<ibv_qp_state>(t.to);
  if (!state_ok)
    *differs += std::string("state reads ") + spec::state_name(static_cast<spec::QpState>(got.qp_state)) +
                ", expected " + spec::state_name(t.to) + "; ";
  for_each_difference(t, sent, got, [&](const Checked& c, uint32_t want, uint32_t have) {
    *differs += std::string(c.name) + " set " + std::to_string(want) + " reads " + std::to_string(have) + "; ";
  });
  if (!differs->empty()) differs->resize(differs->size() - 2);
  return state_ok;
}

void name_modify_line(RunState& st, report::StepResult& r, const QpState& q, const plan::ModifyPlan& t,
                      const std::string& phase) {
  r.host = q.host;
  r.phase = phase;
  r.verb = "ibv_modify_qp";
  r.object = q.facts->name;
  r.detail = mask_detail(st, t);
}

void attr_failure(RunState& st, report::RunReport& log, const std::string& phase, QpState& q, const plan::ModifyPlan& m, const std::string& why) {
  report::StepResult r;
  name_modify_line(st, r, q, m, phase);
  r.status = report::StepStatus::Failed;
  r.message = why;
  log.add(std::move(r));
  log.fail(why);
}

plan::OwnValues own_values(const QpState& q) {
  const auto& ctx = q.device->ctx();
  return {static_cast<uint8_t>(ctx.port()), static_cast<uint8_t>(q.device->gid_index), ctx.port_attr().active_mtu,
          q.sq_psn};
}

ModifyDone timed_modify(QpState& q, spec::Mask mask, ibv_qp_attr& attr) {
  StepTimer timer;
  int err = verbs::modify_qp(q.qp->get(), attr, static_cast<int>(mask));
  return {err, timer.micros()};
}

bool modify_qp(RunState& st, report::RunReport& log, const std::string& phase, QpState& q, const plan::ModifyPlan& m) {
  ibv_qp_attr attr{};
  if (!m.attrs.error.empty()) {
    attr_failure(st, log, phase, q, m, m.attrs.error);
    return false;
  }
  try {
    m.attrs.resolve(own_values(q), peer_of(st, q), q.facts->name, attr);
  } catch (const std::exception& e) {
    attr_failure(st, log, phase, q, m, e.what());
    return false;
  }
  return apply_modify(st, log, phase, q, m, attr, nullptr);
}

namespace {

enum class Attempt { Failed, ExpectedFailure, Succeeded };

// "; as schemas/providers.yaml records for rxe: with IBV_QP_AV" when the opened device's
// provider entry (qpo probe) records this refusal, else "".
std::string recorded_refusal(const QpState& q, const plan::ModifyPlan& t, int err) {
  const auto* entry = spec::ProviderTable::builtin().entry(q.device->ctx().provider());
  if (!entry) return "";
  auto value_of = [&](const std::string& field) { return t.literal(field); };
  for (const auto* d : spec::refusals(*entry, spec::RuleTable::builtin(), q.facts->type_name, t.from, t.to, t.mask,
                                      value_of))
    if (d->answered == verbs::errno_name(err))
      return "; as schemas/providers.yaml records for " + entry->name + ": " + d->what;
  return "";
}

// ibv_modify_qp, judged against the scenario's expectation and the rule tables' prediction,
// then ibv_query_qp. Fills `r` (the step's line) and the run's verdict; adds no line.
Attempt attempt_modify(RunState& st, report::RunReport& log, QpState& q, const plan::ModifyPlan& t, ibv_qp_attr& attr, Outcome& r,
                       const ModifyDone* done) {
  ModifyDone result = done ? *done : timed_modify(q, t.mask, attr);
  int err = result.err;
  r.micros = result.micros;
  r.err = err;
  auto detail = [&]() -> const std::string& { return mask_detail(st, t); };
  bool expected_fail = t.expects_failure();
  auto where = [&] { return "QP '" + q.facts->name + "' " + q.facts->type_name + " " + detail(); };
  if (err != 0) {
    const auto* deviation = spec::ProviderTable::builtin().transition_deviation(
        q.device->ctx().provider(), q.facts->type_name, spec::state_name(t.from), spec::state_name(t.to));
    if (deviation && verbs::errno_name(err) == deviation->errno_name && !(expected_fail && t.expect_errno == err)) {
      r.status = report::StepStatus::Skipped;
      r.message = "unsupported by device (" + q.device->ctx().provider() + "): " + deviation->why;
      if (log.verdict == report::Verdict::Pass) {
        log.verdict = report::Verdict::Unsupported;
        log.reason = q.facts->type_name + " " + spec::state_name(t.from) + "->" + spec::state_name(t.to) +
                           " is unsupported by device (" + q.device->ctx().provider() + "): " + deviation->why;
      }
      return Attempt::Failed;
    }
    if (t.predicted_ok && err == EINVAL)
      log.disagreements.push_back(where() + ": rule tables predicted ok, the kernel returned EINVAL" +
                                        recorded_refusal(q, t, err));
    if (expected_fail && t.expect_errno == err) {
      r.status = report::StepStatus::ExpectedFailure;
      r.message = verbs::errno_name(err) + ", as the scenario expects" +
                  (t.predicted_ok ? "" : " and the rule tables predicted");
      return Attempt::ExpectedFailure;
    }
    r.status = report::StepStatus::Failed;
    r.message = "ibv_modify_qp failed: " + verbs::errno_name(err) + " (" + std::strerror(err) + ")" +
                (expected_fail ? "; the scenario expected " + t.expect_name : "");
    log.fail(verbs::call_text("ibv_modify_qp", q.facts->name, detail()) + ": " + verbs::errno_name(err));
    return Attempt::Failed;
  }
  if (!t.predicted_ok)
    log.disagreements.push_back(where() + ": rule tables predicted EINVAL, the kernel accepted it");
  if (expected_fail) {
    r.status = report::StepStatus::Failed;
    r.message = "succeeded, but the scenario expected " + t.expect_name;
    log.fail(verbs::call_text("ibv_modify_qp", q.facts->name, detail()) + " succeeded; expected " +
                   t.expect_name);
    return Attempt::Failed;
  }
  std::string mismatch;
  if (!verify(q, t, attr, &mismatch)) {
    r.status = report::StepStatus::Failed;
    r.message = "ibv_query_qp: " + mismatch;
    log.fail("QP '" + q.facts->name + "' " + mismatch);
    return Attempt::Failed;
  }
  if (!mismatch.empty()) {
    r.message = "ibv_query_qp differs: " + mismatch;
    r.status = report::StepStatus::Warning;
  }
  return Attempt::Succeeded;
}

}  // namespace

bool apply_modify(RunState& st, report::RunReport& log, const std::string& phase, QpState& q, const plan::ModifyPlan& t, ibv_qp_attr& attr,
                  DeferredLines* later, const ModifyDone* done) {
  Outcome r;
  Attempt result = attempt_modify(st, log, q, t, attr, r, done);
  // The step's line: now, or after the bring-up window when `later` collects it.
  if (later) {
    later->modified(log, q, t, std::move(r));
  } else {
    report::StepResult line;
    name_modify_line(st, line, q, t, phase);
    set_outcome(line, std::move(r));
    // After bring-up the log shows where the QP is, as ibv_query_qp read it (verify()).
    if (result == Attempt::Succeeded && line.message.empty() && !t.bring_up)
      line.message = std::string("state read back: IBV_QPS_") + spec::state_name(t.to);
    log.add(std::move(line));
  }
  if (result != Attempt::Succeeded) return result == Attempt::ExpectedFailure;
  q.state = t.to;

  // What each state change implies for the queues.
  if (t.to == spec::QpState::RESET) {
    if (q.recv_pool) q.recv_pool->forget_outstanding();  // RESET empties both work queues
    q.went_through_reset = true;
    for (ibv_cq* cq : {q.send_cq, q.recv_cq})
      if (cq) drain_completions(st, q, cq, 0);
  }
  return true;
}

// The follow-ups a transition implies: the plan lists each as its own step.

bool repost_after_reset(report::RunReport& log, QpState& q) {
  return run_step(log, q.host, "transitions", "ibv_post_recv", q.facts->name, "re-post receives after RESET", [&] {
           post_bringup_receives(q, q.facts->cap.max_recv_wr);
         }).status != report::StepStatus::Failed;
}

bool flush_after_err(RunState& st, report::RunReport& log, QpState& q) {
  const std::string phase = "transitions";
  // Every outstanding WR completes with IBV_WC_WR_FLUSH_ERR.
  // The executor's receives and those a script left posted (send_bw's target keeps its
  // pool stocked on purpose) are flushed alike: all are in the QP's pool.
  uint32_t expected = q.recv_pool && !q.srq ? q.recv_pool->outstanding() : 0;
  auto flushed = q.recv_cq ? drain_completions(st, q, q.recv_cq, 200) : std::vector<ibv_wc>{};
  if (q.send_cq && q.send_cq != q.recv_cq) drain_completions(st, q, q.send_cq, 20);
  uint32_t flush_count = 0, other = 0;
  for (const auto& wc : flushed) {
    if (!(wc.wr_id & dataplane::kPoolRecvTag)) continue;  // a flushed send on a CQ that takes both
    (wc.status == IBV_WC_WR_FLUSH_ERR ? flush_count : other)++;
  }
  report::StepResult f;
  f.host = q.host;
  f.phase = phase;
  f.verb = "ibv_poll_cq";
  f.object = q.facts->name;
  f.detail = "flush after ->ERR";
  f.message = std::to_string(flush_count) + " of " + std::to_string(expected) +
              " outstanding receives completed with IBV_WC_WR_FLUSH_ERR";
  if (q.srq) f.message = std::to_string(flush_count) + " flushed (receives live on SRQ " + q.srq_state->srq->name() + ")";
  bool ok = q.srq || flush_count == expected;
  f.status = ok && other == 0 ? report::StepStatus::Ok : report::StepStatus::Failed;
  if (other) f.message += "; " + std::to_string(other) + " completions had another status";
  if (q.recv_pool && !q.srq) q.recv_pool->forget_outstanding();  // a later stream must not count them
  log.add(f);
  if (f.status == report::StepStatus::Failed) {
    log.fail("QP '" + q.facts->name + "': " + f.message);
    return false;
  }
  return true;
}

bool read_state(report::RunReport& log, QpState& q, const std::string& expected) {
  report::StepResult r;
  r.host = q.host;
  r.phase = "traffic";
  r.verb = "ibv_query_qp";
  r.object = q.facts->name;
  r.detail = "after the expected completion error";
  ibv_qp_state state{};
  StepTimer timer;
  int err = verbs::query_state(q.qp->get(), &state);
  r.micros = timer.micros();
  if (err) {
    r.status = report::StepStatus::Failed;
    r.err = err;
    r.message = "ibv_query_qp failed: " + verbs::errno_name(err);
    log.fail(verbs::call_text("ibv_query_qp", q.facts->name) + ": " + verbs::errno_name(err));
    log.add(r);
    return false;
  }
  q.state = static_cast<spec::QpState>(state);
  std::string got = std::string("IBV_QPS_") + spec::state_name(q.state);
  r.message = "state read back: " + got;
  if (got != expected) {
    r.status = report::StepStatus::Warning;
    r.message += " (the plan modelled " + expected + ")";
  }
  log.add(r);
  return true;
}

}  // namespace qpo::exec
