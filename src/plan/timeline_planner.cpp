#include "plan/timeline_planner.h"


#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "plan/arg_lists.h"
#include "scenario/timeline.h"
#include "util/async_event_names.h"
#include "util/cpu_pin.h"
#include "util/strings.h"
#include "util/ops.h"

namespace qpo::plan {

uint32_t pattern_seed(const std::string& name) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return h;
}

namespace {

using scenario::Scenario;
using scenario::TimelineStep;
using spec::QpState;

bool is_op(const scenario::Workload& w, util::Op op) { return w.builtin_op() && *w.op == op; }
bool is_read(const scenario::Workload& w) { return is_op(w, util::Op::Read); }
bool is_write(const scenario::Workload& w) { return is_op(w, util::Op::Write) || is_op(w, util::Op::WriteImm); }
bool is_atomic(const scenario::Workload& w) { return w.builtin_op() && w.builtin_op()->atomic; }
bool expects_error(const scenario::Workload& w) { return w.expect_status && *w.expect_status != "IBV_WC_SUCCESS"; }


// A step's own argument list, made in one go.
template <typename... Args>
util::SharedList<Arg> list_of(Args&&... args) {
  std::vector<Arg> out;
  out.reserve(sizeof...(args));
  (out.push_back(std::forward<Args>(args)), ...);
  return util::SharedList<Arg>(std::move(out));
}

// A script's value as the plan spells it: a string as written, anything else as JSON (5,
// true, [64,4096]).
std::string script_value_text(const lua::Value& v) { return v.is_string() ? v.as_string() : v.to_json(); }

// A script workload's args as the script receives them (its lowered spec, workload::script_spec: `args:`, and
// size/iterations when the workload itself gives them), by name. The MRs are the step's own
// args already. What the workload leaves out, the script's setup() fills in with its own
// defaults, not the op loop's (size 4096, 1000 iterations), so the plan shows nothing for it.
void script_args(Step& st, const lua::WorkloadSpec& spec) {
  for (const auto& [key, value] : spec.args.fields())
    if (key != "local_mr" && key != "remote_mr") st.args.push_back(arg(key, script_value_text(value)));
}

// `workers:` and `pin:` on a workload step. An op workload on a group: its members split into
// the threads in order, a contiguous share each (exec/op_workloads.cpp initiator_workers), so
// each member's step says its thread and CPU; default one thread (perftest -q). A script:
// its workers as written (default one per QP).
void threads_args(Step& st, const scenario::Workload& w,
                  const std::unordered_map<std::string, std::unordered_map<const scenario::Workload*, size_t>>& members) {
  auto cpus = [&] {
    std::string out;
    for (auto c : w.pin) out += (out.empty() ? "" : ",") + std::to_string(c);
    return out;
  };
  auto g = w.group.empty() ? members.end() : members.find(w.group);
  if (g == members.end()) {
    if (w.workers) st.args.push_back(arg("workers", std::to_string(w.workers)));
    else if (!w.script.empty()) st.args.push_back(Arg{"workers", "one per QP", false, true, ""});
    if (!w.pin.empty()) st.args.push_back(Arg{"pin", cpus(), false, false, "worker K on CPU pin[K % " + std::to_string(w.pin.size()) + "]"});
    return;
  }
  const auto& all = g->second;  // member -> its place in the group
  size_t n = all.size(), i = all.at(&w);
  size_t threads = std::clamp<size_t>(w.workers ? w.workers : 1, 1, n), t = 0;
  while (t + 1 < threads && (t + 1) * n / threads <= i) ++t;
  size_t share = (t + 1) * n / threads - t * n / threads;
  st.args.push_back(Arg{"workers", std::to_string(threads), false, w.workers == 0,
                        "thread " + std::to_string(t + 1) + " drives this QP" +
                            (share > 1 ? " and " + std::to_string(share - 1) + " more of " + w.group : "")});
  if (!w.pin.empty())
    st.args.push_back(Arg{"pin", cpus(), false, false, "thread " + std::to_string(t + 1) + " on CPU " + std::to_string(util::pin_of(w.pin, t))});
}

// The workloads of a stage for its name: a run of one group's members as "w.0 .. w.15".
std::string listed(const std::vector<const scenario::Workload*>& ws) {
  std::string out;
  for (size_t i = 0; i < ws.size();) {
    size_t end = i + 1;
    if (!ws[i]->group.empty())
      while (end < ws.size() && ws[end]->group == ws[i]->group) ++end;
    if (!out.empty()) out += ", ";
    out += ws[i]->name;
    if (end - i > 2) out += " .. " + ws[end - 1]->name;
    else if (end - i == 2) out += ", " + ws[end - 1]->name;
    i = end;
  }
  return out;
}

class TimelinePlanner {
 public:
  TimelinePlanner(const Scenario& s, const PlanOptions& o, const scenario::BringupReceives& receives, Plan& p)
      : s_(s), o_(o), p_(p), receives_(receives) {
    args_.set_modifies(&p.modifies);
    for (auto& h : p_.hosts) hosts_[h.host] = &h;
    for (const auto& q : s_.qps) {
      QpState st = QpState::RESET;
      uint64_t access = 0;
      for (const auto& t : q.transitions) {
        if (!t.bring_up || !succeeds(t)) continue;
        st = t.to;
        if (const auto* f = t.attr("qp_access_flags")) access = f->number;
      }
      if (q.cm.brings_up()) {  // rdma_cm's bring-up: a connected RC/UC QP grants remote write, read, atomic
        st = q.cm.end_state();
        access = st == QpState::RTS && q.qp_type != spec::QpType::UD ? 0xE : 0;
      }
      qps_.push_back({st, access, false});
    }
  }

