// One ibv_modify_qp: the scenario's attributes with run-time values resolved, exactly the
// planned attr_mask, the rule tables' prediction compared with what the kernel said, then
// ibv_query_qp to check the QP is where it should be.
#include <poll.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <fcntl.h>

#include "dataplane/recv_pool.h"
#include "exec/steps.h"
#include "spec/providers.h"
#include "util/strings.h"

namespace qpo::exec {

namespace {

const spec::RuleTable& rules() { return spec::RuleTable::builtin(); }

struct Resolver {
  RunState& st;
  QpState& q;
  const RemoteQp* peer;

  // Throws a plain error when a value needs a peer that is not there (the validator
  // normally catches that first).
  const RemoteQp& need_peer(const std::string& field) {
    if (!peer) throw std::runtime_error(field + " is 'peer' but QP '" + q.spec->name + "' has no published peer");
    return *peer;
  }

  uint32_t value(const scenario::Attr& a) {
    using scenario::Symbol;
    if (a.symbol == Symbol::None) return static_cast<uint32_t>(a.number);
    if (a.symbol == Symbol::Device) return q.device->ctx().port();
    if (a.field == "dest_qp_num") return need_peer(a.field).qpn;
    if (a.field == "rq_psn") return need_peer(a.field).sq_psn;
    if (a.field == "sq_psn") return q.sq_psn;
    if (a.field == "path_mtu") {
      ibv_mtu mine = q.device->ctx().port_attr().active_mtu;
      ibv_mtu theirs = peer ? static_cast<ibv_mtu>(peer->active_mtu) : mine;
      return std::min(mine, theirs);
    }
    if (a.field == "dlid") return need_peer(a.field).lid;
    if (a.field == "sgid_index") return static_cast<uint32_t>(q.device->gid_index);
    throw std::runtime_error("no run-time value for " + a.field + " = " + scenario::symbol_name(a.symbol));
  }

  void fill_ah(ibv_ah_attr& ah, const scenario::Attr& a) {
    ah = {};
    ah.port_num = q.device->ctx().port();
    if (a.symbol == scenario::Symbol::Peer) {  // the whole address vector from the peer
      const auto& p = need_peer("ah_attr");
      ah.dlid = p.lid;
      ah.is_global = 1;
      ah.grh.dgid = gid_of(p);
      ah.grh.sgid_index = static_cast<uint8_t>(q.device->gid_index);
      ah.grh.hop_limit = 1;
      return;
    }
    for (const auto& c : a.children) {
      if (c.field == "dlid") ah.dlid = static_cast<uint16_t>(value(c));
      else if (c.field == "sl") ah.sl = static_cast<uint8_t>(value(c));
      else if (c.field == "src_path_bits") ah.src_path_bits = static_cast<uint8_t>(value(c));
      else if (c.field == "static_rate") ah.static_rate = static_cast<uint8_t>(value(c));
      else if (c.field == "is_global") ah.is_global = static_cast<uint8_t>(value(c));
      else if (c.field == "port_num") ah.port_num = static_cast<uint8_t>(value(c));
      else if (c.field == "grh") {
        for (const auto& g : c.children) {
          if (g.field == "dgid") {
            if (g.symbol == scenario::Symbol::Peer) ah.grh.dgid = gid_of(need_peer("dgid"));
            else verbs::parse_gid(g.text, ah.grh.dgid);
          } else if (g.field == "sgid_index") ah.grh.sgid_index = static_cast<uint8_t>(value(g));
          else if (g.field == "hop_limit") ah.grh.hop_limit = static_cast<uint8_t>(value(g));
          else if (g.field == "traffic_class") ah.grh.traffic_class = static_cast<uint8_t>(value(g));
          else if (g.field == "flow_label") ah.grh.flow_label = value(g);
        }
      }
    }
  }

