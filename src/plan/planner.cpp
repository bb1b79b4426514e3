// Scenario -> per-host ordered steps. Order follows the bring-up guidance in ibv_modify_qp(3)
// and the RDMA programming manuals: resources, RESET->INIT, receives posted before RTR,
// out-of-band exchange, RTR, RTS; then the timeline (timeline_planner.cpp); teardown in reverse.
#include <algorithm>
#include <functional>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "plan/plan.h"
#include "plan/arg_lists.h"
#include "plan/cm_planner.h"
#include "plan/timeline_planner.h"
#include "interop/perftest_message.h"
#include "scenario/script_qps.h"
#include "util/async_event_names.h"
#include "util/roce.h"
#include "util/strings.h"

namespace qpo::plan {

// A plan of 100,000 QPs holds a million steps: what a step gains goes into its padding.
static_assert(sizeof(Step) <= 184, "plan::Step grew past 184 bytes");

namespace {

using scenario::Scenario;

// What a setup step makes and what it is made on, by kind (SetupObject::id, on_id).
struct SetupKinds {
  std::optional<ObjectKind> made, on;
};
SetupKinds setup_kinds(StepKind k) {
  switch (k) {
    case StepKind::OpenDevice: return {ObjectKind::Device, std::nullopt};
    case StepKind::AllocPd: return {ObjectKind::Pd, ObjectKind::Device};
    case StepKind::OpenXrcd: return {ObjectKind::Xrcd, ObjectKind::Device};
    case StepKind::CreateCompChannel: return {ObjectKind::Cq, ObjectKind::Device};  // kept by its CQ's id
    case StepKind::CreateCq: return {ObjectKind::Cq, ObjectKind::Device};
    case StepKind::CreateSrq: return {ObjectKind::Srq, ObjectKind::Pd};
    case StepKind::RegSlots: return {ObjectKind::Srq, ObjectKind::Pd};  // an SRQ's slots, kept with the SRQ
    case StepKind::RegMr: return {ObjectKind::Mr, ObjectKind::Pd};
    default: return {};
  }
}

// Step::id: the id of its object within the object's kind. The kind is the step's: a device's
// default PD has the device's name, so "d" is a PD for ibv_alloc_pd and a device elsewhere.
// Teardown's steps have theirs already (teardown() names the kind it destroys).
ObjectId id_of_object(const Plan& p, const Step& st) {
  switch (st.kind) {
    case StepKind::Destroy: return st.id;
    case StepKind::RegSlots:  // a QP's carries its QP's id; an SRQ's is found below
      if (st.setup == Step::kNoSetup) return st.id;
      break;
    case StepKind::AllocPd: return p.id_of(ObjectKind::Pd, st.object);
    // Kinds with one object kind: a QP, a CQ or an SRQ may share a device's name (ids are per kind).
    case StepKind::OpenDevice:
    case StepKind::QueryPort:
    case StepKind::QueryGid:
    case StepKind::SetLink: return p.id_of(ObjectKind::Device, st.object);
    case StepKind::OpenXrcd: return p.id_of(ObjectKind::Xrcd, st.object);
    case StepKind::CreateCq: return p.id_of(ObjectKind::Cq, st.object);
    case StepKind::CreateSrq:
    case StepKind::PostSrqRecv:
    case StepKind::ModifySrq: return p.id_of(ObjectKind::Srq, st.object);
    case StepKind::CreateQp:
    case StepKind::Modify:
    case StepKind::PostRecv:
    case StepKind::FlushPoll:
    case StepKind::RepostRecv:
    case StepKind::ReadState: return p.id_of(ObjectKind::Qp, st.object);
    case StepKind::RegMr:
    case StepKind::PrepareData:  // the MR a workload's bytes land in (or are read from)
    case StepKind::Verify: return p.id_of(ObjectKind::Mr, st.object);
    case StepKind::AllocMw:
    case StepKind::BindMw:
    case StepKind::InvalidateMw: return p.id_of(ObjectKind::Mw, st.object);
    case StepKind::WaitEvent:
    case StepKind::ForbidEvent: {
      const auto* info = util::async_event(st.extra().event_value);
      switch (info ? info->object : util::EventObject::Qp) {
        case util::EventObject::Qp: return p.id_of(ObjectKind::Qp, st.object);
        case util::EventObject::Srq: return p.id_of(ObjectKind::Srq, st.object);
        case util::EventObject::Cq: return p.id_of(ObjectKind::Cq, st.object);
        case util::EventObject::Port:
        case util::EventObject::Device: return p.id_of(ObjectKind::Device, st.object);
      }
      return kNoObject;
    }
    default: break;
  }
  for (auto kind : {ObjectKind::Qp, ObjectKind::Device, ObjectKind::Cq, ObjectKind::Srq, ObjectKind::Xrcd})
    if (ObjectId id = p.id_of(kind, st.object); id != kNoObject) return id;
  return kNoObject;
}

bool own_rq(const scenario::Qp& q) {
  return !q.srq && !spec::is_xrc(q.qp_type) && q.cap.max_recv_wr > 0;
}

// Everything a QP's slot buffer and ibv_create_qp arguments are made of (slots_args and
// create_args read nothing else): QPs with equal inputs - the members of a counted group,
// one after another - share one list, found without building it again.
using SlotsInputs = std::tuple<const std::string&, bool, uint32_t>;
SlotsInputs slots_inputs(const scenario::Qp& q) { return {q.pd.name, own_rq(q), q.cap.max_recv_wr}; }
auto create_inputs(const scenario::Qp& q) {
  return std::tie(q.type_name, q.qp_type, q.pd.name, q.send_cq.name, q.recv_cq.name, q.srq.name, q.xrcd.name, q.cap.max_send_wr,
                  q.cap.max_recv_wr, q.cap.max_send_sge, q.cap.max_recv_sge, q.cap.max_inline_data, q.sq_sig_all);
}
using CreateInputs = decltype(create_inputs(std::declval<const scenario::Qp&>()));

std::vector<Arg> slots_args(const SlotsInputs& in) {
  const auto& [pd, own, recv_wr] = in;
  return {arg("pd", pd), arg("slots", own ? std::to_string(recv_wr) + " receives + 1 send buffer" : "1 send buffer"),
          arg("access", "local_write, remote_write, remote_read")};
}
std::vector<Arg> create_args(const CreateInputs& in) {
  const auto& [type, kind, pd, send_cq, recv_cq, srq, xrcd, send_wr, recv_wr, send_sge, recv_sge, inline_data, sig_all] = in;
  std::vector<Arg> args;
  args.reserve(12);
  args.push_back(arg("qp_type", "IBV_QPT_" + type));
  if (kind != spec::QpType::XRC_RECV) args.push_back(arg("pd", pd));
  if (!send_cq.empty()) args.push_back(arg("send_cq", send_cq));
  if (!recv_cq.empty()) args.push_back(arg("recv_cq", recv_cq));
  if (!srq.empty()) args.push_back(arg("srq", srq));
  if (!xrcd.empty()) args.push_back(arg("xrcd", xrcd));
  if (kind != spec::QpType::XRC_RECV) {
    args.push_back(arg("cap.max_send_wr", std::to_string(send_wr)));
    args.push_back(arg("cap.max_recv_wr", std::to_string(srq.empty() ? recv_wr : 0)));
    args.push_back(arg("cap.max_send_sge", std::to_string(send_sge)));
    args.push_back(arg("cap.max_recv_sge", std::to_string(recv_sge)));
    args.push_back(arg("cap.max_inline_data", std::to_string(inline_data)));
    args.push_back(arg("sq_sig_all", sig_all ? "1" : "0"));
  }
  return args;
}

class Planner {
 public:
  explicit Planner(const Scenario& s) : s_(s), receives_(s) {
    // Receive slots hold the smoke message or the largest send any workload aims at the QP,
    // also through a multicast group it is a member of: one pass over the workloads.
    for (const auto& w : s_.workloads) {
      const auto* op = w.builtin_op();
      if (op && op->op == util::Op::Recv) {  // a sender outside the scenario: its datagrams land here
        auto& b = biggest_send_[w.qp.name];
        b = std::max<uint64_t>(b, w.size);
        continue;
      }
      if (!op || !op->payload_in_recv) continue;
      auto bigger = [&](const std::string& receiver) {
        auto& b = biggest_send_[receiver];
        b = std::max<uint64_t>(b, w.size);
      };
      if (const auto* g = w.mcast ? s_.mcast_group(w.mcast.name) : nullptr) {
        for (const auto& m : g->members) bigger(m.name);
      } else if (const auto* sender = s_.qp(w.qp.name); sender && sender->connect) {
        bigger(sender->connect.name);
        // An external peer answers each message with one of the same size.
        if (s_.external(sender->connect.name)) bigger(sender->name);
      }
    }
    // perftest's peers: qpo's slots are the buffer it advertises in its keys and sends, writes or
    // reads from; the tool's client aims within its cycle buffer (4 KiB) whatever the size.
    for (const auto& w : s_.workloads) {
      const auto* q = s_.qp(w.qp.name);
      const auto* e = q && q->connect ? s_.external(q->connect.name) : nullptr;
      if (e && e->exchange == scenario::External::Exchange::Perftest) {
        auto& b = biggest_send_[q->name];
        b = std::max<uint64_t>({b, w.size, interop::kPerftestCycleBuffer});
      }
    }
  }