  void run() {
    attach_groups();
    int smoke_round = 0;
    for (const auto& step : s_.timeline) {
      switch (step.kind) {
        case TimelineStep::Kind::Smoke:
          if (step.path != "(default order)" || o_.smoke) smoke(step, smoke_round++);
          break;
        case TimelineStep::Kind::Workloads: workloads(step); break;
        case TimelineStep::Kind::Transition: transitions(step); break;
        case TimelineStep::Kind::Barrier: {
          int k = stage("barrier " + step.label);
          for (const auto& h : active_hosts()) add(h, StepKind::Barrier, Phase::Traffic, "barrier", step.label, k);
          break;
        }
        case TimelineStep::Kind::Event: event(step); break;
        case TimelineStep::Kind::SrqLimit: {
          std::string host = host_of_srq(step.on.name);
          if (host.empty()) break;
          int k = stage("srq_limit " + step.on.name + " " + std::to_string(step.srq_limit));
          describe_srq_limit(add(host, StepKind::ModifySrq, Phase::Transitions, "ibv_modify_srq", step.on.name, k),
                             step.srq_limit);
          break;
        }
        case TimelineStep::Kind::Pause: {
          int k = stage("pause " + std::to_string(step.pause_ms) + " ms");
          for (const auto& h : active_hosts())
            add(h, StepKind::Pause, Phase::Traffic, "pause", std::to_string(step.pause_ms) + " ms", k).edit_extra().pause_ms =
                step.pause_ms;
          break;
        }
        case TimelineStep::Kind::BindMw:
        case TimelineStep::Kind::InvalidateMw: windows(step); break;
        case TimelineStep::Kind::Link: link(step); break;
      }
    }
  }

 private:
  struct QpModel {
    QpState state;
    uint64_t access;      // qp_access_flags as they stand
    bool went_through_reset;
  };
  struct Content {        // what `length` bytes of an MR from `offset` hold, as far as the plan knows
    uint32_t seed;
    uint64_t offset, length;
  };

  static bool succeeds(const scenario::Transition& t) { return t.predicted_ok && !(t.expect && t.expect->errno_value); }

  std::vector<std::string> active_hosts() const { return s_.active_hosts(); }

  int stage(std::string name) {
    p_.stages.push_back(std::move(name));
    return static_cast<int>(p_.stages.size()) - 1;
  }
  // Drops a stage nobody has a step in (the last one added). Steps join the newest stage, so
  // the newest stage with a step says it (no walk of a million steps per stage).
  void drop_empty_stage(int k) {
    if (newest_used_stage_ != k) p_.stages.pop_back();
  }

  // A host the scenario's references do not lead to (validation reported it): nullptr.
  HostPlan* plan_of(const std::string& host) const {
    auto it = hosts_.find(host);
    return it == hosts_.end() ? nullptr : it->second;
  }
  // A QP's host's plan, found once per QP (a smoke round asks for every QP).
  HostPlan* plan_of(const scenario::Qp& q) {
    size_t i = static_cast<size_t>(&q - s_.qps.data());
    if (qp_hosts_.empty()) qp_hosts_.assign(s_.qps.size(), &nowhere_);  // &nowhere_: not looked up yet
    if (qp_hosts_[i] == &nowhere_) qp_hosts_[i] = plan_of(s_.host_of_qp(q));
    return qp_hosts_[i];
  }

  Step& add(const std::string& host, StepKind kind, Phase phase, Text verb, std::string object, int k) {
    return add(plan_of(host), kind, phase, verb, std::move(object), k);
  }
  Step& add(HostPlan* host, StepKind kind, Phase phase, Text verb, std::string object, int k) {
    // A host the scenario's references do not lead to gets nothing.
    auto& steps = host ? host->steps : nowhere_.steps;
    if (host) newest_used_stage_ = std::max(newest_used_stage_, k);
    // Built in place, in the list reserved for the whole plan.
    Step& st = steps.emplace_back();
    st.index = static_cast<int>(steps.size());
    st.kind = kind;
    st.phase = phase;
    st.verb = verb;
    st.object = std::move(object);
    st.stage = k;
    return st;
  }

  std::string host_of_srq(const std::string& srq) const {
    const auto* sr = s_.srq(srq);
    const auto* pd = sr ? s_.pd(sr->pd.name) : nullptr;
    return pd ? s_.host_of_device(pd->device.name) : "";
  }

  // The host whose device raises the event: the one the object lives on.
  std::string host_of_event(const TimelineStep& step) const {
    const auto* info = util::parse_async_event(step.event);
    if (!info) return "";
    switch (info->object) {
      case util::EventObject::Qp: return host_of(step.on.name);
      case util::EventObject::Srq: return host_of_srq(step.on.name);
      case util::EventObject::Cq: {
        const auto* c = s_.cq(step.on.name);
        return c ? s_.host_of_device(c->device.name) : "";
      }
      default: return s_.host_of_device(step.on.name);
    }
  }

  void event(const TimelineStep& step) {
    std::string host = host_of_event(step);
    if (host.empty()) return;
    int k = stage(std::string(step.forbid ? "forbid " : "event ") + step.event + " on " + step.on.name);
    auto& st = add(host, step.forbid ? StepKind::ForbidEvent : StepKind::WaitEvent, Phase::Transitions,
                   "ibv_get_async_event", step.on.name, k);
    describe_event(st, step.event, step.event_value, step.within_ms, step.forbid);
  }

  // The device's netdev goes down or up on the device's host; the port events follow.
  void link(const TimelineStep& step) {
    std::string host = s_.host_of_device(step.on.name);
    if (host.empty()) return;
    int k = stage("link " + step.on.name + " " + step.label);
    auto& st = add(host, StepKind::SetLink, Phase::Transitions, "ip link set", step.on.name, k);
    st.edit_extra().link_up = step.label == "up";  // the loader took only "up" or "down"
    st.args.push_back(Arg{"state", step.label, false, false, ""});
    st.args.push_back(Arg{"dev", "the netdev under " + step.on.name, true, false,
                          step.label == "down" ? "brought back up at teardown if still down" : ""});
  }

  QpModel& model(const scenario::Qp& q) { return qps_[static_cast<size_t>(&q - s_.qps.data())]; }
  QpModel* model(const std::string& qp) {
    const auto* q = s_.qp(qp);
    return q ? &model(*q) : nullptr;
  }

  const scenario::External* external_of(const scenario::Workload& w) const {
    const auto* q = s_.qp(w.qp.name);
    return q && q->connect ? s_.external(q->connect.name) : nullptr;
  }

