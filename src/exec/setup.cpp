// Creating the scenario's objects, in plan order, each owned by the RunState.
#include <random>
#include <stdexcept>

#include "exec/memory_windows.h"
#include "exec/steps.h"
#include "util/ops.h"
#include "util/strings.h"
#include "verbs/qp_type.h"

namespace qpo::exec {

namespace {

uint32_t random_psn() {
  static std::mt19937 gen{std::random_device{}()};
  return gen() & 0xFFFFFF;
}

}  // namespace

void open_device(RunState& st, const plan::DeviceFacts& d, plan::ObjectId id) {
  auto* res = st.own<verbs::ContextResource>(d.name, d.dev_name, static_cast<uint8_t>(d.port));
  DeviceState ds;
  ds.res = res;
  ds.facts = &d;
  if (!d.gid_ip.empty()) {
    ds.gid_index = res->ctx().gid_index_of_ip(d.gid_ip);
    if (ds.gid_index < 0)
      throw std::runtime_error("device " + d.name + ": no GID of " + res->ctx().device_name() + " port " +
                               std::to_string(d.port) + " has the IP " + d.gid_ip + " (`qpo devices` lists the GID table)");
  } else {
    ds.gid_index = d.gid_auto ? res->ctx().auto_gid_index() : static_cast<int>(d.gid_index);
  }
  ds.gid = res->ctx().gid(ds.gid_index);
  st.devices.put(id, ds);
}

void create_object(RunState& st, const plan::Step& step) {
  if (step.kind == plan::StepKind::AllocMw) return alloc_mw(st, step);  // the plan's lowered window
  const auto& o = st.plan->setup_of(step);
  const std::string& name = step.object;
  switch (step.kind) {
    case plan::StepKind::AllocPd:
      st.pds.put(o.id, st.own<verbs::Pd>(name, st.devices.at(o.on_id).ctx().get()));
      break;
    case plan::StepKind::OpenXrcd:
      st.xrcds.put(o.id, st.own<verbs::Xrcd>(name, st.devices.at(o.on_id).ctx().get()));
      break;
    case plan::StepKind::RegMr:
      st.mrs.put(o.id, st.own<verbs::Mr>(name, st.pds.at(o.on_id)->get(), o.size, o.access));
      break;
    case plan::StepKind::CreateCompChannel:
      st.channels.put(o.id, st.own<verbs::CompChannel>(name, st.devices.at(o.on_id).ctx().get()));
      break;
    case plan::StepKind::CreateCq: {
      ibv_comp_channel* ch = o.channel.empty() ? nullptr : st.channels.at(o.id)->get();
      st.cqs.put(o.id, st.own<verbs::Cq>(name, st.devices.at(o.on_id).ctx().get(), static_cast<int>(o.depth), ch, o.timestamps));
      break;
    }
    case plan::StepKind::CreateSrq: {
      SrqState ss;
      ss.srq = st.own<verbs::Srq>(name, st.pds.at(o.on_id)->get(), o.max_wr, o.max_sge);
      st.srqs.put(o.id, ss);
      break;
    }
    case plan::StepKind::RegSlots: {  // an SRQ's receive buffers (a QP's are made with the QP)
      auto& ss = st.srqs.at(o.id);
      ss.slot_size = 4096 + 64;
      ss.slot_count = o.max_wr;
      ss.slots = st.own<verbs::Mr>(name, st.pds.at(o.on_id)->get(), static_cast<size_t>(ss.slot_size) * ss.slot_count,
                                   IBV_ACCESS_LOCAL_WRITE);
      break;
    }
    default:
      throw std::logic_error("plan step " + std::to_string(step.index) + " (" + step.verb + ") creates nothing");
  }
}

QpState prepare_qp(RunState& st, const plan::Step& create, ibv_qp_init_attr* init, uint32_t slot_bytes) {
  const auto& q = st.plan->qps.at(create.id);
  QpState qs;
  qs.facts = &q;
  qs.id = create.id;
  // Its objects by id, resolved once here: what later steps need of them rides on the QP.
  qs.device = &st.devices.at(q.device);
  qs.host = qs.device->facts->host;
  if (auto* pd = st.pds.find(q.pd)) qs.pd_res = *pd;
  qs.pd = q.type == spec::QpType::XRC_RECV ? nullptr : st.pds.at(q.pd)->get();
  *init = {};
  init->qp_type = verbs::to_ibv(q.type);
  if (q.send_cq != plan::kNoObject) {
    qs.send_cq_res = st.cqs.at(q.send_cq);
    init->send_cq = qs.send_cq_res->get();
    if (auto* ch = st.channels.find(q.send_cq)) qs.send_channel = (*ch)->get();
  }
  if (q.recv_cq != plan::kNoObject) {
    init->recv_cq = st.cqs.at(q.recv_cq)->get();
    if (auto* ch = st.channels.find(q.recv_cq)) qs.recv_channel = (*ch)->get();
  }
  if (q.srq != plan::kNoObject) {
    qs.srq_state = &st.srqs.at(q.srq);
    init->srq = qs.srq_state->srq->get();
  }
  init->cap.max_send_wr = q.cap.max_send_wr;
  init->cap.max_recv_wr = init->srq ? 0 : q.cap.max_recv_wr;
  init->cap.max_send_sge = q.cap.max_send_sge;
  init->cap.max_recv_sge = q.cap.max_recv_sge;
  init->cap.max_inline_data = q.cap.max_inline_data;
  init->sq_sig_all = q.sq_sig_all ? 1 : 0;
  qs.send_cq = init->send_cq;
  qs.recv_cq = init->recv_cq;
  qs.srq = init->srq;
  qs.asked_cap = init->cap;
  qs.sq_psn = q.sq_psn.value_or(random_psn());
  qs.qkey = q.qkey;
  if (!slot_bytes || !qs.pd) {
    // no buffer of qpo's own: the plan lists none for this QP
  } else if (!init->srq && q.type != spec::QpType::XRC_SEND && q.cap.max_recv_wr > 0) {
    qs.slot_size = slot_bytes;
    qs.slot_count = q.cap.max_recv_wr + 1;  // the last slot is the send buffer
  } else {
    qs.slot_size = slot_bytes;
    qs.slot_count = 1;
  }
  return qs;
}

void make_qp_owner(RunState& st, QpState& q) {
  const auto& name = q.facts->name;
  // The slot buffer first: teardown runs in reverse, so the QP goes before the memory its
  // receives point into.
  if (q.slot_count)
    q.slots = st.own<verbs::Mr>("qpo.slots." + name, q.pd, static_cast<size_t>(q.slot_size) * q.slot_count,
                                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  q.qp = st.own<verbs::Qp>(name);
}

void note_unsupported(RunState& st, report::RunReport& log, int err, const std::string& message) {
  if (err && verbs::VerbsError("", "", err).unsupported()) {
    log.verdict = report::Verdict::Unsupported;
    log.reason = "unsupported by device (" + provider_of(st) + "): " + message;
  }
}

const RemoteQp* peer_of(const RunState& st, const QpState& q) {
  if (q.facts->peer == plan::kNoObject) return nullptr;
  auto it = st.dir.qps.find(q.facts->peer);
  return it == st.dir.qps.end() ? nullptr : &it->second;
}

RemoteQp published_qp(const QpState& q) {
  RemoteQp r;
  r.host = q.host;
  r.type = q.facts->type_name;
  r.qpn = q.qp && q.qp->holds() ? q.qp->get()->qp_num : 0;
  r.sq_psn = q.sq_psn;
  r.qkey = q.qkey;
  r.lid = q.device->ctx().port_attr().lid;
  std::copy(std::begin(q.device->gid.raw), std::end(q.device->gid.raw), r.gid.begin());
  r.active_mtu = static_cast<uint8_t>(q.device->ctx().port_attr().active_mtu);
  r.port = q.device->ctx().port();
  r.slots_count = q.slot_count;
  r.slot_size = q.slot_size;
  return r;
}

RemoteMr published_mr(const std::string& host, const verbs::Mr& m) {
  return {host, reinterpret_cast<uintptr_t>(m.data()), m.length(), m.get()->rkey};
}

ibv_gid gid_of(const RemoteQp& p) {
  ibv_gid g;
  std::copy(p.gid.begin(), p.gid.end(), g.raw);
  return g;
}

ibv_ah* peer_ah(RunState& st, QpState& from, plan::ObjectId to_id, const RemoteQp& to) {
  const std::string& to_name = st.plan->peer_name(to_id);  // a QP, or an `externals:` entry after the QPs
  if (to_name.empty()) throw std::logic_error("an address handle to peer id " + std::to_string(to_id) + ", neither a QP nor an external peer");
  auto& made_for = st.peer_ahs[{from.id, to_id}];
  if (made_for) return made_for->get();
  std::string name = "qpo.ah." + from.facts->name + "->" + to_name;
  ibv_ah_attr ah{};
  ah.port_num = from.device->ctx().port();
  ah.dlid = to.lid;
  ah.is_global = 1;
  ah.grh.dgid = gid_of(to);
  ah.grh.sgid_index = static_cast<uint8_t>(from.device->gid_index);
  ah.grh.hop_limit = 1;
  made_for = st.own<verbs::Ah>(name, from.pd, ah);
  return made_for->get();
}

}  // namespace qpo::exec