  Plan build(const PlanOptions& o) {
    // qpo's slot buffers: every QP with its own receive queue has one; the others only when a
    // smoke exchange or a workload may send from it.
    want_slots_ = !s_.workloads.empty();
    for (const auto& t : s_.timeline)
      want_slots_ |= t.kind == scenario::TimelineStep::Kind::Smoke && (o.smoke || t.path != "(default order)");
    Plan p;
    args_.set_modifies(&p.modifies);
    p.scenario = s_.name;
    p.file = s_.file;
    index_objects(p);
    plan_ = &p;
    p.externals = lower_externals();
    externals_ = &p.externals;
    setup_objects_ = &p.setup_objects;
    lower_objects(p);
    for (const auto& h : s_.hosts) {
      HostPlan hp;
      hp.host = h.name;
      hp.address = h.address;
      hp.steps.reserve(estimated_steps(h.name));  // growing by copies costs more than planning
      host_ = &hp;
      setup(h.name);
      faults(h.name);  // before the QPs: the bring-up window holds nothing but QP verbs
      if (o.capture || !s_.wire_expects.empty()) capture(h.name);
      qp_creates(h.name);
      bring_up(h.name);
      p.hosts.push_back(std::move(hp));
    }
    p.active_hosts = s_.active_hosts();
    p.needs = device_needs(s_, p);
    for (const auto& g : s_.mcast_groups) {
      McastGroup& m = p.mcast_groups.emplace_back();
      m.name = g.name;
      m.gid_text = g.gid_text;
      std::copy(std::begin(g.gid), std::end(g.gid), std::begin(m.gid));
      m.ipv4 = g.ipv4;
      m.qkey = g.qkey;
      m.mlid = g.mlid;
      m.cm_join = g.cm_join;
    }
    for (size_t i = 0; i < p.mcast_groups.size(); ++i) p.mcast_group_index.emplace(p.mcast_groups[i].name, i);
    for (const auto& w : s_.mws) {
      const auto* pd = s_.pd(w.pd.name);
      p.windows.push_back({w.name, w.type, w.offset, w.length, w.access, w.mr.name, w.bind_qp.name, pd ? s_.host_of_device(pd->device.name) : "", p.id_of(ObjectKind::Pd, w.pd.name),
                           p.id_of(ObjectKind::Mr, w.mr.name),
                           p.id_of(ObjectKind::Qp, w.bind_qp.name)});
    }
    for (const auto& f : s_.faults)
      p.faults.push_back({.name = f.name,
                          .device = f.device.name,
                          .during = f.during,
                          .device_id = p.id_of(ObjectKind::Device, f.device.name),
                          .loss = f.loss,
                          .corrupt = f.corrupt,
                          .duplicate = f.duplicate,
                          .reorder = f.reorder,
                          .delay_us = f.delay_us});
    lower_wire(p);
    plan_cm_connect(s_, receives_, p);  // rdma_cm connections: the first stages after bring-up
    plan_timeline(s_, o, receives_, p);
    plan_cm_disconnect(s_, p);
    for (auto& hp : p.hosts) {
      host_ = &hp;
      std::string events;
      for (const auto& e : p.packet_events)
        if (e.host == hp.host) events += (events.empty() ? "" : ", ") + e.name;
      if (!events.empty())
        add(StepKind::PacketEventsEnd, Phase::Teardown, "tc bpf off", "wire.events")
            .args.push_back(arg("events", events, "each one's matches reported, then the program is detached"));
      if ((o.capture || !s_.wire_expects.empty()) && has_device(hp.host)) {
        auto& st = add(StepKind::CaptureEnd, Phase::Teardown, "capture stop", hp.host);
        st.args.push_back(arg("files", "closed; packets counted, the run's QPs written beside each (FILE.qps.json)"));
        for (const auto& e : p.wire_expects)
          if (e.host == hp.host) st.args.push_back(arg("expect " + e.qp, describe(e), "read from this host's capture", true));
      }
      plan_cm_teardown(s_, hp);  // ids before the QPs and AHs, the channel after its ids
      const auto& ahs = p.address_handles[hp.host];
      for (auto it = ahs.rbegin(); it != ahs.rend(); ++it) add(StepKind::Destroy, Phase::Teardown, "ibv_destroy_ah", *it);
      teardown(hp.host);
    }
    for (auto& hp : p.hosts)
      for (auto& st : hp.steps) st.id = id_of_object(p, st);
    for (auto& hp : p.hosts) hp.bringup = schedule_bringup(p, hp);
    return p;
  }

