#pragma once
// Everything the executor created and learned while running one scenario. Resources are
// owned in creation order by `owned`; teardown releases them in reverse.
#include <infiniband/verbs.h>

#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/cq_router.h"
#include "exec/event_journal.h"
#include "exec/exchange.h"
#include "exec/id_table.h"
#include "report/run_report.h"
#include "plan/object_facts.h"
#include "verbs/memory_window.h"
#include "verbs/resources.h"

namespace qpo::dataplane { class RecvPool; }
namespace qpo::plan { struct Plan; }

namespace qpo::exec {

struct DeviceState {
  verbs::ContextResource* res = nullptr;
  const plan::DeviceFacts* facts = nullptr;  // its lowered entry (Plan::devices)
  int gid_index = 0;
  ibv_gid gid{};
  verbs::Context& ctx() const { return res->ctx(); }
};

struct SrqState;

// Per-QP facts published in the out-of-band exchange (here: in-process).
struct QpState {
  const plan::QpFacts* facts = nullptr;  // its lowered entry (Plan::qps): name, type, caps, peer
  verbs::Qp* qp = nullptr;
  DeviceState* device = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* send_cq = nullptr;
  ibv_cq* recv_cq = nullptr;
  ibv_srq* srq = nullptr;
  // Its objects' records, resolved when it is prepared (exec/setup.cpp prepare_qp).
  SrqState* srq_state = nullptr;           // its SRQ's, when it has one
  verbs::Cq* send_cq_res = nullptr;        // its send CQ (extended or not)
  verbs::Pd* pd_res = nullptr;             // its `pd:` (an XRC receive QP's too, which has no ibv_pd of its own)
  ibv_comp_channel* send_channel = nullptr, *recv_channel = nullptr;  // its CQs' completion channels
  std::string host;
  // This QP's number among the host's QPs, in creation order: its CQ router owner ids and
  // its window work requests' ids (unique per host is all they need).
  uint32_t ordinal = 0;
  uint32_t sq_psn = 0;          // the PSN this QP sends from (literal or random), fixed for the run
  uint32_t qkey = 0x11111111;   // UD: the qkey set at INIT (what senders must use)
  spec::QpState state = spec::QpState::RESET;
  // Receive slots for the smoke exchange and send workloads.
  verbs::Mr* slots = nullptr;
  uint32_t slot_size = 0;
  uint32_t slot_count = 0;
  bool went_through_reset = false;
  plan::QpId id = plan::kNoQp;  // its id in the plan (RunState::qps)
  bool routed = false;          // its CQs are assigned in RunState::router (endpoints.h access_for)
  ibv_qp_cap asked_cap{}, granted_cap{};  // the create's request and what the device granted
  // Every receive posted on this QP's own RQ (not an SRQ's: SrqState has that pool): bring-up's
  // into `slots`, the smoke's and op workloads' re-posts, a script's into its MRs. It lives as
  // long as the run, not the process: its buffers point into this run's MRs, and ERR/RESET
  // must be able to tell it that its receives are gone.
  std::shared_ptr<dataplane::RecvPool> recv_pool;
};

struct SrqState {
  verbs::Srq* srq = nullptr;
  verbs::Mr* slots = nullptr;
  uint32_t slot_size = 0, slot_count = 0;
  // Every receive posted on the SRQ (bring-up's, the executor's re-posts, scripts'), shared by
  // the QPs on it; a QP moving to ERR leaves it alone (SRQ receives are not flushed with the QP).
  std::shared_ptr<dataplane::RecvPool> recv_pool;
};

// A memory window on this host (exec/memory_windows.h): its rkey as the last bind left it.
struct MwState {
  verbs::Mw* mw = nullptr;
  uint32_t rkey = 0;
  bool bound = false;
};

struct CmHost;  // rdma_cm: this host's event channel and ids (cm_steps.cpp)
class ExternalExchanges;  // stock tools' connections (external_exchange.h)
struct McastCm;  // rdma_cm multicast joins (multicast_cm.h)

// One host's resource table: only the objects on `host` live here, by plan id; everything
// about other hosts' objects comes from `dir`, filled by the exchange. What the steps did is
// not here: each handler writes its outcome into the step log it is given (report::RunReport,
// a line per plan step), beside this table (docs/architecture.md section 2).
struct RunState {
  const plan::Plan* plan = nullptr;  // what this run runs: its lowered facts (objects, workloads, groups)
  std::string host;
  Directory dir;
  std::vector<std::unique_ptr<verbs::Resource>> owned;  // creation order
  // This host's objects by plan id (plan/qp_id.h; Plan::id_of where a name comes in).
  IdTable<DeviceState> devices;
  IdTable<verbs::Pd*> pds;
  IdTable<verbs::Mr*> mrs;  // the scenario's MRs (slot buffers live with their QP or SRQ)
  IdTable<verbs::CompChannel*> channels;  // by the id of the CQ it serves
  IdTable<verbs::Cq*> cqs;
  IdTable<SrqState> srqs;
  IdTable<verbs::Xrcd*> xrcds;
  IdTable<QpState> qps;  // this host's QPs by plan id (Step::qp, Plan::qp_id)
  // Address handles, made once each: by (sending QP, peer QP) ids (peer_ah; an external peer's
  // id is Plan::qp_count() + its index in Plan::externals), by (sending QP, multicast group's
  // index in Plan::mcast_groups) (mcast_ah). Named "qpo.ah.<from>-><to>".
  std::map<std::pair<plan::ObjectId, plan::ObjectId>, verbs::Ah*> peer_ahs, mcast_ahs;
  IdTable<MwState> mws;
  std::vector<plan::ObjectId> mws_bound;  // bound in the current stage, published at its PublishMw step
  // How every reader of this host's CQs shares them (endpoints.h access_for).
  dataplane::CqRouter router;
  // The run's channel, for script workloads that meet other hosts (workload_meeting.h).
  Channel* channel = nullptr;
  // A workload's meeting broke (a host lost, or hosts out of step): the other hosts have
  // left the channel, so this one must not wait at the next stage either.
  bool channel_broken = false;
  // The asynchronous events read so far (async_events.h). Mutable: reading the devices' fds
  // fills it, also when a failure message (which sees a const state) explains a timeout.
  mutable EventJournal events;
  // Step details by (from state, to state, attr_mask): built once, reused by every QP.
  std::map<std::tuple<int, int, uint64_t>, std::string> mask_details;
  std::shared_ptr<CmHost> cm;  // made by the first rdma_cm step
  std::shared_ptr<McastCm> mcast_cm;  // made by the CmMcastChannel step
  // The session's external exchanges: a workload takes a perftest conversation on from them.
  ExternalExchanges* externals = nullptr;

  // This host's QP `id`; throws std::out_of_range ("QP 'x' is not on host a") when it is not here.
  QpState& qp_here(plan::QpId id);

  template <typename T, typename... Args>
  T* own(Args&&... args) {
    auto p = std::make_unique<T>(std::forward<Args>(args)...);
    T* raw = p.get();
    owned.push_back(std::move(p));
    return raw;
  }
};

}  // namespace qpo::exec
