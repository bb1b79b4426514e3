#pragma once
// A `workloads:` entry, lowered (issue 31): what exec needs to run its Workload, PrepareData and
// Verify steps, resolved from the checked model once, by the planner, so exec reads no scenario
// to run it. Step::extra().workload indexes Plan::workloads.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lua/workload_spec.h"
#include "plan/qp_id.h"
#include "scenario/model.h"
#include "scenario/script_qps.h"
#include "util/ops.h"
#include "util/threshold.h"

namespace qpo::plan {

struct Plan;

// A QP a script's worker drives, lowered: exec makes its endpoint and clears its receives by id.
struct ScriptQp {
  std::string name;           // as the script names it (w.qp, the endpoints' key)
  QpId id = kNoQp;
  // Whom it talks to in this workload (Plan::peer_id's space: a QP, or an external peer): its
  // connect:, else an initiator connected to it; kNoObject for nobody.
  ObjectId peer = kNoObject;
  bool owns_receives = false;  // its receive queue is the scripts' (scenario/script_qps.h)
};

// A workload's parameters as it runs with them: resolved by the planner (defaults applied,
// names checked), read by exec instead of the scenario's entry.
struct WorkloadParams {
  std::string name;
  std::string script;                 // builtin:name or a path; "" = the op loop
  util::Op op = util::Op::Send;       // what the op loop posts (a script's is unused)
  std::string qp;                     // `qp:`, the first initiator
  std::vector<std::string> more_qps;  // a script's further initiators (`qp: [a, b, c]`)
  std::string local_mr, remote_mr;    // "" = not given: the QP's slots; no remote memory
  uint64_t size = 0, offset = 0, iterations = 0;
  std::string expect_status;          // the IBV_WC_* status it expects its sends to fail with; "" = none
  std::string group;                  // written on a QP group: the name written
  uint32_t workers = 0;               // `workers:`; 0 = the runner's default
  std::vector<int64_t> pin;           // `pin:`: worker K on pin[K % size]
  std::string mcast;                  // a UD send to this multicast group; "" = none
  std::string invalidate;             // the window a SEND_WITH_INV invalidates; "" = none
  std::vector<util::Threshold> thresholds;
  bool is_script() const { return !script.empty(); }
  // The op as messages name it, in the scenario's spelling ("rdma_write"); "" for a script.
  const char* op_spelling() const { return is_script() ? "" : util::op_info(op).scenario; }
};

// The planner's copy of a checked entry.
WorkloadParams params_of(const scenario::Workload& w);

struct WorkloadRun {
  WorkloadParams params;
  std::string reporter_host;  // the host of its `qp:`: a script's results and verdict are recorded there
  // Who receives what an op workload sends: its qp's peer (connect:), or its multicast group's
  // members, in file order. Empty when the peer is external.
  std::vector<std::string> receivers;
  QpId qp = kNoQp;                  // its `qp:` (exec's records are kept by id)
  std::vector<QpId> receiver_ids;   // `receivers`, in the same order
  // Its qp's peer is outside the scenario (Plan::external(external)): the workload is that
  // tool's conversation (a ping-pong of SENDs), on the qp alone.
  std::string external;
  ObjectId external_peer = kNoObject;  // its id (Plan::external_of)
  int mcast_group = -1;                // its `mcast:` group: Plan::mcast_groups[mcast_group]
  // remote_mr names a memory window: its bytes are at `remote_offset` in the MR behind it (the
  // window's offset plus the workload's own), and a deliberate overrun is the responder's to refuse.
  bool remote_is_window = false;
  uint64_t remote_offset = 0;  // where the workload's bytes are in the remote MR (or the MR behind it)
  ObjectId invalidate_mw = kNoObject;  // its `invalidate:` window's id (a SEND_WITH_INV's)
  // Script workloads: the script's spec (args resolved, every worker on every host), and each
  // worker's QPs (script.workers' order, each worker's QPs in its order) lowered.
  lua::WorkloadSpec script;
  std::vector<std::vector<ScriptQp>> worker_qps;
};

// Lowers `w` of `s` (checked: its names resolve) into `p` (its objects' and peers' ids);
// `receives` says which QPs scripts own.
WorkloadRun lower_workload(const scenario::Scenario& s, const Plan& p, const scenario::Workload& w,
                           const scenario::BringupReceives& receives);

}  // namespace qpo::plan