 private:
  Step& add(StepKind kind, Phase phase, Text verb, std::string object) {
    // Built in place, in the list reserved for the whole plan.
    Step& st = host_->steps.emplace_back();
    st.index = static_cast<int>(host_->steps.size());
    st.kind = kind;
    st.phase = phase;
    st.verb = verb;
    st.object = std::move(object);
    return st;
  }

  // Plan::devices and Plan::qps: what exec makes and names them by, in the model's order (their ids).
  void lower_objects(Plan& p) const {
    p.devices.reserve(s_.devices.size());
    for (const auto& d : s_.devices)
      p.devices.push_back({.name = d.name, .host = d.host.name, .dev_name = d.dev_name, .port = d.port,
                           .gid_auto = d.gid_symbol == scenario::Symbol::Auto, .gid_index = d.gid_index, .gid_ip = d.gid_ip});
    p.qps.reserve(s_.qps.size());
    auto id = [&p](ObjectKind kind, const scenario::Ref& r) { return r ? p.id_of(kind, r.name) : kNoObject; };
    for (const auto& q : s_.qps) {
      QpFacts& f = p.qps.emplace_back();
      f.name = q.name;
      f.type_name = Text::intern(q.type_name);
      f.type = q.qp_type;
      const auto* device = s_.device_of_qp(q);
      f.device = device ? p.id_of(ObjectKind::Device, device->name) : kNoObject;
      f.pd = id(ObjectKind::Pd, q.pd);
      f.send_cq = id(ObjectKind::Cq, q.send_cq);
      f.recv_cq = id(ObjectKind::Cq, q.recv_cq);
      f.srq = id(ObjectKind::Srq, q.srq);
      f.xrcd = id(ObjectKind::Xrcd, q.xrcd);
      if (q.connect) f.peer = p.peer_id(q.connect.name);
      f.cap = {q.cap.max_send_wr, q.cap.max_recv_wr, q.cap.max_send_sge, q.cap.max_recv_sge, q.cap.max_inline_data};
      f.sq_sig_all = q.sq_sig_all;
      for (const auto& t : q.transitions) {  // the literals the QP's transitions give (bring-up's first)
        const auto* psn = t.attr("sq_psn");
        if (!f.sq_psn && psn && psn->symbol == scenario::Symbol::None) f.sq_psn = static_cast<uint32_t>(psn->number);
      }
      for (const auto& t : q.transitions)
        if (const auto* a = t.attr("qkey"); a && a->symbol == scenario::Symbol::None) {
          f.qkey = static_cast<uint32_t>(a->number);
          break;
        }
    }
  }

  // Plan::object_index: each kind's objects by their place in the checked model's list.
  void index_objects(Plan& p) const {
    auto index = [&p](ObjectKind kind, const auto& list) {
      auto& index = p.object_index[static_cast<size_t>(kind)];
      auto& names = p.object_names[static_cast<size_t>(kind)];
      bool named_here = kind != ObjectKind::Qp;  // a QP's name is kept once, in Plan::qps
      index.reserve(list.size());
      if (named_here) names.reserve(list.size());
      for (size_t i = 0; i < list.size(); ++i) {
        index.emplace(list[i].name, static_cast<ObjectId>(i));
        if (named_here) names.push_back(list[i].name);
      }
    };
    index(ObjectKind::Device, s_.devices);
    index(ObjectKind::Pd, s_.pds);
    index(ObjectKind::Cq, s_.cqs);
    index(ObjectKind::Srq, s_.srqs);
    index(ObjectKind::Xrcd, s_.xrcds);
    index(ObjectKind::Qp, s_.qps);
    index(ObjectKind::Mr, s_.mrs);
    index(ObjectKind::Mw, s_.mws);
  }

  // Steps a host will have (setup, per QP: slots, create, modify, receives, smoke, teardown;
  // per workload a few): enough to plan without the step list moving as it grows.
  size_t estimated_steps(const std::string& host) {
    size_t n = 64 + 3 * (s_.devices.size() + s_.pds.size() + s_.cqs.size() + s_.srqs.size()) + 2 * s_.mrs.size() +
               6 * s_.workloads.size() + 4 * s_.timeline.size();
    for (const auto* q : qps_on(host)) n += 8 + q->transitions.size() * 2;
    return n;
  }

  bool on_host(const std::string& device, const std::string& host) const { return s_.host_of_device(device) == host; }
  std::string device_of_pd(const std::string& pd) const {
    const auto* p = s_.pd(pd);
    return p ? p->device.name : "";
  }
  // The QPs of each host, found once (four passes ask, each QP's host takes three lookups).
  const std::vector<const scenario::Qp*>& qps_on(const std::string& host) {
    if (!qps_by_host_) {
      qps_by_host_.emplace();
      for (const auto& q : s_.qps)
        if (q.type >= 0) (*qps_by_host_)[s_.host_of_qp(q)].push_back(&q);
    }
    return (*qps_by_host_)[host];
  }

