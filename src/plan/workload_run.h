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

struct WorkloadRun {
  scenario::Workload spec;    // the checked entry: op, QPs and MRs by name, size, offset, thresholds
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