  // What qpo and the tool do in a perftest bandwidth test's conversation, in order: every
  // message qpo sends or answers is here.
  void perftest_args(Step& st, const scenario::Workload& w, const scenario::External& e) {
    const auto* x = p_.external(e.name);
    if (!x) return;
    bool client = x->qpo_initiates(), send = w.op == util::Op::Send;
    std::string n = std::to_string(w.iterations), size = std::to_string(w.size) + " B";
    std::string verb = w.op == util::Op::Read ? "RDMA READs" : send ? "SENDs" : "RDMA WRITEs";
    st.args.push_back(arg("peer", "external '" + e.name + "' (" + x->tool() + (client ? " server" : " client") +
                                      (x->test_over_cm ? ", -R)" : ")")));
    if (x->test_over_cm)
      st.args.push_back(arg("keys", "first the exchange's hand-shakes after the test QPs' rdma_cm connection (over the tool's "
                                    "control connection): a sync, then the keys " +
                                        std::to_string(x->keys_after_cm() - 1) + " times each way (QP " + w.qp.name +
                                        "'s QPN, PSN, GID, qpo.slots." + w.qp.name + "; the tool's buffer from them)"));
    if (x->write_latency()) {
      st.args.push_back(arg("rhythm", x->qpo_writes_first()
                                          ? "ping-pong: qpo writes first, then waits for the tool's write (the tool's client)"
                                          : "ping-pong: qpo answers each write with one (the tool's server writes first)"));
      st.args.push_back(arg("traffic", n + " RDMA WRITEs of " + size + " each way: qpo's from its last slot into the tool's "
                                           "buffer, the tool's into qpo.slots." + w.qp.name + ", each side polling the last byte "
                                           "(perftest's counter, 1..255, 0, ...)"));
      st.args.push_back(arg("close", "none: the tool prints its figures and closes the connection"));
      return;
    }
    if (x->latency) {
      st.args.push_back(arg("sync", "keys once more, both sides' receives posted (qpo's at bring-up)"));
      st.args.push_back(arg("rhythm", client ? "ping-pong: qpo sends first, then waits for the answer (the tool's client)"
                                             : "ping-pong: qpo answers each SEND with one (the tool's server)"));
      st.args.push_back(arg("traffic", n + " SENDs of " + size + " each way, from and into qpo.slots." + w.qp.name));
      st.args.push_back(arg("close", x->test_over_cm ? "keys (no \"done\" over RDMA)" : "keys, then \"done\""));
      return;
    }
    if (send) st.args.push_back(arg("sync", client ? "keys once more, after the tool posted its receives"
                                                   : "qpo's receives (qpo.slots." + w.qp.name + "), then keys once more"));
    if (client) {
      bool read = w.op == util::Op::Read;
      st.args.push_back(arg("traffic", n + " " + verb + " of " + size + (send ? "" : " at the tool's buffer (its vaddr, rkey)") +
                                           (read ? ", into qpo.slots." : ", from qpo.slots.") + w.qp.name));
    } else {
      st.args.push_back(arg("traffic", "the tool's " + n + " " + verb + " of " + size +
                                           (send ? ", received and counted" : " at qpo.slots." + w.qp.name + ", unchecked")));
    }
    if (!send)
      st.args.push_back(arg("report", client ? "keys, then qpo's figures to the tool (size, iterations, BW peak, BW average, "
                                               "message rate), which it prints"
                                             : "keys once the tool has run, then its figures, which qpo reports "
                                               "(qpo's five units back are zeros: the tool's client ignores them)"));
    st.args.push_back(arg("close", x->test_over_cm ? "keys (no \"done\" over RDMA)" : "keys, then \"done\""));
  }

  // What qpo and an rdmacm-utils tool send over their rdma_cm connection, in order.
  void cm_tool_args(Step& st, const scenario::Workload& w, const ExternalPeer& x) {
    bool first = x.qpo_initiates();
    std::string n = std::to_string(w.iterations), msgs = w.iterations == 1 ? " SEND" : " SENDs";
    st.args.push_back(arg("peer", "external '" + x.name + "' (" + x.tool() + (x.qpo_listens() ? " client)" : " server)")));
    std::string ours = n + msgs + " of " + std::to_string(w.size) + " B from qpo.slots." + w.qp.name;
    std::string theirs = "the tool's " + n + msgs + ", into the receives posted at bring-up";
    if (x.buffers) return rping_args(st, w, x);
    if (x.burst)
      st.args.push_back(arg("rhythm", first ? "qpo sends " + ours + ", all at once, then waits for " + theirs
                                            : "qpo waits for " + theirs + ", then sends " + ours + " back"));
    else
      st.args.push_back(arg("rhythm", first ? "ping-pong: qpo sends first, then waits for the answer"
                                            : "ping-pong: qpo answers each SEND with one"));
    if (!x.burst) st.args.push_back(arg("buffers", "qpo.slots." + w.qp.name + ": receives posted at bring-up, the last slot sends"));
    if (x.imm_qpn) {
      st.args.push_back(arg("imm_data", "QP " + w.qp.name + "'s qp_num", "each SEND carries it, as udaddy's do"));
      if (!first)
        st.args.push_back(arg("answers to", "the QP number in the tool's first message's imm_data, at the address its request came from", "",
                              true));
    } else {
      st.args.push_back(arg("then", x.server_sends_first && x.qpo_listens()
                                        ? "qpo disconnects (rdma_disconnect): the tool's client waits for it"
                                        : "qpo disconnects (rdma_disconnect), as the tool does once done"));
    }
  }