  void setup(const std::string& host) {
    for (const auto& d : s_.devices) {
      if (d.host.name != host) continue;
      auto& st = makes(add(StepKind::OpenDevice, Phase::Setup, "ibv_open_device", d.name), {});
      st.args.push_back(arg("name", d.dev_name == "auto" ? "auto (first active device)" : d.dev_name));
      auto& port = add(StepKind::QueryPort, Phase::Setup, "ibv_query_port", d.name);
      port.args.push_back(arg("port_num", std::to_string(d.port)));
      auto& gid = add(StepKind::QueryGid, Phase::Setup, "ibv_query_gid", d.name);
      Arg gi = arg("gid_index", d.gid_symbol == scenario::Symbol::Auto ? "auto"
                                : !d.gid_ip.empty()                     ? d.gid_ip
                                                                        : std::to_string(d.gid_index));
      if (d.gid_symbol == scenario::Symbol::Auto) {
        gi.runtime = true;
        gi.note = "RoCEv2 IPv4-mapped GID if present, else index 0";
      } else if (!d.gid_ip.empty()) {
        gi.runtime = true;
        gi.note = "the GID with this IP (RoCEv2 first), from the port's GID table";
      }
      gid.args.push_back(gi);
    }
    for (const auto& pd : s_.pds)
      if (on_host(pd.device.name, host))
        makes(add(StepKind::AllocPd, Phase::Setup, "ibv_alloc_pd", pd.name), {.on = pd.device.name})
            .args.push_back(arg("device", pd.device.name));
    for (const auto& x : s_.xrcds)
      if (on_host(x.device.name, host))
        makes(add(StepKind::OpenXrcd, Phase::Setup, "ibv_open_xrcd", x.name), {.on = x.device.name})
            .args.push_back(arg("device", x.device.name));
    for (const auto& m : s_.mrs) {
      if (!on_host(device_of_pd(m.pd.name), host)) continue;
      auto& st = makes(add(StepKind::RegMr, Phase::Setup, "ibv_reg_mr", m.name),
                       {.on = m.pd.name, .size = m.size, .access = static_cast<int>(m.access)});
      st.args.push_back(arg("pd", m.pd.name));
      st.args.push_back(arg("length", std::to_string(m.size)));
      Arg access = describe_attr(scenario::Attr{"qp_access_flags", {}, {}, "", "", scenario::Symbol::None, m.access});
      access.name = "access";
      st.args.push_back(access);
    }
    for (const auto& w : s_.mws) {
      if (!on_host(device_of_pd(w.pd.name), host)) continue;
      auto& st = add(StepKind::AllocMw, Phase::Setup, "ibv_alloc_mw", w.name);
      st.args.push_back(arg("pd", w.pd.name));
      st.args.push_back(arg("type", w.type == 1 ? "IBV_MW_TYPE_1" : "IBV_MW_TYPE_2"));
    }
    for (const auto& c : s_.cqs) {
      if (!on_host(c.device.name, host)) continue;
      if (c.channel)
        makes(add(StepKind::CreateCompChannel, Phase::Setup, "ibv_create_comp_channel", c.name + ".channel"),
              {.on = c.device.name, .owner = c.name});
      auto& st = makes(add(StepKind::CreateCq, Phase::Setup, c.timestamps ? Text("ibv_create_cq_ex") : Text("ibv_create_cq"), c.name),
                       {.on = c.device.name, .channel = c.channel ? c.name : "", .depth = static_cast<uint32_t>(c.depth),
                        .timestamps = c.timestamps});
      st.args.push_back(arg("cqe", std::to_string(c.depth)));
      if (c.channel) st.args.push_back(arg("channel", c.name + ".channel"));
      if (c.timestamps) st.args.push_back(arg("wc_flags", "IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP"));
    }
    for (const auto& sr : s_.srqs) {
      if (!on_host(device_of_pd(sr.pd.name), host)) continue;
      auto& st = makes(add(StepKind::CreateSrq, Phase::Setup, "ibv_create_srq", sr.name),
                       {.on = sr.pd.name, .max_wr = sr.max_wr, .max_sge = sr.max_sge});
      st.args.push_back(arg("pd", sr.pd.name));
      st.args.push_back(arg("max_wr", std::to_string(sr.max_wr)));
      st.args.push_back(arg("max_sge", std::to_string(sr.max_sge)));
      makes(add(StepKind::RegSlots, Phase::Setup, "ibv_reg_mr", "qpo.slots." + sr.name),
            {.on = sr.pd.name, .owner = sr.name, .max_wr = sr.max_wr})
          .args.push_back(arg("slots", std::to_string(sr.max_wr) + " receives"));
    }
  }

  // The last setup steps: the bring-up window opens at the first of them.
  bool has_slots(const scenario::Qp& q) const { return q.qp_type != spec::QpType::XRC_RECV && (own_rq(q) || want_slots_); }

  void qp_creates(const std::string& host) {
    const scenario::Qp* prev = nullptr;
    util::SharedList<Arg> prev_args;
    for (const auto* q : qps_on(host)) {
      if (!has_slots(*q)) continue;
      auto& st = add(StepKind::RegSlots, Phase::Setup, "ibv_reg_mr", "qpo.slots." + q->name);
      st.id = plan_->id_of(ObjectKind::Qp, q->name);  // a QP's buffer: its QP's id (the bring-up schedule pairs them)
      st.count = slot_bytes(*q);
      if (!prev || slots_inputs(*prev) != slots_inputs(*q)) prev_args = args_.intern(slots_args(slots_inputs(*q)));
      st.args = prev_args;
      prev = q;
    }
    prev = nullptr;
    for (const auto* q : qps_on(host)) {
      auto& st = add(StepKind::CreateQp, Phase::Setup, spec::is_xrc(q->qp_type) ? Text("ibv_create_qp_ex") : Text("ibv_create_qp"), q->name);
      if (!prev || create_inputs(*prev) != create_inputs(*q)) prev_args = args_.intern(create_args(create_inputs(*q)));
      st.args = prev_args;
      prev = q;
    }
  }

  void modify(const scenario::Qp& q, size_t index, Phase phase) {
    describe_modify(add(StepKind::Modify, phase, "ibv_modify_qp", q.name), q, index, args_);
  }

  // Transitions up to (not including) the first one that needs the peer, then receives,
  // then the exchange, then the rest of bring-up.
  void bring_up(const std::string& host) {
    const auto& qps = qps_on(host);
    std::vector<size_t> next(qps.size(), 0);
    for (size_t i = 0; i < qps.size(); ++i) {
      const auto& tr = qps[i]->transitions;
      while (next[i] < tr.size() && tr[next[i]].bring_up && tr[next[i]].to != spec::QpState::RTR &&
             tr[next[i]].to != spec::QpState::RTS) {
        modify(*qps[i], next[i], Phase::BringUp);
        ++next[i];
      }
    }
    util::SharedList<Arg> recv_args;
    std::pair<uint32_t, bool> recv_inputs;  // the receives recv_args says, whether they fill the queue
    for (const auto* q : qps) {
      if (q->srq || spec::is_xrc(q->qp_type) || q->cap.max_recv_wr == 0) continue;
      bool reaches_init = false;
      for (const auto& t : q->transitions)
        if (t.bring_up && t.predicted_ok && t.to == spec::QpState::INIT) reaches_init = true;
      if (!reaches_init) continue;
      auto& st = add(StepKind::PostRecv, Phase::BringUp, "ibv_post_recv", q->name);
      uint32_t count = receives_.of_qp(*q);
      std::pair<uint32_t, bool> inputs{count, count == q->cap.max_recv_wr};
      if (recv_args.empty() || inputs != recv_inputs) {  // else as the QP before (a counted group's members)
        Arg wr_count = arg("wr_count", std::to_string(count));
        wr_count.note = inputs.second ? "fill the receive queue before RTR" : "for the smoke exchange; scripts post their own";
        recv_args = args_.intern({wr_count});
        recv_inputs = inputs;
      }
      st.args = recv_args;
      st.count = count;
    }
    for (const auto& sr : s_.srqs) {
      if (!on_host(device_of_pd(sr.pd.name), host)) continue;
      auto& post = add(StepKind::PostSrqRecv, Phase::BringUp, "ibv_post_srq_recv", sr.name);
      post.count = receives_.of_srq(sr);
      post.args.push_back(arg("wr_count", std::to_string(post.count)));
      if (sr.srq_limit) describe_srq_limit(add(StepKind::ModifySrq, Phase::BringUp, "ibv_modify_srq", sr.name), sr.srq_limit);
    }
    if (!qps.empty()) {
      auto& pub = add(StepKind::Publish, Phase::Exchange, "publish", host);
      pub.args.push_back(arg("per QP", "qp_num, sq_psn, port lid, gid, active_mtu"));
      pub.args.push_back(arg("per MR", "addr, length, rkey"));
      auto& res = add(StepKind::Resolve, Phase::Exchange, "resolve", host);
      Arg peer_values = arg("peer values", "dest_qp_num, rq_psn, ah_attr.dlid, ah_attr.grh.dgid, path_mtu");
      peer_values.runtime = true;
      peer_values.note = "waits for every peer host to publish";
      res.args.push_back(peer_values);
    }
    external_steps(host, StepKind::ExternalExchange);
    for (size_t i = 0; i < qps.size(); ++i) {
      const auto& tr = qps[i]->transitions;
      if (qps[i]->cm.exchange_only) continue;  // RTR/RTS after the CM's exchange (cm_planner.cpp)
      while (next[i] < tr.size() && tr[next[i]].bring_up) {
        modify(*qps[i], next[i], Phase::BringUp);
        ++next[i];
      }
    }
    external_steps(host, StepKind::ExternalReply);
    if (!qps.empty() && s_.hosts.size() > 1) add(StepKind::Barrier, Phase::Exchange, "barrier", "all hosts").args.push_back(arg("after", "bring-up"));
  }

