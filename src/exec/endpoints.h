#pragma once
// The executor's QPs as the data path sees them. Every message qpo sends or receives, the
// smoke exchange, op workloads and scripts alike, goes through src/dataplane: these are the
// endpoints, receive pools and CQ access the executor hands it.
#include <infiniband/verbs.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/cq_router.h"
#include "dataplane/endpoint.h"
#include "dataplane/recv_pool.h"
#include "dataplane/stream.h"
#include "exec/run_state.h"

namespace qpo::exec {

// The MRs endpoints name, made once for the endpoints of one step (a workload's members) and
// shared by them: each PD's scenario MRs and every MR published in the exchange.
struct EndpointMrs {
  std::map<const ibv_pd*, std::shared_ptr<const dataplane::MrNames<dataplane::LocalMr>::Table>> local;
  std::shared_ptr<const dataplane::MrNames<dataplane::RemoteMr>::Table> remote;
};
EndpointMrs endpoint_mrs(const RunState& st);

// The endpoint a script workload drives: the QP, its CQs and SRQ, its PD's scenario MRs and
// every MR published in the exchange (`mrs`, or made for this endpoint alone when null), the
// peer `peer` (Plan::peer_id's space, kNoObject for none: its qpn/qkey, a UD address handle).
dataplane::Endpoint endpoint_for(RunState& st, QpState& q, plan::ObjectId peer, const EndpointMrs* mrs = nullptr);
// The same plus the executor's own slot buffer ("qpo.slots.<qp>", or the SRQ's): what the
// smoke exchange and op workloads send from and receive into.
dataplane::Endpoint own_endpoint(RunState& st, QpState& q, plan::ObjectId peer, const EndpointMrs* mrs = nullptr);
// Only the executor's slot buffers, and with `peer_slots` the peer's ("qpo.slots.<peer>", an
// RDMA WRITE's target): the smoke exchange's one message needs no other MR.
dataplane::Endpoint slots_endpoint(RunState& st, QpState& q, plan::ObjectId peer, bool peer_slots);
// The slot buffers own_endpoint adds: the QP's ("qpo.slots.<qp>": receives, and in its last
// slot what the QP sends) and where its receives land (its SRQ's "qpo.slots.<srq>", or its own).
std::string slot_mr_name(const QpState& q);
std::string receive_mr_name(const QpState& q);

// A stream that receives through the executor's own slots: the layout bring-up posted (so
// its receives count and are re-posted into the same slots) and as many kept posted as are
// posted now. Also the settings every executor stream shares (executor_stream).
void use_executor_receives(QpState& q, dataplane::StreamConfig& c);
// No CQ-room check (the validator's Q601 judged the CQs; the receives exist already), and a
// yield when idle: an executor step may run many sides on few cores.
void executor_stream(dataplane::StreamConfig& c);

// The receive pool of the QP's receive queue: its SRQ's when it has one (QPs on one SRQ share
// it), else its own. Created on first use; it lives as long as the run.
std::shared_ptr<dataplane::RecvPool> pool_of(QpState& q);
// Receives the executor posted into its slot buffer and that are still outstanding.
uint32_t bringup_outstanding(QpState& q);

// Bring-up's receives, through the QP's pool: `count` slots of its slot buffer (the last slot
// is the send buffer and never a receive).
void post_bringup_receives(QpState& q, uint32_t count);
// The SRQ `srq` (its plan id; `name` for messages): `count` slots of its buffer.
void post_srq_bringup_receives(RunState& st, plan::ObjectId srq, const std::string& name, uint32_t count);

// How the executor's thread (or a worker it starts for one side of an op workload) reads
// `q`'s CQs: one router for the run, each QP its own owner, so a completion polled off a CQ
// that several QPs share waits for its QP's reader instead of being lost.
// A QP's sends and its pool's receives have separate owners: a stream that sends on a QP
// whose CQ also takes its receives leaves those for the stream that receives.
enum class Reader { Sends, Receives };
dataplane::CqAccess access_for(RunState& st, const QpState& q, Reader reader = Reader::Sends);
// A thread that drives several QPs for a while (a script's worker) reads all of q's
// completions, its sends and its pool's receives, as `owner` (access_for of its first QP);
// route_home gives them back to q's own readers. Only while no other thread polls these CQs.
void route_to(RunState& st, const QpState& q, int owner);
void route_home(RunState& st, const QpState& q);
// Completions of `q` arriving on `cq` within settle_ms (after a move to ERR: the flushed WRs).
std::vector<ibv_wc> drain_completions(RunState& st, const QpState& q, ibv_cq* cq, int settle_ms);

}  // namespace qpo::exec