  // rping's pings (interop/rping_message.h), as qpo plays either side of them.
  void rping_args(Step& st, const scenario::Workload& w, const ExternalPeer& x) {
    std::string n = std::to_string(w.iterations), size = std::to_string(w.size) + " B";
    if (!x.qpo_listens()) {
      st.args.push_back(arg("per ping", "SEND {addr, rkey, size} of " + w.local_mr.name + "'s first " + size +
                                            " (rping's text), the tool RDMA READs it; SEND {addr, rkey, size} of the next " +
                                            size + ", the tool RDMA WRITEs it back; a go-ahead SEND from the tool after each"));
      st.args.push_back(arg("check", "the bytes written back are the ones read (rping -V does the same)"));
      st.args.push_back(arg("then", "after " + n + " pings qpo disconnects (rdma_disconnect), as rping's client does"));
    } else {
      st.args.push_back(arg("per ping", "receive the tool's {addr, rkey, size}, RDMA READ it into " + w.local_mr.name +
                                            ", SEND a go-ahead; receive the sink's, RDMA WRITE what was read there, SEND a go-ahead"));
      st.args.push_back(arg("then", "after " + n + " pings qpo waits for the tool's DREQ (rping's client disconnects)"));
    }
    st.args.push_back(arg("messages", "16 B from and into qpo.slots." + w.qp.name));
  }

  std::string host_of(const std::string& qp) const {
    const auto* q = s_.qp(qp);
    return q ? s_.host_of_qp(*q) : "";
  }

  // Connected RC/UC/UD pairs whose QPs can exchange now: the sender at RTS, the receiver at
  // RTS (UD: RTR is enough). The default order's last smoke keeps to pairs that went
  // through RESET (the recovery it proves).
  void smoke(const TimelineStep& step, int round) {
    int k = stage(round == 0 && step.path == "(default order)" ? "smoke" : "smoke " + std::to_string(round + 1));
    int index = 0;
    for (const auto& a : s_.qps) {
      const auto* b = s_.qp(a.connect.name);
      if (!b || b == &a) continue;
      bool ud = a.qp_type == spec::QpType::UD;
      if ((!ud && a.qp_type != spec::QpType::RC && a.qp_type != spec::QpType::UC) || b->qp_type != a.qp_type) continue;
      if (!ud && a.cap.max_send_wr == 0) continue;
      if (b->cap.max_recv_wr == 0 && !b->srq) continue;
      const auto &sa = model(a), &sb = model(*b);
      if (sa.state != QpState::RTS) continue;
      if (ud ? (sb.state != QpState::RTR && sb.state != QpState::RTS) : sb.state != QpState::RTS) continue;
      if (step.after_recovery && !sa.went_through_reset && !sb.went_through_reset) continue;
      SmokePair pair{a.name, b->name, !ud && (sb.access & 0x2) != 0,
                     static_cast<uint32_t>(++index * 16 + round * 100000), p_.qp_id(a.name), p_.qp_id(b->name)};
      std::string what = std::string(pair.rdma_write ? "SEND + RDMA WRITE " : "SEND ") + a.name + " -> " + b->name;
      if (ud) address_handle(a.name, b->name, k);
      auto extra = std::make_shared<StepExtra>();  // both ends' steps share it
      extra->smoke = std::move(pair);
      auto& send = add(plan_of(a), StepKind::SmokeSend, Phase::Traffic, "smoke send", a.name, k);
      send.share_extra(extra);
      send.args = list_of(arg("exchange", what));
      auto& recv = add(plan_of(*b), StepKind::SmokeReceive, Phase::Traffic, "smoke receive", b->name, k);
      recv.share_extra(std::move(extra));
      recv.args = list_of(arg("exchange", std::move(what)), arg("check", "data"));
    }
    drop_empty_stage(k);
  }

  // The pattern a workload's bytes follow, and whether the responder must write it first.
  // What the plan knows an MR holds is kept per (MR, offset): a read of the bytes a write put
  // at the same place expects them.
  // Per MR (one group workload writes 10,000 MRs: no scan of the others), offset -> content.
  const Content* known(const std::string& mr, uint64_t offset) const {
    auto it = content_.find(mr);
    if (it == content_.end()) return nullptr;
    auto c = it->second.find(offset);
    return c == it->second.end() ? nullptr : &c->second;
  }
  void record(const std::string& mr, uint64_t offset, Content c) { content_[mr][offset] = c; }

  std::pair<uint32_t, bool> data_of(const scenario::Workload& w) {
    if (is_read(w)) {
      const Content* c = known(w.remote_mr.name, w.offset);
      if (c && c->length >= w.size) return {c->seed, false};
      return {pattern_seed("mr:" + w.remote_mr.name), true};
    }
    return {pattern_seed(w.local_mr ? "mr:" + w.local_mr.name : "qp:" + w.qp.name), false};
  }

  // `w`'s index in Plan::workloads: lowered the first time the timeline runs it.
  int lowered(const scenario::Workload& w) {
    auto [it, fresh] = workload_index_.emplace(w.name, static_cast<int>(p_.workloads.size()));
    if (fresh) p_.workloads.push_back(lower_workload(s_, p_, w, receives_));
    return it->second;
  }