  std::vector<ExternalPeer> lower_externals() const {
    std::vector<ExternalPeer> out;
    for (const auto& q : s_.qps) {
      const auto* e = q.connect ? s_.external(q.connect.name) : nullptr;
      if (!e) continue;
      ExternalPeer x{.name = e->name, .qp = q.name, .host = s_.host_of_qp(q), .ud = q.qp_type == spec::QpType::UD,
                     .exchange = e->exchange, .server = e->server, .from = e->from, .port = e->port, .mtu = e->mtu,
                     .test_over_cm = e->rdma_cm, .values = e->values, .values_file = e->values_file,
                     .own_values = e->own_values};
      for (const auto& t : scenario::External::kPerftestTools)
        if (t.name == e->tool) x.latency = t.latency;
      if (const auto* t = e->exchange == scenario::External::Exchange::RdmaCm ? scenario::External::cm_tool(e->tool) : nullptr) {
        x.cm_tool = std::string(t->name);
        x.qpo_active = q.cm.active;
        x.server_sends_first = t->server_sends_first;
        x.burst = t->burst;
        x.imm_qpn = t->ud;
        x.buffers = t->buffers;
        x.client_disconnects = t->client_disconnects;
      }
      for (const auto& w : s_.workloads)
        if (w.qp.name == q.name) {
          x.workload = w.name;
          x.op = w.op;
          x.size = w.size;
          x.iterations = w.iterations;
          break;
        }
      for (const auto& t : q.transitions) {
        if (const auto* a = t.attr("max_dest_rd_atomic"); a && a->valid && a->symbol == scenario::Symbol::None)
          x.out_reads = static_cast<uint32_t>(a->number);
        if (const auto* a = t.attr("max_rd_atomic"); a && a->valid && a->symbol == scenario::Symbol::None)
          x.max_rd_atomic = static_cast<uint32_t>(a->number);
      }
      x.qp_id = plan_->qp_id(q.name);
      x.peer_id = static_cast<ObjectId>(plan_->qp_count() + out.size());  // Plan::peer_id's space
      out.push_back(std::move(x));
    }
    return out;
  }

  // The external exchanges of this host's QPs: the part before RTR (ExternalExchange), or
  // qpo's answer after RTS when it is the tool's server (ExternalReply).
  void external_steps(const std::string& host, StepKind kind) {
    for (size_t i = 0; i < externals_->size(); ++i) {
      const auto& e = (*externals_)[i];
      if (e.host != host || e.rdma_cm()) continue;  // rdma_cm: the CM's steps are the exchange (cm_planner.cpp)
      if (e.perftest()) {
        perftest_steps(e, i, kind);
        continue;
      }
      if (e.given()) {
        if (kind == StepKind::ExternalExchange) values_step(e, i);
        continue;
      }
      if (kind == StepKind::ExternalReply && !e.qpo_listens()) continue;
      std::string where = std::to_string(e.port);
      if (kind == StepKind::ExternalExchange) {
        auto& st = add(kind, Phase::Exchange, "external exchange", e.qp);
        st.edit_extra().external = static_cast<int>(i);
        st.args.push_back(arg("peer", "external '" + e.name + "' (ibv_pingpong: " + e.tool() + "'s TCP exchange)"));
        if (e.qpo_listens()) {
          Arg tcp = arg("tcp", "listen on port " + where);
          tcp.runtime = true;
          tcp.note = std::string("waits for the tool: ") + e.tool() + " -g GID_INDEX QPO_ADDRESS";
          st.args.push_back(tcp);
          if (!e.from.empty()) st.args.push_back(arg("accepts", "only from " + e.from + "; any other connection is closed and named"));
          st.args.push_back(arg("receives", "the tool's LID:QPN:PSN:GID (52 bytes)"));
          st.args.push_back(arg("then", "RTR and RTS before qpo answers, as the tool's server does"));
        } else {
          Arg tcp = arg("tcp", "connect to " + e.server + ":" + where);
          tcp.note = "retried until the phase timeout while the tool is not listening yet";
          st.args.push_back(tcp);
          st.args.push_back(arg("sends", "QP " + e.qp + "'s LID:QPN:PSN:GID (52 bytes), then \"done\" after the tool's"));
        }
        Arg peer_values = arg("peer values", e.ud ? "the tool's QPN and GID (its address handle; qkey 0x11111111)"
                                                   : "dest_qp_num, rq_psn, ah_attr.dlid, ah_attr.grh.dgid");
        peer_values.runtime = true;
        peer_values.note = "path_mtu of the tool: " + std::to_string(e.mtu);
        st.args.push_back(peer_values);
      } else {
        auto& st = add(kind, Phase::Exchange, "external reply", e.qp);
        st.edit_extra().external = static_cast<int>(i);
        st.args.push_back(arg("peer", "external '" + e.name + "'"));
        st.args.push_back(arg("sends", "QP " + e.qp + "'s LID:QPN:PSN:GID (52 bytes), then waits for \"done\""));
      }
    }
  }

