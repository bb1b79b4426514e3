#pragma once
// A Plan is the ordered list of verbs calls each host will make for a validated scenario.
// `qpo plan` prints it; the executor runs it. Values that only exist after the out-of-band
// exchange (peer QPN, GID, PSN, rkey) are marked runtime and shown as such.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "check/checked.h"
#include "plan/attr_template.h"
#include "plan/bringup_schedule.h"
#include "plan/modify_plan.h"
#include "util/packet_event_names.h"
#include "util/wire_facts.h"
#include "plan/cm_end.h"
#include "plan/external_peer.h"
#include "plan/object_facts.h"
#include "plan/script_turn.h"
#include "plan/qp_id.h"
#include "plan/setup_object.h"
#include "plan/step_kinds.h"
#include "plan/device_needs.h"
#include "plan/text.h"
#include "plan/workload_run.h"
#include "scenario/model.h"
#include "spec/rules.h"
#include "util/json_writer.h"
#include "util/shared_list.h"

namespace qpo::plan {

struct Arg {
  std::string name;         // "path_mtu", "ah_attr.grh.dgid", "cqe"
  std::string value;        // "IBV_MTU_1024", "0x11111111", "peer"
  bool runtime = false;     // known only at run time (after exchange, or from the device)
  bool from_default = false;
  std::string note;         // "known after exchange", "min of both ports' active_mtu"
  bool operator==(const Arg&) const = default;
};
// An argument as the planners write one: a value known now, or (runtime) one the run resolves.
inline Arg arg(std::string name, std::string value, std::string note = "", bool runtime = false) {
  return Arg{std::move(name), std::move(value), runtime, false, std::move(note)};
}

enum class Phase : uint8_t { Setup, BringUp, Exchange, Traffic, Transitions, Teardown };
const char* phase_name(Phase p);


// One smoke exchange: a SEND (and an RDMA WRITE where the receiver grants it), data checked.
struct SmokePair {
  std::string sender, receiver;
  bool rdma_write = false;
  uint32_t seed = 0;  // the data pattern
  // By id (plan/qp_id.h): the sender's, and the receiver's as a peer (Plan::peer_id: a QP, or
  // an external peer); kNoObject where the step names none.
  QpId sender_id = kNoQp;
  ObjectId receiver_id = kNoObject;
};

// What few steps carry, apart from Step: at 100,000 QPs a plan has a million steps, and these
// fields in each of them were most of its memory. Read through Step::extra().
struct StepExtra {
  SmokePair smoke;            // SmokeSend, SmokeReceive; CreateAh: sender -> receiver
  int workload = -1;          // PrepareData, Workload, Verify: Plan::workloads[workload]
  // PrepareData, Workload, Verify: the pattern the workload's bytes follow, and whether the
  // responder writes it into the remote MR first (a read of an MR nothing wrote yet).
  uint32_t data_seed = 0;
  bool fill_remote = false;
  uint64_t pause_ms = 0;      // Pause
  // WaitEvent, ForbidEvent: the event (util/async_event_names.h) about `object`, and how long
  // to wait (0: the run's --timeout-ms for WaitEvent; only what already came for ForbidEvent).
  std::string event;
  int event_value = -1;
  uint64_t within_ms = 0;
  uint32_t srq_limit = 0;     // ModifySrq
  bool link_up = false;       // SetLink: up (else down)
  // AttachMcast, CreateMcastAh, CmJoinMcast: the multicast group, Plan::mcast_groups[mcast];
  // the member (AttachMcast) or the sender (CreateMcastAh) is smoke.receiver / smoke.sender.
  int mcast = -1;
  int cm_end = -1;            // Cm* steps (and a CM QP's receives): Plan::cm_ends[cm_end]
  bool cm_listener = false;   // a Cm* step about the end's listener id, not the QP's own
  int external = -1;          // ExternalExchange, ExternalReply: Plan::externals[external]
  ScriptTurn script_turn = ScriptTurn::Beside;  // Workload of a script: when it runs in its stage
};

// 184 bytes: the texts every step of a kind shares are plan::Text, the rare fields StepExtra.
struct Step {
  int index = 0;            // 1-based within the host
  StepKind kind = StepKind::OpenDevice;
  Phase phase = Phase::Setup;
  bool has_mask = false;    // ibv_modify_qp (here: it fits beside kind and phase)
  spec::QpState target = spec::QpState::RESET;  // Modify, CmModify: to_state as a value (in the padding)
  Text verb;                // ibv_open_device, ibv_modify_qp, ..., or qpo's own (exchange, barrier)
  std::string object;       // scenario name of the object it creates or acts on
  util::SharedList<Arg> args;  // steps alike (the members of a counted group) share one list
  // ibv_modify_qp only:
  uint32_t modify = kNoModify;  // its lowered transition: Plan::modifies[modify]
  static constexpr uint32_t kNoModify = ~0u;
  // A setup step that makes an object: what it makes, Plan::setup_objects[setup] (CreateQp:
  // none, its QP is Plan::qps[id]). In the padding before `mask`: no bigger a step.
  uint32_t setup = kNoSetup;
  static constexpr uint32_t kNoSetup = ~0u;
  spec::Mask mask = 0;
  Text from_state, to_state;
  Text prediction;          // "ok", "EINVAL (expected)", "EINVAL"
  Text expect;              // expected errno name, empty for success
  uint32_t count = 0;         // PostRecv, PostSrqRecv: how many receives bring-up posts; RegSlots
                              // of a QP: the bytes of one receive slot
  // After bring-up every step belongs to a stage: the hosts meet (Plan::stages) once all of
  // a stage's steps ran on every host.
  int stage = -1;
  // Its object's id within the object's kind (plan/qp_id.h: a QP's for a step on a QP, an
  // SRQ's for one on an SRQ, ...; kNoObject for objects exec keeps by name): exec's records
  // are indexed by it. In the padding after `stage`: no bigger a step.
  ObjectId id = kNoObject;

