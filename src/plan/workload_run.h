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
  // remote_mr names a memory window: its bytes are at `remote_offset` in the MR behind it (the
  // window's offset plus the workload's own), and a deliberate overrun is the responder's to refuse.
  bool remote_is_window = false;
  uint64_t remote_offset = 0;  // where the workload's bytes are in the remote MR (or the MR behind it)
  ObjectId invalidate_mw = kNoObject;  // its `invalidate:` window's id (a SEND_WITH_INV's)
  // Script workloads: the script's spec (args resolved, every worker on every host), whom each of
  // its QPs talks to (its connect:, else an initiator connected to it), and the QPs whose
  // receive queues scripts own (scenario/script_qps.h).
  lua::WorkloadSpec script;
  std::map<std::string, std::string> peer_of;
  std::set<std::string> script_receives;
};

// Lowers `w` of `s` (checked: its names resolve); `receives` says which QPs scripts own.
WorkloadRun lower_workload(const scenario::Scenario& s, const scenario::Workload& w,
                           const scenario::BringupReceives& receives);

}  // namespace qpo::plan