  // perftest's TCP exchange: the opening units and the first keys before RTR, two more keys
  // hand-shakes once the QP is at RTS (the tool's own check that both sides are connected).
  void perftest_steps(const ExternalPeer& e, size_t i, StepKind kind) {
    bool r = e.test_over_cm;  // -R: the units over an RDMA connection of their own (cm/perftest_control.h)
    std::string keys = "QP " + e.qp + "'s QPN, PSN, GID and its buffer qpo.slots." + e.qp + " (vaddr, rkey), out_reads " +
                       std::to_string(e.out_reads) + (r ? " (56 bytes: the tool's struct pingpong_dest)" : " (108 bytes)");
    if (kind == StepKind::ExternalReply) {
      if (r) return;  // the hand-shakes after the CM connection open the workload (timeline_planner.cpp)
      auto& st = add(kind, Phase::Exchange, "external handshake", e.qp);
      st.edit_extra().external = static_cast<int>(i);
      st.args.push_back(arg("peer", "external '" + e.name + "' (" + e.tool() + ")"));
      st.args.push_back(arg("keys", "twice more each way, as the tool checks after its RTS"));
      return;
    }
    auto& st = add(kind, Phase::Exchange, "external exchange", e.qp);
    st.edit_extra().external = static_cast<int>(i);
    st.args.push_back(arg("peer", "external '" + e.name + "' (perftest: " + e.tool() +
                                      (r ? " -R's exchange over rdma_cm; its test QP connects through the CM too)"
                                         : "'s TCP exchange)")));
    std::string where = std::to_string(e.port);
    std::string options = std::string(r ? " -R" : "") + " -s " + std::to_string(e.size) + " -n " +
                          std::to_string(e.iterations) + " -p " + where;
    const char* carrier = r ? "rdma_cm" : "tcp";
    if (e.qpo_listens()) {
      Arg listen = arg(carrier, r ? "listen on port " + where + " (RDMA_PS_TCP, from the run's start; a QP of its own)"
                                  : "listen on port " + where);
      listen.runtime = true;
      listen.note = std::string("waits for the tool: ") + e.tool() + " -d DEVICE -x GID_INDEX" + options + " QPO_ADDRESS";
      st.args.push_back(listen);
      if (!e.from.empty())
        st.args.push_back(arg("accepts", "only from " + e.from + (r ? "; any other request is rejected and named"
                                                                    : "; any other connection is closed and named")));
    } else {
      Arg dial = arg(carrier, "connect to " + e.server + ":" + where + (r ? " (RDMA_PS_TCP; a QP of its own)" : ""));
      dial.note = std::string("retried until the phase timeout while the tool is not listening yet: ") + e.tool() +
                  " -d DEVICE -x GID_INDEX" + options;
      st.args.push_back(dial);
    }
    std::string opening = "version 6.06 (16 bytes), cycle buffer 4096, cache line 64, MTU " + std::to_string(e.mtu) + " (its enum)";
    if (r) {
      st.args.push_back(arg("sends", opening + (e.qpo_listens() ? "; reads the tool's keys (the sync before its test QP "
                                                                  "connects) and answers with " + keys +
                                                                  " once qpo listens (stage cm connect)"
                                                                : ", then " + keys + " once: the sync before the test QPs "
                                                                  "connect")));
      st.args.push_back(arg("then", "the CM connects the test QPs on port " + where + "; the keys that carry the tool's "
                                    "buffer come after it, as the workload starts"));
      return;
    }
    st.args.push_back(arg("sends", opening + ", then " + keys));
    Arg peer_values = arg("peer values", "dest_qp_num, rq_psn, ah_attr.grh.dgid, path_mtu (the smaller MTU), the tool's buffer");
    peer_values.runtime = true;
    peer_values.note = "from the tool's keys";
    st.args.push_back(peer_values);
  }

  // exchange values: qpo writes its QP's values, then takes the peer's as given or from a file.
  void values_step(const ExternalPeer& e, size_t i) {
    auto& st = add(StepKind::ExternalExchange, Phase::Exchange, "external values", e.qp);
    st.edit_extra().external = static_cast<int>(i);
    st.args.push_back(arg("peer", "external '" + e.name + "' (values given: nothing connects to it)"));
    if (!e.own_values.empty())
      st.args.push_back(arg("writes", "QP " + e.qp + "'s qpn, psn, lid, gid, qkey, mtu and its buffer qpo.slots." + e.qp +
                                          " (addr, rkey, length) as JSON to " +
                                          (e.own_values == "-" ? std::string("stdout (stderr when stdout carries JSON)")
                                                               : e.own_values) + ", first"));
    if (e.values) {
      const auto& v = *e.values;
      std::string text = "qpn " + util::hex(v.qpn) + ", psn " + util::hex(v.psn) + ", lid " + std::to_string(v.lid) +
                         (v.gid.empty() ? "" : ", gid " + v.gid) + ", qkey " + util::hex(v.qkey) + ", mtu " + std::to_string(v.mtu);
      if (v.has_mr) text += ", buffer " + util::hex(v.mr_addr) + " rkey " + util::hex(v.mr_rkey) + " length " + std::to_string(v.mr_length);
      st.args.push_back(arg("peer values", text));
    } else {
      Arg from = arg("peer values", "read from " + e.values_file + " (JSON: qpn, psn, lid, gid, qkey, mtu, mr {addr, rkey, length})");
      from.runtime = true;
      from.note = "waits for the file up to the phase timeout: the peer's setup may write it after qpo's own";
      st.args.push_back(from);
    }
  }

  // `wire:` lowered, one entry per QP (a group's entry per member).
  void lower_wire(Plan& p) {
    for (const auto& e : s_.packet_events) {
      auto qps = s_.qp_or_members(e.qp.name);
      for (const auto& name : qps) {
        const auto* q = s_.qp(name);
        const auto* peer = q ? s_.qp(q->connect.name) : nullptr;
        if (!peer) continue;
        bool at_sender = e.action == util::EventAction::Delay;
        const auto* pd = s_.pd(at_sender ? q->pd.name : peer->pd.name);
        p.packet_events.push_back({.name = name == e.qp.name ? e.name : e.name + "[" + name + "]",
                                   .qp = name,
                                   .receiver = peer->name,
                                   .host = s_.host_of_qp(at_sender ? *q : *peer),
                                   .device = pd ? pd->device.name : "",
                                   .qp_id = p.qp_id(name),
                                   .receiver_id = p.qp_id(peer->name),
                                   .device_id = pd ? p.id_of(ObjectKind::Device, pd->device.name) : kNoObject,
                                   .at_sender = at_sender,
                                   .delay_us = e.delay_us,
                                   .packets = e.packets,
                                   .by_psn = e.psn.has_value(),
                                   .value = e.psn ? *e.psn : e.nth.value_or(1),
                                   .transmission = e.transmission,
                                   .action = e.action});
      }
    }
    for (const auto& e : s_.wire_expects)
      for (const auto& name : s_.qp_or_members(e.qp.name)) {
        const auto* q = s_.qp(name);
        const auto* pd = q ? s_.pd(q->pd.name) : nullptr;
        if (q && pd)
          p.wire_expects.push_back({e.fact, e.min, e.max, e.factor, e.text, name, q->connect.name, s_.host_of_qp(*q), pd->device.name, p.qp_id(name),
                                    p.peer_id(q->connect.name), p.id_of(ObjectKind::Device, pd->device.name)});
      }
  }

  bool has_device(const std::string& host) const {
    for (const auto& d : s_.devices)
      if (d.host.name == host) return true;
    return false;
  }