  ibv_qp_attr build(const scenario::Transition& t) {
    ibv_qp_attr attr{};
    attr.qp_state = static_cast<ibv_qp_state>(t.to);
    for (const auto& a : t.attrs) {
      const std::string& f = a.field;
      if (f == "qp_access_flags") attr.qp_access_flags = static_cast<unsigned>(a.number);
      else if (f == "pkey_index") attr.pkey_index = static_cast<uint16_t>(value(a));
      else if (f == "port_num") attr.port_num = static_cast<uint8_t>(value(a));
      else if (f == "qkey") attr.qkey = value(a);
      else if (f == "path_mtu") attr.path_mtu = static_cast<ibv_mtu>(value(a));
      else if (f == "dest_qp_num") attr.dest_qp_num = value(a);
      else if (f == "rq_psn") attr.rq_psn = value(a);
      else if (f == "sq_psn") attr.sq_psn = value(a);
      else if (f == "max_dest_rd_atomic") attr.max_dest_rd_atomic = static_cast<uint8_t>(value(a));
      else if (f == "max_rd_atomic") attr.max_rd_atomic = static_cast<uint8_t>(value(a));
      else if (f == "min_rnr_timer") attr.min_rnr_timer = static_cast<uint8_t>(value(a));
      else if (f == "timeout") attr.timeout = static_cast<uint8_t>(value(a));
      else if (f == "retry_cnt") attr.retry_cnt = static_cast<uint8_t>(value(a));
      else if (f == "rnr_retry") attr.rnr_retry = static_cast<uint8_t>(value(a));
      else if (f == "en_sqd_async_notify") attr.en_sqd_async_notify = static_cast<uint8_t>(value(a));
      else if (f == "path_mig_state") attr.path_mig_state = static_cast<ibv_mig_state>(value(a));
      else if (f == "cur_qp_state") attr.cur_qp_state = static_cast<ibv_qp_state>(value(a));
      else if (f == "rate_limit") attr.rate_limit = value(a);
      else if (f == "alt_pkey_index") attr.alt_pkey_index = static_cast<uint16_t>(value(a));
      else if (f == "alt_port_num") attr.alt_port_num = static_cast<uint8_t>(value(a));
      else if (f == "alt_timeout") attr.alt_timeout = static_cast<uint8_t>(value(a));
      else if (f == "ah_attr") fill_ah(attr.ah_attr, a);
      else if (f == "alt_ah_attr") fill_ah(attr.alt_ah_attr, a);
      else if (f == "cap") {
        for (const auto& c : a.children) {
          if (c.field == "max_send_wr") attr.cap.max_send_wr = static_cast<uint32_t>(c.number);
          else if (c.field == "max_recv_wr") attr.cap.max_recv_wr = static_cast<uint32_t>(c.number);
          else if (c.field == "max_send_sge") attr.cap.max_send_sge = static_cast<uint32_t>(c.number);
          else if (c.field == "max_recv_sge") attr.cap.max_recv_sge = static_cast<uint32_t>(c.number);
          else if (c.field == "max_inline_data") attr.cap.max_inline_data = static_cast<uint32_t>(c.number);
        }
      }
    }
    return attr;
  }
};

// "INIT->RTR mask=0x129 (IBV_QP_STATE|...)": the same few strings for thousands of QPs
// (`count:` expands one QP into many), so each is built once per session.
const std::string& mask_detail(RunState& st, const scenario::Transition& t) {
  auto key = std::make_tuple(static_cast<int>(t.from), static_cast<int>(t.to), t.mask);
  auto it = st.mask_details.find(key);
  if (it != st.mask_details.end()) return it->second;
  std::string text = std::string(spec::state_name(t.from)) + "->" + spec::state_name(t.to) + " mask=" +
                     util::hex(t.mask) + " (" + rules().mask_names(t.mask, "|") + ")";
  return st.mask_details.emplace(key, std::move(text)).first->second;
}

// ibv_query_qp after a successful modify: the state must be the target; attributes we set
// that read back differently are reported (devices may round some up).
std::string verify(const QpState& q, const scenario::Transition& t, const ibv_qp_attr& sent, bool* state_ok) {
  ibv_qp_attr got{};
  ibv_qp_init_attr init{};
  // The state plus whatever this transition set among the attributes compared below.
  const int comparable = IBV_QP_PKEY_INDEX | IBV_QP_QKEY | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER |
                         IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN | IBV_QP_ACCESS_FLAGS;
  int mask = IBV_QP_STATE | (static_cast<int>(t.mask) & comparable);
  if (int e = ibv_query_qp(q.qp->get(), &got, mask, &init)) {
    *state_ok = false;
    return "ibv_query_qp failed: " + verbs::errno_name(e);
  }
  std::string out;
  *state_ok = got.qp_state == static_cast<ibv_qp_state>(t.to);
  if (!*state_ok)
    out += std::string("state reads ") + spec::state_name(static_cast<spec::QpState>(got.qp_state)) + ", expected " +
           spec::state_name(t.to) + "; ";
  auto cmp = [&](uint32_t bit, const char* name, uint64_t want, uint64_t have) {
    if ((t.mask & bit) && want != have)
      out += std::string(name) + " set " + std::to_string(want) + " reads " + std::to_string(have) + "; ";
  };
  cmp(IBV_QP_PATH_MTU, "path_mtu", sent.path_mtu, got.path_mtu);
  cmp(IBV_QP_DEST_QPN, "dest_qp_num", sent.dest_qp_num, got.dest_qp_num);
  cmp(IBV_QP_RQ_PSN, "rq_psn", sent.rq_psn, got.rq_psn);
  cmp(IBV_QP_SQ_PSN, "sq_psn", sent.sq_psn, got.sq_psn);
  cmp(IBV_QP_QKEY, "qkey", sent.qkey, got.qkey);
  cmp(IBV_QP_TIMEOUT, "timeout", sent.timeout, got.timeout);
  cmp(IBV_QP_RETRY_CNT, "retry_cnt", sent.retry_cnt, got.retry_cnt);
  cmp(IBV_QP_RNR_RETRY, "rnr_retry", sent.rnr_retry, got.rnr_retry);
  cmp(IBV_QP_MIN_RNR_TIMER, "min_rnr_timer", sent.min_rnr_timer, got.min_rnr_timer);
  cmp(IBV_QP_MAX_QP_RD_ATOMIC, "max_rd_atomic", sent.max_rd_atomic, got.max_rd_atomic);
  cmp(IBV_QP_MAX_DEST_RD_ATOMIC, "max_dest_rd_atomic", sent.max_dest_rd_atomic, got.max_dest_rd_atomic);
  cmp(IBV_QP_ACCESS_FLAGS, "qp_access_flags", sent.qp_access_flags, got.qp_access_flags);
  cmp(IBV_QP_PKEY_INDEX, "pkey_index", sent.pkey_index, got.pkey_index);
  if (!out.empty()) out.resize(out.size() - 2);
  return out;
}

// After RTS->SQD with en_sqd_async_notify: the device reports IBV_EVENT_SQ_DRAINED.
bool wait_sq_drained(QpState& q, int timeout_ms, std::string* what) {
  ibv_context* ctx = q.device->ctx().get();
  int flags = fcntl(ctx->async_fd, F_GETFL);
  fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string seen;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{ctx->async_fd, POLLIN, 0};
    if (poll(&pfd, 1, 50) <= 0) continue;
    ibv_async_event ev{};
    if (ibv_get_async_event(ctx, &ev) != 0) continue;
    bool mine = ev.event_type == IBV_EVENT_SQ_DRAINED && ev.element.qp == q.qp->get();
    seen += std::string(seen.empty() ? "" : ", ") + event_name(ev.event_type);
    ibv_ack_async_event(&ev);
    if (mine) {
      *what = "IBV_EVENT_SQ_DRAINED received";
      return true;
    }
  }
  *what = "no IBV_EVENT_SQ_DRAINED within " + std::to_string(timeout_ms) + " ms" +
          (seen.empty() ? "" : " (saw: " + seen + ")");
  return false;
}

}  // namespace