  void workloads(const TimelineStep& step) {
    std::vector<const scenario::Workload*> ws;
    for (const auto& ref : step.workloads)
      if (const auto* w = s_.workload(ref.name)) ws.push_back(w);
    std::string names = listed(ws);
    std::map<std::string, std::pair<uint32_t, bool>> data;
    for (const auto* w : ws) data[w->name] = data_of(*w);

    // The responder's MR first: zeroed for writes and atomics (so a lost write shows), the
    // pattern for a read of bytes nothing wrote yet.
    int k = stage("prepare " + names);
    for (const auto* w : ws) {
      if (!w->script.empty() || !w->op || !w->remote_mr) continue;
      if (is_read(*w) && !data[w->name].second) continue;  // reads what an earlier workload wrote
      if (!is_read(*w) && !is_write(*w) && !is_atomic(*w)) continue;
      const auto* q = s_.qp(w->qp.name);
      if (!q) continue;
      auto& st = add(host_of(q->connect.name), StepKind::PrepareData, Phase::Traffic, "prepare", mr_behind(w->remote_mr.name), k);
      auto& extra = st.edit_extra();
      extra.workload = lowered(*w);
      extra.data_seed = data[w->name].first;
      extra.fill_remote = data[w->name].second;
      st.args.push_back(arg("workload", w->name));
      st.args.push_back(arg("remote_mr", extra.fill_remote ? "filled with the read's pattern" : "zeroed"));
    }
    drop_empty_stage(k);

    if (!events_planned_ && !p_.packet_events.empty()) packet_events(stage("packet events"));
    k = stage("workload " + names);
    if (!faults_planned_) traffic_faults(k);
    // A group's members in this stage, in order (its threads share them as exec does).
    std::unordered_map<std::string, std::unordered_map<const scenario::Workload*, size_t>> members;
    for (const auto* w : ws)
      if (!w->group.empty() && w->script.empty()) {
        auto& m = members[w->group];
        m.emplace(w, m.size());
      }
    // When each script runs: beside the op workloads, or first, alone (the same on every host).
    std::vector<ScriptTurn> turns(ws.size(), ScriptTurn::Beside);
    if (std::any_of(ws.begin(), ws.end(), [](const auto* w) { return !w->script.empty(); })) {
      std::vector<int> ids;
      for (const auto* w : ws) ids.push_back(lowered(*w));
      turns = script_turns(p_, ids);
    }
    for (size_t i = 0; i < ws.size(); ++i) {
      const auto* w = ws[i];
      std::set<std::string> on;
      if (!w->script.empty()) {
        for (const auto& h : active_hosts()) on.insert(h);  // every host meets at a script's barriers
      } else {
        // The responder takes part only where it receives (send-type ops it re-posts for).
        const auto* q = s_.qp(w->qp.name);
        on.insert(host_of(w->qp.name));
        bool receives = w->builtin_op() && w->builtin_op()->consumes_recv;
        if (is_op(*w, util::Op::Recv)) {  // receive-only: the QP's own host
        } else if (w->mcast) {  // a multicast send: every member's host receives
          if (const auto* g = s_.mcast_group(w->mcast.name))
            for (const auto& m : g->members) on.insert(host_of(m.name));
          mcast_address_handle(w->qp.name, w->mcast.name, k);
        } else if (q && q->connect && receives && !w->expect_status) {
          on.insert(host_of(q->connect.name));
        }
      }
      // UD senders need an address handle for their peer before the first send.
      // A script's target answers its initiators too (its meetings' wake-ups).
      for (const auto& ref : w->initiators()) {
        const auto* q = s_.qp(ref.name);
        if (!q || q->qp_type != spec::QpType::UD || !q->connect || w->mcast) continue;
        address_handle(q->name, q->connect.name, k);
        if (!w->script.empty() && s_.qp(q->connect.name)) address_handle(q->connect.name, q->name, k);
      }
      for (const auto& h : on) {
        if (h.empty()) continue;
        auto& st = add(h, StepKind::Workload, Phase::Traffic, w->script.empty() ? Text("workload") : Text("script"), w->name, k);
        st.edit_extra().workload = lowered(*w);
        st.edit_extra().data_seed = data[w->name].first;
        st.args.push_back(arg("qp", w->qp.name));
        // The QP's external peer, as the scenario gives it and as the plan lowered it (once each).
        const auto* e = external_of(*w);
        const auto* ext = e ? p_.external(e->name) : nullptr;
        // udaddy's conversation: its SENDs carry the sender's QP number as immediate data.
        if (is_op(*w, util::Op::Recv)) receive_args(st, *w);
        else if (w->op && ext && ext->imm_qpn) st.args.push_back(arg("op", "IBV_WR_SEND_WITH_IMM"));
        else if (w->op) st.args.push_back(arg("op", "IBV_WR_" + util::to_upper(w->op_spelling())));
        if (w->mcast && !is_op(*w, util::Op::Recv)) mcast_args(st, *w);
        if (w->local_mr) st.args.push_back(arg("local_mr", w->local_mr.name));
        if (w->remote_mr) {
          st.args.push_back(arg("remote_mr", w->remote_mr.name));
          st.args.push_back(Arg{"remote addr/rkey", "peer", true, false, "known after exchange"});
        }
        if (w->invalidate) {
          st.args.push_back(Arg{"invalidate_rkey", "window " + w->invalidate.name + "'s rkey", true, false,
                                "published after its bind"});
          st.args.push_back(arg("check", "the receive completes with IBV_WC_WITH_INV, invalidated_rkey = " +
                                             w->invalidate.name + "'s rkey"));
        }
        if (e && e->exchange == scenario::External::Exchange::Perftest) {
          perftest_args(st, *w, *e);
        } else if (ext && ext->rdma_cm()) {
          cm_tool_args(st, *w, *ext);
        } else if (ext && ext->given()) {
          st.args.push_back(arg("peer", "external '" + e->name + "' (given values)"));
          if (!is_op(*w, util::Op::Recv))
            st.args.push_back(arg("traffic", std::to_string(w->iterations) + " " + (w->op ? "IBV_WR_" + util::to_upper(w->op_spelling()) : std::string("?")) +
                                                 " of " + std::to_string(w->size) + " B" +
                                                 (w->op && util::op_info(*w->op).remote ? " at the buffer the peer's values give" : "") +
                                                 ", from " + (w->local_mr ? w->local_mr.name : "qpo.slots." + w->qp.name) +
                                                 "; the peer's side is not the scenario's (nothing checked there)"));
        } else if (e) {
          st.args.push_back(arg("peer", "external '" + e->name + "'"));
          st.args.push_back(arg("rhythm", e->server.empty()
                                              ? "ping-pong: qpo answers each SEND with one (the tool's server)"
                                              : "ping-pong: qpo sends first, then waits for the answer (the tool's client)"));
          st.args.push_back(arg("buffers", "qpo.slots." + w->qp.name + ": receives posted at bring-up, the last slot sends"));
        }
        if (w->script.empty()) {
          st.args.push_back(arg("size", std::to_string(w->size)));
          if (w->offset) st.args.push_back(arg("offset", std::to_string(w->offset)));
          st.args.push_back(arg("iterations", std::to_string(w->iterations)));
        } else {
          script_args(st, p_.workloads.at(static_cast<size_t>(lowered(*w))).script);
          st.args.push_back(arg("script", w->script));
          st.edit_extra().script_turn = turns[i];
          if (const char* turn = script_turn_text(turns[i]); *turn) st.args.push_back(arg("runs", turn));
        }
        threads_args(st, *w, members);
        if (w->expect_status) st.expect = Text::intern(*w->expect_status);
      }
      // An expected completion error has moved QPs to ERR: read back where they are.
      for (const auto& [qp, state] : scenario::states_after_expected_error(s_, *w)) {
        auto& st = add(host_of(qp), StepKind::ReadState, Phase::Traffic, "ibv_query_qp", qp, k);
        st.args.push_back(arg("expected qp_state", std::string("IBV_QPS_") + spec::state_name(state)));
        if (auto* m = model(qp)) m->state = state;
      }
    }

    k = stage("verify " + names);
    for (const auto* w : ws) {
      if (!w->op || !w->script.empty() || expects_error(*w) || external_of(*w)) continue;  // the tool's bytes: unchecked
      std::string host, mr;
      if (is_read(*w)) host = host_of(w->qp.name), mr = w->local_mr.name;
      else if ((is_write(*w) || is_atomic(*w)) && s_.qp(w->qp.name)) host = host_of(s_.qp(w->qp.name)->connect.name), mr = mr_behind(w->remote_mr.name);
      if (host.empty()) continue;
      auto& st = add(host, StepKind::Verify, Phase::Traffic, "verify", mr, k);
      st.edit_extra().workload = lowered(*w);
      st.edit_extra().data_seed = data[w->name].first;
      st.args.push_back(arg("workload", w->name));
      st.args.push_back(arg("expect", is_atomic(*w) ? "the counter at " + std::to_string(w->iterations)
                                                    : std::to_string(w->size) + " B of the pattern"));
    }
    drop_empty_stage(k);

    // What the MRs hold now, for the reads that follow.
    for (const auto* w : ws) {
      if (!w->op || !w->script.empty()) continue;
      // Whatever the MR held where these bytes went is no longer known.
      auto forget = [&](const std::string& mr, uint64_t begin, uint64_t end) {
        auto in = content_.find(mr);
        if (in == content_.end()) return;
        for (auto it = in->second.begin(); it != in->second.end();) {
          const auto& c = it->second;
          bool hit = c.offset < end && begin < c.offset + c.length;
          it = hit ? in->second.erase(it) : std::next(it);
        }
      };
      uint64_t begin = w->offset, end = w->offset + (is_atomic(*w) ? 8 : w->size);
      if (expects_error(*w)) {
        if (w->remote_mr) forget(w->remote_mr.name, begin, end);
        continue;
      }
      auto [seed, fill] = data[w->name];
      if (is_write(*w)) {
        forget(w->remote_mr.name, begin, end);
        record(w->remote_mr.name, w->offset, {seed, w->offset, w->size});
      } else if (is_read(*w)) {
        if (fill) record(w->remote_mr.name, w->offset, {seed, w->offset, w->size});
        if (w->local_mr) {
          forget(w->local_mr.name, begin, end);
          record(w->local_mr.name, w->offset, {seed, w->offset, w->size});
        }
      } else if (is_atomic(*w)) {
        forget(w->remote_mr.name, begin, end);
      }
    }
  }