  // Before the QPs, so the capture holds every packet they send: one file per netdev of the
  // host's devices (known when they are open), only UDP 4791.
  void capture(const std::string& host) {
    std::string devices;
    for (const auto& d : s_.devices)
      if (d.host.name == host) devices += (devices.empty() ? "" : ", ") + d.name;
    if (devices.empty()) return;
    auto& st = add(StepKind::Capture, Phase::Setup, "capture", host);
    st.args.push_back(arg("netdevs", "of " + devices, "the GID's netdev of each device, found when it is open", true));
    st.args.push_back(arg("filter", std::string("udp dst port ") + util::kRoceV2UdpPort));
  }

  // Faults for the whole run (`during: all`); the timeline plans those of the traffic.
  void faults(const std::string& host) {
    for (const auto& f : s_.faults)
      if (on_host(f.device.name, host) && f.during == "all")
        describe_fault(add(StepKind::Fault, Phase::Setup, "tc qdisc replace netem", f.name), f);
  }

  void teardown(const std::string& host) {
    // Memory windows first: bound after the QPs were made, a type 2 window holds its QP (rxe's
    // ibv_destroy_qp waits for it) and any window its MR (rxe refuses ibv_dereg_mr under it).
    for (auto it = s_.mws.rbegin(); it != s_.mws.rend(); ++it)
      if (on_host(device_of_pd(it->pd.name), host)) destroys(ObjectKind::Mw, "ibv_dealloc_mw", it->name);
    // Multicast attachments before their QPs (an attached QP holds the group), last group first.
    for (auto g = s_.mcast_groups.rbegin(); g != s_.mcast_groups.rend(); ++g)
      for (auto m = g->members.rbegin(); m != g->members.rend(); ++m) {
        const auto* q = s_.qp(m->name);
        if (q && q->type >= 0 && s_.host_of_qp(*q) == host)
          add(StepKind::Destroy, Phase::Teardown, "ibv_detach_mcast", mcast_attachment_name(g->name, m->name));
      }
    // rdma_cm joins: leave each group, then the ids, then this host's channel (after its ids).
    bool cm_joined = false;
    for (auto g = s_.mcast_groups.rbegin(); g != s_.mcast_groups.rend(); ++g) {
      if (!g->cm_join) continue;
      std::vector<std::string> joiners = mcast_senders(s_, g->name);
      for (const auto& m : g->members) joiners.push_back(m.name);
      for (auto j = joiners.rbegin(); j != joiners.rend(); ++j) {
        const auto* q = s_.qp(*j);
        if (!q || q->type < 0 || s_.host_of_qp(*q) != host) continue;
        cm_joined = true;
        add(StepKind::Destroy, Phase::Teardown, "rdma_leave_multicast", mcast_attachment_name(g->name, *j));
        add(StepKind::Destroy, Phase::Teardown, "rdma_destroy_id", mcast_attachment_name(g->name, *j));
      }
    }
    if (cm_joined) add(StepKind::Destroy, Phase::Teardown, "rdma_destroy_event_channel", mcast_cm_channel_name(host));
    // Then reverse creation order: QPs, SRQs, CQs (then their channels), MRs, XRCDs, PDs, devices.
    const auto& qps = qps_on(host);
    for (auto it = qps.rbegin(); it != qps.rend(); ++it) destroys(ObjectKind::Qp, "ibv_destroy_qp", (*it)->name);
    for (auto it = qps.rbegin(); it != qps.rend(); ++it)
      if (has_slots(**it)) add(StepKind::Destroy, Phase::Teardown, "ibv_dereg_mr", "qpo.slots." + (*it)->name);
    for (auto it = s_.srqs.rbegin(); it != s_.srqs.rend(); ++it)
      if (on_host(device_of_pd(it->pd.name), host)) {
        add(StepKind::Destroy, Phase::Teardown, "ibv_dereg_mr", "qpo.slots." + it->name);
        destroys(ObjectKind::Srq, "ibv_destroy_srq", it->name);
      }
    for (auto it = s_.cqs.rbegin(); it != s_.cqs.rend(); ++it) {
      if (!on_host(it->device.name, host)) continue;
      destroys(ObjectKind::Cq, "ibv_destroy_cq", it->name);
      if (it->channel) add(StepKind::Destroy, Phase::Teardown, "ibv_destroy_comp_channel", it->name + ".channel").id = plan_->id_of(ObjectKind::Cq, it->name);
    }
    for (auto it = s_.mrs.rbegin(); it != s_.mrs.rend(); ++it)
      if (on_host(device_of_pd(it->pd.name), host)) destroys(ObjectKind::Mr, "ibv_dereg_mr", it->name);
    for (auto it = s_.xrcds.rbegin(); it != s_.xrcds.rend(); ++it)
      if (on_host(it->device.name, host)) destroys(ObjectKind::Xrcd, "ibv_close_xrcd", it->name);
    for (auto it = s_.pds.rbegin(); it != s_.pds.rend(); ++it)
      if (on_host(it->device.name, host)) destroys(ObjectKind::Pd, "ibv_dealloc_pd", it->name);
    for (auto it = s_.devices.rbegin(); it != s_.devices.rend(); ++it)
      if (it->host.name == host) destroys(ObjectKind::Device, "ibv_close_device", it->name);
  }

  const Scenario& s_;
  const std::vector<ExternalPeer>* externals_ = nullptr;  // the plan's (build sets it)
  std::vector<SetupObject>* setup_objects_ = nullptr;      // the plan's (build sets it)
  const Plan* plan_ = nullptr;  // the one being built (build sets it): its object index

  // A teardown step destroying the `kind` object `name`, with its id (a channel's is its CQ's).
  Step& destroys(ObjectKind kind, Text verb, const std::string& name) {
    auto& st = add(StepKind::Destroy, Phase::Teardown, verb, name);
    st.id = plan_->id_of(kind, name);
    return st;
  }

  // `st` makes `o`: exec/setup.cpp reads it there (Step::setup), by ids (plan/qp_id.h).
  Step& makes(Step& st, SetupObject o) {
    auto kinds = setup_kinds(st.kind);
    if (kinds.made) o.id = plan_->id_of(*kinds.made, o.owner.empty() ? st.object : o.owner);
    if (kinds.on) o.on_id = plan_->id_of(*kinds.on, o.on);
    st.setup = static_cast<uint32_t>(setup_objects_->size());
    setup_objects_->push_back(std::move(o));
    return st;
  }
  scenario::BringupReceives receives_;  // every QP's and SRQ's bring-up receive count
  std::unordered_map<std::string, uint64_t> biggest_send_;  // QP -> the largest message workloads send it
  // The bytes of one of a QP's receive slots: at least the smoke's 256, plus room for the 40-byte
  // GRH a UD receiver gets in front (64).
  uint32_t slot_bytes(const scenario::Qp& q) const {
    auto it = biggest_send_.find(q.name);
    return static_cast<uint32_t>(std::max<uint64_t>(256, it == biggest_send_.end() ? 0 : it->second) + 64);
  }
  ArgLists args_;
  HostPlan* host_ = nullptr;
  bool want_slots_ = false;
  std::optional<std::unordered_map<std::string, std::vector<const scenario::Qp*>>> qps_by_host_;
};

}  // namespace

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Setup: return "setup";
    case Phase::BringUp: return "bring-up";
    case Phase::Exchange: return "exchange";
    case Phase::Traffic: return "traffic";
    case Phase::Transitions: return "transitions";
    case Phase::Teardown: return "teardown";
  }
  return "?";
}


