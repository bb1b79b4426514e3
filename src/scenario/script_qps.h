#pragma once
// Which QPs script workloads drive, and what that means for the receives posted at bring-up.
// The executor fills every RQ (and SRQ) for the smoke exchange and the op workloads; a
// script's data path keeps its own receives posted (into the script's MRs, so it can check
// what arrives) and needs the room. So a QP whose receives only scripts use gets just what
// the smoke exchange needs. The planner shows that count and the executor posts it.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "scenario/model.h"

namespace qpo::scenario {

// Who owns each QP's receive queue, and how many receives bring-up posts on each QP and SRQ,
// for a whole scenario: computed once, in one pass over its QPs and workloads (asked QP by QP,
// each answer was a scan of all QPs and workloads: quadratic at 10,000 QPs).
class BringupReceives {
 public:
  explicit BringupReceives(const Scenario& s);
  // True when script workloads use this QP (as an initiator or a target) and no op workload
  // uses it or its peer: then the data path owns its receive queue.
  bool scripts_own(const std::string& qp) const { return scripted_.count(qp) && !op_used_.count(qp); }
  // How many receives bring-up posts on QP `q`: max_recv_wr, or the smoke exchange's share
  // (one per QP connected to it) when scripts own the RQ.
  uint32_t of_qp(const Qp& q) const;
  // The same for an SRQ: its max_wr, or 1 when scripts own every QP on it.
  uint32_t of_srq(const Srq& srq) const;

 private:
  std::unordered_map<std::string, uint32_t> senders_;  // QP -> the QPs whose connect: names it
  std::unordered_set<std::string> scripted_, op_used_;
  std::unordered_map<std::string, bool> srq_all_scripted_;  // SRQ -> every QP on it script-owned
};

}  // namespace qpo::scenario