  // The MR a workload's remote_mr reaches: itself, or the MR behind a memory window.
  std::string mr_behind(const std::string& name) const {
    const auto* mw = s_.mw(name);
    return mw ? mw->mr.name : name;
  }

  // `bind:` / `invalidate:`: each window on its host, on its bind QP; after binds, every host
  // learns the new rkeys (an invalidation publishes nothing: the peer keeps the stale rkey).
  void windows(const TimelineStep& step) {
    bool bind = step.kind == TimelineStep::Kind::BindMw;
    std::string names;
    for (const auto& ref : step.mws) names += (names.empty() ? "" : ", ") + ref.name;
    int k = stage((bind ? "bind " : "invalidate ") + names);
    for (const auto& ref : step.mws) {
      const auto* w = s_.mw(ref.name);
      if (!w) continue;
      std::string host = host_of(w->bind_qp.name);
      bool type1 = w->type == 1;
      Text verb = type1 ? Text("ibv_bind_mw") : Text("ibv_post_send");
      auto& st = add(host, bind ? StepKind::BindMw : StepKind::InvalidateMw, Phase::Traffic, verb, w->name, k);
      st.args.push_back(arg("qp", w->bind_qp.name));
      if (bind) {
        if (!type1) st.args.push_back(arg("opcode", "IBV_WR_BIND_MW"));
        st.args.push_back(arg("mr", w->mr.name));
        st.args.push_back(arg("addr", w->mr.name + " + " + std::to_string(w->offset)));
        st.args.push_back(arg("length", std::to_string(w->length)));
        Arg access = describe_attr(scenario::Attr{"qp_access_flags", {}, {}, "", "", scenario::Symbol::None, w->access});
        access.name = "mw_access_flags";
        st.args.push_back(access);
        st.args.push_back(Arg{"rkey", type1 ? "the provider's" : "ibv_inc_rkey(current rkey)", true, false, "known after the bind"});
      } else if (type1) {
        st.args.push_back(arg("length", "0 (unbinds the window)"));
      } else {
        st.args.push_back(arg("opcode", "IBV_WR_LOCAL_INV"));
        st.args.push_back(Arg{"invalidate_rkey", "the window's rkey", true, false, "from its last bind"});
      }
      st.args.push_back(arg("then", "poll its completion on the send CQ"));
    }
    if (bind)
      for (const auto& h : active_hosts()) {
        auto& pub = add(h, StepKind::PublishMw, Phase::Traffic, "publish", names, k);
        pub.args.push_back(Arg{"per window", "addr, length, rkey", true, false, "every host meets and learns them"});
      }
    drop_empty_stage(k);
  }