bool modify_qp(RunState& st, const std::string& phase, QpState& q, size_t index, const RunOptions& o) {
  const auto& t = q.spec->transitions[index];
  const RemoteQp* peer = peer_of(st, q);
  Resolver resolver{st, q, peer};
  ibv_qp_attr attr{};
  const std::string& detail = mask_detail(st, t);
  report::StepResult r;
  r.host = q.host;
  r.phase = phase;
  r.verb = "ibv_modify_qp";
  r.object = q.spec->name;
  r.detail = detail;
  try {
    attr = resolver.build(t);
  } catch (const std::exception& e) {
    r.status = report::StepStatus::Failed;
    r.message = e.what();
    st.report.add(r);
    st.report.fail(e.what());
    return false;
  }
  StepTimer timer;
  int err = ibv_modify_qp(q.qp->get(), &attr, static_cast<int>(t.mask));
  r.micros = timer.micros();
  r.err = err;
  bool expected_fail = t.expect && t.expect->errno_value != 0;
  auto where = [&] { return "QP '" + q.spec->name + "' " + q.spec->type_name + " " + detail; };
  if (err != 0) {
    const auto* deviation = spec::ProviderTable::builtin().transition_deviation(
        q.device->ctx().provider(), q.spec->type_name, spec::state_name(t.from), spec::state_name(t.to));
    if (deviation && verbs::errno_name(err) == deviation->errno_name && !(expected_fail && t.expect->errno_value == err)) {
      r.status = report::StepStatus::Skipped;
      r.message = "unsupported by device (" + q.device->ctx().provider() + "): " + deviation->why;
      st.report.add(r);
      if (st.report.verdict == report::Verdict::Pass) {
        st.report.verdict = report::Verdict::Unsupported;
        st.report.reason = q.spec->type_name + " " + spec::state_name(t.from) + "->" + spec::state_name(t.to) +
                           " is unsupported by device (" + q.device->ctx().provider() + "): " + deviation->why;
      }
      return false;
    }
    if (t.predicted_ok && err == EINVAL)
      st.report.disagreements.push_back(where() + ": rule tables predicted ok, the kernel returned EINVAL");
    if (expected_fail && t.expect->errno_value == err) {
      r.status = report::StepStatus::ExpectedFailure;
      r.message = verbs::errno_name(err) + ", as the scenario expects" +
                  (t.predicted_ok ? "" : " and the rule tables predicted");
      st.report.add(r);
      return true;
    }
    r.status = report::StepStatus::Failed;
    r.message = "ibv_modify_qp failed: " + verbs::errno_name(err) + " (" + std::strerror(err) + ")" +
                (expected_fail ? "; the scenario expected " + t.expect->errno_name : "");
    st.report.add(r);
    st.report.fail("ibv_modify_qp(" + q.spec->name + ", " + detail + "): " + verbs::errno_name(err));
    return false;
  }
  if (!t.predicted_ok)
    st.report.disagreements.push_back(where() + ": rule tables predicted EINVAL, the kernel accepted it");
  if (expected_fail) {
    r.status = report::StepStatus::Failed;
    r.message = "succeeded, but the scenario expected " + t.expect->errno_name;
    st.report.add(r);
    st.report.fail("ibv_modify_qp(" + q.spec->name + ", " + detail + ") succeeded; expected " + t.expect->errno_name);
    return false;
  }
  bool state_ok = true;
  std::string mismatch = verify(q, t, attr, &state_ok);
  if (!state_ok) {
    r.status = report::StepStatus::Failed;
    r.message = "ibv_query_qp: " + mismatch;
    st.report.add(r);
    st.report.fail("QP '" + q.spec->name + "' " + mismatch);
    return false;
  }
  r.message = mismatch.empty() ? "" : "ibv_query_qp differs: " + mismatch;
  if (!mismatch.empty()) r.status = report::StepStatus::Warning;
  st.report.add(std::move(r));
  spec::QpState before = q.state;
  q.state = t.to;

  // What each state change implies for the queues.
  if (t.to == spec::QpState::RESET) {
    q.posted_recvs = 0;  // RESET empties both work queues, the scripts' receives included
    if (q.recv_pool) q.recv_pool->forget_outstanding();
    q.went_through_reset = true;
    for (ibv_cq* cq : {q.send_cq, q.recv_cq})
      if (cq) st.completions.drain(cq, q.qp->get()->qp_num, 0);
  }
  if (t.to == spec::QpState::INIT && before == spec::QpState::RESET && !t.bring_up) {
    return run_step(st, q.host, phase, "ibv_post_recv", q.spec->name, "re-post receives after RESET", [&] {
             post_recvs(st, q, q.spec->cap.max_recv_wr);
           }).status != report::StepStatus::Failed;
  }
  if (t.to == spec::QpState::ERR) {
    // Every outstanding WR completes with IBV_WC_WR_FLUSH_ERR.
    // The executor's receives and those a script left posted (send_bw's target keeps its
    // pool stocked on purpose) are flushed alike.
    uint32_t scripts = q.recv_pool ? q.recv_pool->outstanding() : 0;
    uint32_t expected = q.posted_recvs + scripts;
    auto flushed = q.recv_cq ? st.completions.drain(q.recv_cq, q.qp->get()->qp_num, 200) : std::deque<ibv_wc>{};
    if (q.send_cq && q.send_cq != q.recv_cq) st.completions.drain(q.send_cq, q.qp->get()->qp_num, 20);
    uint32_t flush_count = 0, other = 0;
    for (const auto& wc : flushed) (wc.status == IBV_WC_WR_FLUSH_ERR ? flush_count : other)++;
    report::StepResult f;
    f.host = q.host;
    f.phase = phase;
    f.verb = "ibv_poll_cq";
    f.object = q.spec->name;
    f.detail = "flush after ->ERR";
    f.message = std::to_string(flush_count) + " of " + std::to_string(expected) +
                " outstanding receives completed with IBV_WC_WR_FLUSH_ERR";
    if (q.srq) f.message = std::to_string(flush_count) + " flushed (receives live on SRQ " + q.spec->srq.name + ")";
    bool ok = q.srq || flush_count == expected;
    f.status = ok && other == 0 ? report::StepStatus::Ok : report::StepStatus::Failed;
    if (other) f.message += "; " + std::to_string(other) + " completions had another status";
    q.posted_recvs = 0;
    if (q.recv_pool) q.recv_pool->forget_outstanding();  // a later script must not count them
    st.report.add(f);
    if (f.status == report::StepStatus::Failed) {
      st.report.fail("QP '" + q.spec->name + "': " + f.message);
      return false;
    }
  }
  if (t.to == spec::QpState::SQD && before == spec::QpState::RTS && t.attr("en_sqd_async_notify") &&
      t.attr("en_sqd_async_notify")->number) {
    report::StepResult e;
    e.host = q.host;
    e.phase = phase;
    e.verb = "ibv_get_async_event";
    e.object = q.spec->name;
    auto start_ev = std::chrono::steady_clock::now();
    bool ok = wait_sq_drained(q, o.timeout_ms, &e.message);
    e.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_ev).count();
    e.status = ok ? report::StepStatus::Ok : report::StepStatus::Failed;
    st.report.add(e);
    if (!ok) {
      st.report.fail("QP '" + q.spec->name + "': " + e.message);
      return false;
    }
  }
  return true;
}

}  // namespace qpo::exec