  const StepExtra& extra() const { return extra_ ? *extra_ : no_extra(); }
  StepExtra& edit_extra();  // this step's own (made, or copied first when another step shares it)
  void share_extra(std::shared_ptr<StepExtra> extra) { extra_ = std::move(extra); }  // steps alike (a smoke pair's ends)

 private:
  static const StepExtra& no_extra();
  std::shared_ptr<StepExtra> extra_;
};

// A `faults:` entry, lowered: tc netem under a device's netdev (exec/faults.h) for a window
// ("traffic": the workloads' stages; "all": the whole run).
struct NetemFault {
  std::string name, device, during;
  ObjectId device_id = kNoObject;  // its device's id (a host applies the faults on its own)
  double loss = 0, corrupt = 0, duplicate = 0, reorder = 0;  // percent
  uint64_t delay_us = 0;
};

// A `wire: events:` entry, lowered: the rule qpo's BPF program gets on the receiving host
// (exec/packet_events.cpp fills in the receiving QP's number and netdev at run time).
struct PacketEventPlan {
  std::string name;
  std::string qp, receiver;        // the sending QP and its peer that receives
  // Where it acts: the receiving host's device (its netdev's ingress), or for a delay the
  // sending host's device (its netdev's egress, through a netem band).
  std::string host, device;
  QpId qp_id = kNoQp, receiver_id = kNoQp;  // by id: the directory's keys, this host's records
  ObjectId device_id = kNoObject;
  bool at_sender = false;
  uint64_t delay_us = 0;
  util::EventPackets packets = util::EventPackets::Requests;
  bool by_psn = true;              // psn: value is the relative PSN; else nth: the Nth counted packet
  uint32_t value = 0;
  uint32_t transmission = 1;       // by_psn: 0 every, k the kth
  util::EventAction action = util::EventAction::Drop;
};
// "drop the first transmission of the request at relative PSN 4 from qa to qb"
std::string describe(const PacketEventPlan& e);

// A `wire: expect:` entry for one QP (a group's entry gives one per member): read from the
// capture of the QP's host at its CaptureEnd step (exec/wire_capture.cpp).
struct WireExpectPlan {
  util::WireFact fact = util::WireFact::Requests;
  uint64_t min = 0, max = UINT64_MAX;  // a count's bounds (a flag's: 0 or 1)
  double factor = 0;                   // a time's: within this factor of the reference
  std::string text;                    // as written: "1", ">= 1", "2..4", "true", "4x"
  std::string qp, peer, host, device;
  QpId qp_id = kNoQp;                // by id: the directory's keys, this host's records
  ObjectId peer_id = kNoObject, device_id = kNoObject;
};
// "naks 1", "retransmissions >= 1", "go_back_n true", "retransmit_timeout within 4x"
std::string describe(const WireExpectPlan& e);

// A `mcast_groups:` entry, lowered: what exec attaches, joins and sends to.
struct McastGroup {
  std::string name;
  std::string gid_text;   // as written
  uint8_t gid[16] = {};   // the GID (IPv4: ::ffff:a.b.c.d)
  bool ipv4 = false;      // written as an IPv4 address (rdma_cm joins it as one)
  uint32_t qkey = 0;      // what senders put in the work request
  uint32_t mlid = 0;      // the multicast LID (InfiniBand; RoCE ignores it)
  bool cm_join = false;   // `join: rdma_cm`: through rdma_join_multicast, else verbs attach
};

struct HostPlan {
  std::string host, address;
  std::vector<Step> steps;
  BringUpSchedule bringup;  // its QP creates and bring-up steps as chains per QP (plan/bringup_schedule.h)
};

struct Plan {
  std::string scenario, file;
  std::vector<HostPlan> hosts;
  std::vector<std::string> active_hosts;  // scenario::Scenario::active_hosts(): a session each
  std::vector<std::string> stages;  // after bring-up, in order: every host meets at each
  // Per host, the address handles the timeline creates, in creation order (teardown: reverse).
  std::map<std::string, std::vector<std::string>> address_handles;
  // Every Modify step's lowered transition (Step::modify), once per distinct transition: the
  // members of a counted group share theirs.
  std::vector<ModifyPlan> modifies;
  const ModifyPlan& modify_of(const Step& s) const { return modifies.at(s.modify); }
  const AttrTemplate& attrs_of(const Step& s) const { return modify_of(s).attrs; }
  DeviceNeeds needs;  // what the devices must be able to do (plan/device_needs.h)
  std::vector<NetemFault> faults;  // every host's; a host applies those on its devices
  std::vector<PacketEventPlan> packet_events;  // every host's; a host arms those it receives
  std::vector<WireExpectPlan> wire_expects;    // every host's; a host checks its own QPs'
  // Every QP's `cm:`, lowered (plan/cm_end.h), in file order.
  std::vector<CmEnd> cm_ends;
  const CmEnd* cm_end_of(const Step& s) const {
    int i = s.extra().cm_end;
    return i >= 0 && static_cast<size_t>(i) < cm_ends.size() ? &cm_ends[static_cast<size_t>(i)] : nullptr;
  }
  // Every `externals:` entry that a QP connects to, lowered (plan/external_peer.h).
  std::vector<ExternalPeer> externals;
  // What each setup step makes (Step::setup), so exec creates it without the scenario.
  std::vector<SetupObject> setup_objects;
  const SetupObject& setup_of(const Step& s) const { return setup_objects.at(s.setup); }
  // Every device and QP of the scenario, by id (plan/object_facts.h): what exec makes them
  // from and names them by. A CreateQp step's QP is qps[Step::id].
  std::vector<DeviceFacts> devices;
  std::vector<QpFacts> qps;
  // A peer's id: a QP's id, or qp_count() + an external peer's index in `externals` (the
  // space of QpFacts::peer, and the exchange's Directory keys); kNoObject when `name` is neither.
  ObjectId peer_id(const std::string& name) const;
  // The name of peer id `peer` (a QP or an external peer); "" when it is neither.
  const std::string& peer_name(ObjectId peer) const;
  const std::string& peer_name(const QpFacts& q) const { return peer_name(q.peer); }
  const ExternalPeer* external(const std::string& name) const;
  const ExternalPeer* external_of(ObjectId peer) const;  // nullptr: `peer` is no external peer's id
  // Every workload the timeline runs, lowered (plan/workload_run.h), in the order first run.
  std::vector<WorkloadRun> workloads;
  const WorkloadRun& workload_of(const Step& s) const { return workloads.at(static_cast<size_t>(s.extra().workload)); }
  // The memory windows as checked, each with the host of its PD (the bind's publish names it).
  // windows[i] is the window of id i (ObjectKind::Mw), as MW steps' Step::id say.
  struct Window {
    std::string name;
    int type = 2;                     // 1 or 2
    uint64_t offset = 0, length = 0;  // in its MR (length resolved by the loader)
    uint32_t access = 0;              // IBV_ACCESS_* it grants
    std::string mr_name, bind_qp_name;
    std::string host;
    ObjectId pd = kNoObject, mr = kNoObject, bind_qp = kNoObject;  // its PD's id, its MR's, its bind QP's
  };
  std::vector<Window> windows;
  const Window& window_of(const Step& s) const { return windows.at(s.id); }
  // The multicast groups, lowered (GID, MLID, qkey, join); their members are the steps'.
  std::vector<McastGroup> mcast_groups;
  const McastGroup* mcast_group(const std::string& name) const;
  const McastGroup* mcast_group_at(int index) const {  // nullptr: no group has it
    return index >= 0 && static_cast<size_t>(index) < mcast_groups.size() ? &mcast_groups[static_cast<size_t>(index)] : nullptr;
  }
  // The groups' places by name (the planner fills it): a lookup per step, not a scan.
  std::unordered_map<std::string, size_t> mcast_group_index;
  size_t step_count() const;
  // The scenario's devices, PDs, CQs, SRQs, XRCDs and QPs by name, a table per kind (plan/qp_id.h:
  // a device's default PD has the device's name).
  std::array<std::unordered_map<std::string, ObjectId>, kObjectKinds> object_index;
  // The same, the other way: each kind's names by id (a QP's is in its Plan::qps entry).
  std::array<std::vector<std::string>, kObjectKinds> object_names;
  // The name of object `id` of kind `k`; "" when there is none.
  const std::string& name_of(ObjectKind k, ObjectId id) const {
    static const std::string none;
    if (k == ObjectKind::Qp) return id < qps.size() ? qps[id].name : none;
    const auto& names = object_names[static_cast<size_t>(k)];
    return id < names.size() ? names[id] : none;
  }
  // The id of the object `name` of kind `k`; kNoObject when no object of that kind has it.
  ObjectId id_of(ObjectKind k, const std::string& name) const {
    const auto& index = object_index[static_cast<size_t>(k)];
    auto it = index.find(name);
    return it == index.end() ? kNoObject : it->second;
  }
  QpId qp_id(const std::string& name) const { return id_of(ObjectKind::Qp, name); }
  size_t count_of(ObjectKind k) const { return object_index[static_cast<size_t>(k)].size(); }
  size_t qp_count() const { return count_of(ObjectKind::Qp); }
};

struct PlanOptions {
  bool smoke = true;  // the smoke exchanges of the default order (`qpo run --no-smoke` drops them)
  bool capture = false;  // each host records its RoCEv2 packets (`qpo run --capture DIR`)
};
// The planner consumes only a checked model (check::validate made it).
Plan build_plan(const check::Checked& checked, const PlanOptions& o = {});

// "GROUP:QP": a multicast attachment's name (its attach and detach steps, the run's resource).
std::string mcast_attachment_name(const std::string& group, const std::string& qp);
std::string mcast_cm_channel_name(const std::string& host);  // "qpo.cm.HOST.mcast"
// The QPs that send to multicast group `group` (its workloads' `qp:`), once each, in file order.
std::vector<std::string> mcast_senders(const scenario::Scenario& s, const std::string& group);

// Human-readable, one line per call; masks as IBV_QP_* names and hex.
std::string render_text(const Plan& p);
void render_json(util::JsonWriter& w, const Plan& p);

// How a value is spelled in plans: enum names, flag lists, hex PSNs and qkeys.
Arg describe_attr(const scenario::Attr& a, const std::string& prefix = "");
std::vector<Arg> describe_attr_tree(const scenario::Attr& a);

}  // namespace qpo::plan