  // Before the first timeline step: every multicast group's members attach, each on its host.
  // A `join: rdma_cm` group's members and senders join through the CM first (a channel per host).
  void attach_groups() {
    std::set<std::string> channels;
    for (const auto& g : s_.mcast_groups) {
      int k = stage("attach " + g.name);
      if (g.cm_join) cm_joins(g, k, channels);
      for (const auto& m : g.members) {
        const auto* q = s_.qp(m.name);
        if (!q || q->type < 0) continue;
        auto& st = add(host_of(m.name), StepKind::AttachMcast, Phase::Traffic, "ibv_attach_mcast",
                       mcast_attachment_name(g.name, m.name), k);
        st.edit_extra().mcast = static_cast<int>(p_.mcast_group_index.at(g.name));
        st.edit_extra().smoke.receiver = m.name;
        st.edit_extra().smoke.receiver_id = p_.qp_id(m.name);
        st.args.push_back(arg("qp", m.name));
        if (g.cm_join) {
          st.args.push_back(Arg{"gid, mlid", "the MULTICAST_JOIN event's", true, false, "the CM's group (" + gid_words(g) + ")"});
          st.args.push_back(Arg{"ip join", "the CM's", true, false, "rdma_join_multicast joined the IP group"});
          continue;
        }
        st.args.push_back(arg("gid", gid_words(g)));
        st.args.push_back(arg("mlid", util::hex(g.mlid)));
        st.args.push_back(Arg{"ip join", g.ipv4 ? "IP_ADD_MEMBERSHIP" : "IPV6_ADD_MEMBERSHIP", true, false,
                              "on RoCE: the group's IP address on the device's netdev (as rdma_cm does)"});
      }
      drop_empty_stage(k);
    }
  }

  void cm_joins(const scenario::McastGroup& g, int k, std::set<std::string>& channels) {
    auto join = [&](const std::string& qp, bool send_only) {
      const auto* q = s_.qp(qp);
      if (!q || q->type < 0) return;
      std::string host = host_of(qp);
      if (channels.insert(host).second)
        add(host, StepKind::CmMcastChannel, Phase::Traffic, "rdma_create_event_channel", mcast_cm_channel_name(host), k);
      auto& st = add(host, StepKind::CmJoinMcast, Phase::Traffic, "rdma_join_multicast", mcast_attachment_name(g.name, qp), k);
      auto& extra = st.edit_extra();
      extra.mcast = static_cast<int>(p_.mcast_group_index.at(g.name));
      (send_only ? extra.smoke.sender : extra.smoke.receiver) = qp;
      (send_only ? extra.smoke.sender_id : extra.smoke.receiver_id) = p_.qp_id(qp);
      extra.event = "RDMA_CM_EVENT_MULTICAST_JOIN";
      st.args.push_back(arg("id", "rdma_create_id(RDMA_PS_UDP) on " + mcast_cm_channel_name(host)));
      st.args.push_back(Arg{"bind", "the device's IP", true, false, "rdma_bind_addr: its GID's address"});
      st.args.push_back(arg("group", gid_words(g)));
      st.args.push_back(Arg{"join_flags", send_only ? "RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER" : "RDMA_MC_JOIN_FLAG_FULLMEMBER",
                            false, false, send_only ? "a sender: no IP join, it does not receive" : "the CM joins the IP group"});
      st.args.push_back(Arg{"waits for", "RDMA_CM_EVENT_MULTICAST_JOIN", false, false,
                            "at most the phase timeout; its qkey must be " + util::hex(g.qkey)});
    };
    for (const auto& qp : mcast_senders(s_, g.name)) join(qp, true);
    for (const auto& m : g.members) join(m.name, false);
  }

  static std::string gid_words(const scenario::McastGroup& g) {
    return g.ipv4 && g.gid_text.find(':') == std::string::npos ? "::ffff:" + g.gid_text + " (IPv4 " + g.gid_text + ")"
                                                               : g.gid_text;
  }

  // `op: recv`: datagrams from a sender outside the scenario, on a multicast group the QP is a member of.
  void receive_args(Step& st, const scenario::Workload& w) {
    st.args.push_back(arg("op", "receive only (posts nothing)"));
    if (w.mcast) st.args.push_back(arg("mcast", w.mcast.name, "joined at bring-up"));
    st.args.push_back(arg("expects", std::to_string(w.iterations) + (w.mcast ? " datagrams" : " messages") + " of " +
                                         std::to_string(w.size) + " B from a sender outside the scenario" +
                                         (w.mcast ? " (any QP)" : "") + ", into the receives posted at bring-up"));
    st.args.push_back(arg("check", "count and size of each (the sender's bytes are not known here)"));
  }

  void mcast_args(Step& st, const scenario::Workload& w) {
    const auto* g = s_.mcast_group(w.mcast.name);
    if (!g) return;
    std::string members;
    for (const auto& m : g->members) members += (members.empty() ? "" : ", ") + m.name;
    st.args.push_back(arg("mcast", g->name + " -> " + members));
    st.args.push_back(arg("remote_qpn", "0xffffff"));
    st.args.push_back(arg("remote_qkey", util::hex(g->qkey)));
    st.args.push_back(arg("check", "every member receives every message, data checked"));
  }

  // "qpo.ah.FROM->GROUP" on FROM's host, once per run: GRH to the group's GID, dlid its MLID.
  void mcast_address_handle(const std::string& from, const std::string& group, int k) {
    const auto* g = s_.mcast_group(group);
    if (!g) return;
    std::string name = "qpo.ah." + from + "->" + group;
    std::string host = host_of(from);
    auto& made = p_.address_handles[host];
    if (std::find(made.begin(), made.end(), name) != made.end()) return;
    made.push_back(name);
    auto& st = add(host, StepKind::CreateMcastAh, Phase::Traffic, "ibv_create_ah", name, k);
    st.edit_extra().mcast = static_cast<int>(p_.mcast_group_index.at(group));
    st.edit_extra().smoke.sender = from;
    st.edit_extra().smoke.sender_id = p_.qp_id(from);
    st.args.push_back(arg("from", from));
    if (g->cm_join) {
      st.args.push_back(Arg{"ah_attr", "the MULTICAST_JOIN event's", true, false, "the sender's send-only join (" + gid_words(*g) + ")"});
      return;
    }
    st.args.push_back(arg("ah_attr.grh.dgid", gid_words(*g)));
    st.args.push_back(arg("ah_attr.dlid", util::hex(g->mlid)));
    st.args.push_back(Arg{"ah_attr.grh.sgid_index", "the device's", true, false, "gid_index of the sender's device"});
  }

