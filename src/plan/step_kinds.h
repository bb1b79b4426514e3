#pragma once
// The kinds of plan step and their names (`qpo plan --format json`'s "kind"), in one place: a
// new kind is a line in the enum and a row in the table below it, in the same order (checked
// when this header compiles). kLastStepKind sizes the table: a kind added at the enum's end
// moves it.
#include <array>
#include <cstddef>
#include <cstdint>

namespace qpo::plan {

// What a step does; the executor dispatches on this, never on the verb's text.
enum class StepKind : uint8_t {
  OpenDevice, QueryPort, QueryGid, AllocPd, OpenXrcd, RegMr, CreateCompChannel, CreateCq, CreateSrq, CreateQp,
  RegSlots,       // ibv_reg_mr of qpo's own buffer for a QP's (or SRQ's) receives and smoke sends
  CreateAh,       // a UD QP's address handle for a peer ("qpo.ah.FROM->TO"), before its first send
  Fault,          // tc netem under a device
  Modify,         // ibv_modify_qp (Plan::modify_of)
  PostRecv, PostSrqRecv,
  Publish, Resolve,  // the out-of-band exchange
  Barrier,        // every host meets here
  FlushPoll,      // after ->ERR: every outstanding receive completes with IBV_WC_WR_FLUSH_ERR
  RepostRecv,     // after RESET->INIT on a recovery path: the receive queue is empty again
  WaitEvent,      // an asynchronous event that must come: IBV_EVENT_SQ_DRAINED after RTS->SQD with
                  // en_sqd_async_notify, or a timeline `event:` step
  SmokeSend, SmokeReceive,
  PrepareData,    // a workload's responder zeroes (or fills) the remote MR before it runs
  Workload,       // an op loop or a script, with the other workloads of its stage
  Verify,         // the bytes a workload moved, checked where they landed
  ReadState,      // ibv_query_qp after an expected completion error
  Pause,
  Destroy,
  ModifySrq,      // ibv_modify_srq(IBV_SRQ_LIMIT): arms the SRQ limit event (srq_limit)
  ForbidEvent,    // an asynchronous event that must not have come (nor come within within_ms)
  AllocMw,        // ibv_alloc_mw (setup)
  BindMw,         // type 1: ibv_bind_mw; type 2: IBV_WR_BIND_MW on the window's bind QP; waits for its completion
  InvalidateMw,   // type 2: IBV_WR_LOCAL_INV; type 1: ibv_bind_mw with length 0 (unbind)
  PublishMw,      // every host: the windows just bound, their addr/length/rkey to every host (a meeting)
  AttachMcast,    // ibv_attach_mcast of a UD QP to a multicast group (object "GROUP:QP"); on RoCE
                  // also the IP group's join on the device's netdev. ibv_detach_mcast is a Destroy step
  CreateMcastAh,  // a UD sender's address handle to a multicast group ("qpo.ah.QP->GROUP")
  // rdma_cm (plan/cm_planner.h): one event channel per host, an id per connection end; every
  // wait for a CM event (`event`) has the phase timeout.
  CmChannel,      // rdma_create_event_channel
  CmCreateId,     // rdma_create_id (RDMA_PS_TCP for RC, RDMA_PS_UDP for UD); UC: rdma_create_ep + rdma_migrate_id
                  // (an RDMA_PS_IB id of type UC, bound)
  CmListen,       // rdma_bind_addr + rdma_listen (passive; UC: rdma_listen, bound already)
  CmResolveAddr,  // rdma_resolve_addr, then RDMA_CM_EVENT_ADDR_RESOLVED (active)
  CmResolveRoute, // rdma_resolve_route, then RDMA_CM_EVENT_ROUTE_RESOLVED (active)
  CmModify,       // rdma_init_qp_attr + ibv_modify_qp to to_state: the CM's attributes and mask
  CmConnect,      // rdma_connect, then CONNECT_RESPONSE (UD: ESTABLISHED) or the expected event
  CmWaitRequest,  // RDMA_CM_EVENT_CONNECT_REQUEST on the listener: the connection's id (passive)
  CmAccept,       // rdma_accept (RC/UC: then RDMA_CM_EVENT_ESTABLISHED)
  CmReject,       // rdma_reject with private data
  CmEstablish,    // rdma_establish after the active side's RTS (RC/UC)
  CmDisconnect,   // rdma_disconnect (active) / the peer's DISCONNECTED (passive)
  // Multicast groups with `join: rdma_cm` (exec/multicast_cm.h), in the attach stage: a channel
  // per host, then per member and sender (object "GROUP:QP") rdma_create_id(RDMA_PS_UDP) +
  // rdma_bind_addr(the device's IP) + rdma_join_multicast (a sender: send-only full member),
  // then RDMA_CM_EVENT_MULTICAST_JOIN: the group's GID, MLID and qkey for AttachMcast and
  // CreateMcastAh. rdma_leave_multicast and rdma_destroy_id are Destroy steps.
  CmMcastChannel,  // rdma_create_event_channel ("qpo.cm.HOST.mcast")
  CmJoinMcast,     // the join, and its event
  SetLink,         // `ip link set dev NETDEV down|up` under a device (object); args[0] "state"
  PacketEvents,    // a host's packet events armed on its netdevs' ingress (tc BPF), with the first workload stage
  PacketEventsEnd, // removed (first teardown step), each event's matches reported
  Capture,         // the host's RoCEv2 packets into a pcap per netdev of its devices (qpo run --capture)
  CaptureEnd,      // the capture stops (first teardown step): files closed, packets counted
  // An external peer's own out-of-band exchange (plan/external_peer.h), for the QP (object)
  // that connects to it: its values fill the directory entry the QP's RTR reads. qpo connects:
  // the whole exchange, before RTR. qpo listens: the tool's message before RTR (ExternalExchange),
  // qpo's answer after RTS (ExternalReply), as ibv_rc_pingpong's server does.
  ExternalExchange,
  ExternalReply,
};


inline constexpr StepKind kLastStepKind = StepKind::ExternalReply;

struct StepKindName {
  StepKind kind;
  const char* name;
};

inline constexpr std::array<StepKindName, static_cast<size_t>(kLastStepKind) + 1> kStepKinds = {{
    {StepKind::OpenDevice, "open_device"},
    {StepKind::QueryPort, "query_port"},
    {StepKind::QueryGid, "query_gid"},
    {StepKind::AllocPd, "alloc_pd"},
    {StepKind::OpenXrcd, "open_xrcd"},
    {StepKind::RegMr, "reg_mr"},
    {StepKind::CreateCompChannel, "create_comp_channel"},
    {StepKind::CreateCq, "create_cq"},
    {StepKind::CreateSrq, "create_srq"},
    {StepKind::CreateQp, "create_qp"},
    {StepKind::RegSlots, "reg_slots"},
    {StepKind::CreateAh, "create_ah"},
    {StepKind::Fault, "fault"},
    {StepKind::Modify, "modify"},
    {StepKind::PostRecv, "post_recv"},
    {StepKind::PostSrqRecv, "post_srq_recv"},
    {StepKind::Publish, "publish"},
    {StepKind::Resolve, "resolve"},
    {StepKind::Barrier, "barrier"},
    {StepKind::FlushPoll, "flush_poll"},
    {StepKind::RepostRecv, "repost_recv"},
    {StepKind::WaitEvent, "wait_event"},
    {StepKind::SmokeSend, "smoke_send"},
    {StepKind::SmokeReceive, "smoke_receive"},
    {StepKind::PrepareData, "prepare_data"},
    {StepKind::Workload, "workload"},
    {StepKind::Verify, "verify"},
    {StepKind::ReadState, "read_state"},
    {StepKind::Pause, "pause"},
    {StepKind::Destroy, "destroy"},
    {StepKind::ModifySrq, "modify_srq"},
    {StepKind::ForbidEvent, "forbid_event"},
    {StepKind::AllocMw, "alloc_mw"},
    {StepKind::BindMw, "bind_mw"},
    {StepKind::InvalidateMw, "invalidate_mw"},
    {StepKind::PublishMw, "publish_mw"},
    {StepKind::AttachMcast, "attach_mcast"},
    {StepKind::CreateMcastAh, "create_mcast_ah"},
    {StepKind::CmChannel, "cm_channel"},
    {StepKind::CmCreateId, "cm_create_id"},
    {StepKind::CmListen, "cm_listen"},
    {StepKind::CmResolveAddr, "cm_resolve_addr"},
    {StepKind::CmResolveRoute, "cm_resolve_route"},
    {StepKind::CmModify, "cm_modify"},
    {StepKind::CmConnect, "cm_connect"},
    {StepKind::CmWaitRequest, "cm_wait_request"},
    {StepKind::CmAccept, "cm_accept"},
    {StepKind::CmReject, "cm_reject"},
    {StepKind::CmEstablish, "cm_establish"},
    {StepKind::CmDisconnect, "cm_disconnect"},
    {StepKind::CmMcastChannel, "cm_mcast_channel"},
    {StepKind::CmJoinMcast, "cm_join_mcast"},
    {StepKind::SetLink, "set_link"},
    {StepKind::PacketEvents, "packet_events"},
    {StepKind::PacketEventsEnd, "packet_events_end"},
    {StepKind::Capture, "capture"},
    {StepKind::CaptureEnd, "capture_end"},
    {StepKind::ExternalExchange, "external_exchange"},
    {StepKind::ExternalReply, "external_reply"},
}};

// Every kind has its row, at its own place.
constexpr bool step_kinds_in_order() {
  for (size_t i = 0; i < kStepKinds.size(); ++i)
    if (static_cast<size_t>(kStepKinds[i].kind) != i || kStepKinds[i].name == nullptr) return false;
  return true;
}
static_assert(step_kinds_in_order(), "kStepKinds: one row per StepKind, in the enum's order");

constexpr const char* step_kind_name(StepKind k) {  // "modify", "smoke_send", ...
  auto i = static_cast<size_t>(k);
  return i < kStepKinds.size() ? kStepKinds[i].name : "?";
}

}  // namespace qpo::plan