std::string describe(const PacketEventPlan& e) {
  std::string what = util::event_packets_name(e.packets);
  if (!what.empty() && what.back() == 's') what.pop_back();  // "request", "ack", "read_response"
  std::string which;
  if (e.by_psn) {
    std::string tx = e.transmission == 0 ? "every transmission" : e.transmission == 1 ? "the first transmission"
                     : e.transmission == 2 ? "the first retransmission" : "transmission " + std::to_string(e.transmission);
    which = tx + " of the " + what + " at relative PSN " + std::to_string(e.value);
  } else {
    which = "the " + what + " number " + std::to_string(e.value);
  }
  std::string by = e.action == util::EventAction::Delay ? " by " + std::to_string(e.delay_us) + " us" : "";
  return std::string(util::event_action_name(e.action)) + " " + which + " from " + e.qp + " to " + e.receiver + by;
}

std::string describe(const WireExpectPlan& e) {
  const auto& info = util::wire_fact_info(e.fact);
  std::string what = e.text;
  if (info.kind == util::WireFactKind::Factor) what = "within " + what + (what.back() == 'x' ? "" : "x");
  return std::string(info.name) + " " + what;
}

StepExtra& Step::edit_extra() {
  if (!extra_) extra_ = std::make_shared<StepExtra>();
  else if (extra_.use_count() > 1) extra_ = std::make_shared<StepExtra>(*extra_);
  return *extra_;
}

const StepExtra& Step::no_extra() {
  static const StepExtra none;
  return none;
}

ObjectId Plan::peer_id(const std::string& name) const {
  if (ObjectId id = qp_id(name); id != kNoObject) return id;
  const auto* x = external(name);
  return x ? static_cast<ObjectId>(qp_count() + static_cast<size_t>(x - externals.data())) : kNoObject;
}

const std::string& Plan::peer_name(ObjectId peer) const {
  static const std::string none;
  if (peer < qps.size()) return qps[peer].name;
  if (peer != kNoObject && peer >= qp_count() && peer - qp_count() < externals.size()) return externals[peer - qp_count()].name;
  return none;
}

const ExternalPeer* Plan::external(const std::string& name) const {
  for (const auto& e : externals)  // few: no index
    if (e.name == name) return &e;
  return nullptr;
}

const ExternalPeer* Plan::external_of(ObjectId peer) const {
  return peer != kNoObject && peer >= qp_count() && peer - qp_count() < externals.size() ? &externals[peer - qp_count()] : nullptr;
}

const McastGroup* Plan::mcast_group(const std::string& name) const {
  auto it = mcast_group_index.find(name);
  return it == mcast_group_index.end() ? nullptr : &mcast_groups[it->second];
}

size_t Plan::step_count() const {
  size_t n = 0;
  for (const auto& h : hosts) n += h.steps.size();
  return n;
}

std::string mcast_attachment_name(const std::string& group, const std::string& qp) { return group + ":" + qp; }
std::string mcast_cm_channel_name(const std::string& host) { return "qpo.cm." + host + ".mcast"; }
std::vector<std::string> mcast_senders(const scenario::Scenario& s, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& w : s.workloads)  // op recv only receives: not a sender
    if (w.mcast && w.mcast.name == group && w.op != util::Op::Recv && std::find(out.begin(), out.end(), w.qp.name) == out.end())
      out.push_back(w.qp.name);
  return out;
}

Plan build_plan(const check::Checked& checked, const PlanOptions& o) { return Planner(checked.model()).build(o); }

void describe_modify(Step& st, const scenario::Qp& q, size_t index, ArgLists& lists) {
  const auto& t = q.transitions[index];
  st.has_mask = true;
  st.mask = t.mask;
  st.from_state = Text::of_static(spec::state_name(t.from));
  st.to_state = Text::of_static(spec::state_name(t.to));
  st.target = t.to;
  st.args = lists.modify(q, index);
  st.modify = lists.lowered_modify(q, index);
  bool expects_fail = t.expect && t.expect->errno_value != 0;
  if (expects_fail) st.expect = Text::intern(t.expect->errno_name);
  if (t.predicted_ok) st.prediction = expects_fail ? Text::intern("ok (but " + t.expect->errno_name + " expected)") : Text("ok");
  else st.prediction = expects_fail ? Text::intern("EINVAL (expected " + t.expect->errno_name + ")") : Text("EINVAL");
}

void describe_srq_limit(Step& st, uint32_t limit) {
  st.edit_extra().srq_limit = limit;
  st.args.push_back(Arg{"srq_limit", std::to_string(limit), false, false,
                        limit ? "arms IBV_EVENT_SRQ_LIMIT_REACHED: fewer than this many receives left" : "disarms"});
  st.args.push_back(Arg{"attr_mask", "IBV_SRQ_LIMIT", false, false, ""});
}

void describe_event(Step& st, const std::string& event, int value, uint64_t within_ms, bool forbid) {
  auto& extra = st.edit_extra();
  extra.event = event;
  extra.event_value = value;
  extra.within_ms = within_ms;
  st.args.push_back(Arg{"event", event, false, false, ""});
  std::string within = within_ms ? std::to_string(within_ms) + " ms" : forbid ? "0 ms" : "--timeout-ms";
  st.args.push_back(Arg{"within", within, false, false,
                        forbid ? "fails if it came, or comes within this" : "taken if it came already, else waited for"});
}

void describe_fault(Step& st, const scenario::Fault& f) {
  st.args.push_back(Arg{"device", f.device.name + " (its netdev)", false, false, ""});
  char buf[160];
  std::snprintf(buf, sizeof buf, "loss %.3g%% delay %lluus corrupt %.3g%% duplicate %.3g%% reorder %.3g%%", f.loss,
                static_cast<unsigned long long>(f.delay_us), f.corrupt, f.duplicate, f.reorder);
  st.args.push_back(Arg{"netem", buf, false, false, ""});
  st.args.push_back(Arg{"packets", std::string("RoCEv2 (udp dport ") + util::kRoceV2UdpPort + ")", false, false,
                        "other traffic passes: ARP, the agents"});
  st.args.push_back(Arg{"root qdisc", "a kernel default, else the step fails", false, false,
                        "read first with tc qdisc show; a host's own is never replaced"});
  st.args.push_back(Arg{"during", f.during, false, false, ""});
}

}  // namespace qpo::plan