  // "qpo.ah.FROM->TO" on FROM's host, once per run (exec::peer_ah keeps and reuses it).
  void address_handle(const std::string& from, const std::string& to, int k) {
    std::string name = "qpo.ah." + from + "->" + to;
    std::string host = host_of(from);
    auto& made = p_.address_handles[host];
    if (std::find(made.begin(), made.end(), name) != made.end()) return;
    made.push_back(name);
    auto& st = add(host, StepKind::CreateAh, Phase::Traffic, "ibv_create_ah", name, k);
    st.edit_extra().smoke.sender = from;
    st.edit_extra().smoke.receiver = to;
    st.edit_extra().smoke.sender_id = p_.qp_id(from);
    st.edit_extra().smoke.receiver_id = p_.peer_id(to);
    st.args.push_back(arg("from", from));
    st.args.push_back(Arg{"to", to + " (its LID and GID, known after exchange)", true, false, ""});
  }

  // Faults `during: traffic` go on with the first workload and come off after the last
  // (the smoke before proved the path clean).
  // Packet events are armed on each receiving host in a stage of their own before the first
  // workload's (the stages meet: every rule is in place before any host sends), so the
  // smoke's packets before do not count and every workload's do.
  void packet_events(int k) {
    events_planned_ = true;
    std::map<std::string, std::string> events;  // host -> event names
    for (const auto& e : p_.packet_events) events[e.host] += (events[e.host].empty() ? "" : ", ") + e.name;
    for (const auto& [host, names] : events) {
      auto& st = add(host, StepKind::PacketEvents, Phase::Traffic, "tc bpf", "wire.events", k);
      st.args.push_back(arg("events", names));
      for (const auto& e : p_.packet_events)
        if (e.host == host)
          st.args.push_back(arg(e.name, describe(e),
                                (e.at_sender ? "on the egress of " : "on the ingress of ") + e.device + "'s netdev; QP number known at run time",
                                true));
    }
  }

  void traffic_faults(int k) {
    faults_planned_ = true;
    for (const auto& f : s_.faults) {
      if (f.during != "traffic") continue;
      auto& st = add(s_.host_of_device(f.device.name), StepKind::Fault, Phase::Traffic, "tc qdisc replace netem", f.name, k);
      describe_fault(st, f);
    }
  }

  void transitions(const TimelineStep& step) {
    std::string what;
    for (const auto& [qp, index] : step.transitions) {
      const auto* q = s_.qp(qp);
      if (!q) continue;
      what += (what.empty() ? "" : ", ") + qp + "->" + spec::state_name(q->transitions[index].to);
    }
    int k = stage("transition " + what);
    for (const auto& [qp, index] : step.transitions) {
      const auto* q = s_.qp(qp);
      if (!q || q->type < 0) continue;
      const auto& t = q->transitions[index];
      std::string host = host_of(qp);
      if (host.empty()) continue;
      auto& st = add(host, StepKind::Modify, Phase::Transitions, "ibv_modify_qp", qp, k);
      describe_modify(st, *q, index, args_);
      if (!succeeds(t)) continue;
      auto& m = model(*q);
      QpState before = m.state;
      m.state = t.to;
      if (const auto* f = t.attr("qp_access_flags")) m.access = f->number;
      if (t.to == QpState::RESET) m.went_through_reset = true;
      if (t.to == QpState::ERR)
        add(host, StepKind::FlushPoll, Phase::Transitions, "ibv_poll_cq", qp, k)
            .args.push_back(arg("expect", "every outstanding receive completes with IBV_WC_WR_FLUSH_ERR"));
      bool own_rq = !q->srq && q->cap.max_recv_wr > 0 && !spec::is_xrc(q->qp_type);
      if (t.to == QpState::INIT && before == QpState::RESET && own_rq)
        add(host, StepKind::RepostRecv, Phase::Transitions, "ibv_post_recv", qp, k)
            .args.push_back(arg("wr_count", std::to_string(q->cap.max_recv_wr) + " (re-post receives after RESET)"));
      const auto* notify = t.attr("en_sqd_async_notify");
      if (t.to == QpState::SQD && before == QpState::RTS && notify && notify->number && !waits_later(step, qp))
        describe_event(add(host, StepKind::WaitEvent, Phase::Transitions, "ibv_get_async_event", qp, k),
                       "IBV_EVENT_SQ_DRAINED", util::parse_async_event("SQ_DRAINED")->value, 0, false);
    }
    drop_empty_stage(k);
  }

  // True when the timeline has its own `event: IBV_EVENT_SQ_DRAINED` step for `qp` after this
  // transition step (before the QP's next transition): that step waits instead of an implied one.
  bool waits_later(const TimelineStep& step, const std::string& qp) const {
    for (size_t i = static_cast<size_t>(&step - s_.timeline.data()) + 1; i < s_.timeline.size(); ++i) {
      const auto& t = s_.timeline[i];
      if (t.kind == TimelineStep::Kind::Event && !t.forbid && t.event == "IBV_EVENT_SQ_DRAINED" && t.on.name == qp)
        return true;
      if (t.kind == TimelineStep::Kind::Transition)
        for (const auto& x : t.transitions)
          if (x.qp == qp) return false;
    }
    return false;
  }

  const Scenario& s_;
  ArgLists args_;
  const PlanOptions& o_;
  Plan& p_;
  std::unordered_map<std::string, int> workload_index_;  // Plan::workloads by name, while planning
  const scenario::BringupReceives& receives_;  // which QPs scripts own, for the workloads' lowering
  std::map<std::string, HostPlan*> hosts_;
  std::vector<QpModel> qps_;          // as s_.qps
  std::vector<HostPlan*> qp_hosts_;   // as s_.qps (plan_of)
  std::unordered_map<std::string, std::map<uint64_t, Content>> content_;
  bool events_planned_ = false;
  bool faults_planned_ = false;
  int newest_used_stage_ = -1;  // the newest stage a host has a step in
  HostPlan nowhere_;
};

}  // namespace

void plan_timeline(const Scenario& s, const PlanOptions& o, const scenario::BringupReceives& receives, Plan& p) {
  TimelinePlanner(s, o, receives, p).run();
}

}  // namespace qpo::plan
