// Capacity lint: queues that will overflow, and sizes beyond what devices usually grant.
// Device limits are only known at run time (ibv_query_device); these are warnings.
#include <cstdint>
#include <map>

#include "check/validate.h"

namespace qpo::check {

namespace {

// A CQ shared by several QPs must hold every completion they can have outstanding.
std::map<std::string, uint64_t> cq_demand(const scenario::Scenario& s) {
  std::map<std::string, uint64_t> demand;
  for (const auto& q : s.qps) {
    if (q.send_cq) demand[q.send_cq.name] += q.cap.max_send_wr;
    if (q.recv_cq && !q.srq) demand[q.recv_cq.name] += q.cap.max_recv_wr;
  }
  return demand;
}

}  // namespace

void size_unwritten_cqs(scenario::Scenario& s) {
  auto demand = cq_demand(s);
  for (auto& c : s.cqs) {
    if (c.depth_loc.given()) continue;
    auto it = demand.find(c.name);
    if (it != demand.end() && it->second > c.depth && it->second <= UINT32_MAX) c.depth = static_cast<uint32_t>(it->second);
  }
}

void check_caps(const scenario::Scenario& s, diag::DiagSink& sink) {
  auto demand = cq_demand(s);
  for (const auto& c : s.cqs) {
    auto it = demand.find(c.name);
    if (it == demand.end() || it->second <= c.depth) continue;
    auto& d = sink.warning("Q601", c.loc, "cqs." + c.name + ".depth",
                           "CQ '" + c.name + "' depth " + std::to_string(c.depth) + " is below the " +
                               std::to_string(it->second) + " work requests its QPs can have outstanding");
    d.rule = "a CQ overrun raises IBV_EVENT_CQ_ERR and moves its QPs to the error state";
    d.hint = "set depth >= " + std::to_string(it->second) + " or lower the QPs' max_send_wr/max_recv_wr";
  }
  // An SRQ limit above what the SRQ can hold is crossed at the first receive taken; providers
  // refuse a limit past their queue's capacity (rxe: EINVAL).
  auto srq_limit = [&](const scenario::Srq& sr, uint32_t limit, const util::SourceLoc& loc, const std::string& path) {
    if (limit <= sr.max_wr) return;
    auto& d = sink.warning("Q607", loc.given() ? loc : sr.loc, path,
                           "srq_limit " + std::to_string(limit) + " is above the max_wr " + std::to_string(sr.max_wr) +
                               " of SRQ '" + sr.name + "'");
    d.rule = "IBV_EVENT_SRQ_LIMIT_REACHED fires when a receive is taken and fewer than srq_limit remain, and an SRQ holds at most max_wr receives (whoever posts them: bring-up or a script)";
    d.hint = "set srq_limit <= " + std::to_string(sr.max_wr) + " (equal: the first receive taken raises the event)";
  };
  for (const auto& sr : s.srqs) srq_limit(sr, sr.srq_limit, sr.srq_limit_loc, "srqs." + sr.name + ".srq_limit");
  for (const auto& step : s.timeline)
    if (step.kind == scenario::TimelineStep::Kind::SrqLimit)
      if (const auto* sr = s.srq(step.on.name)) srq_limit(*sr, step.srq_limit, step.loc, step.path + ".srq_limit");
  for (const auto& q : s.qps) {
    std::string p = "qps." + q.name + ".cap";
    if (q.cap.max_inline_data > 1024) {
      auto& d = sink.warning("Q602", q.cap.given.count("max_inline_data") ? q.cap.given.at("max_inline_data") : q.loc,
                             p + ".max_inline_data", "max_inline_data " + std::to_string(q.cap.max_inline_data) +
                                                         " is above what most devices grant (rxe: 240, mlx5: ~900)");
      d.hint = "qpo run reports the granted value; ibv_create_qp fails if the device cannot";
    }
    if (q.srq && q.cap.given.count("max_recv_wr")) {
      auto& d = sink.warning("Q603", q.cap.given.at("max_recv_wr"), p + ".max_recv_wr",
                             "QP '" + q.name + "' receives through SRQ '" + q.srq.name + "'; max_recv_wr is ignored");
      d.hint = "size the SRQ's max_wr instead";
    }
    if (q.qp_type != spec::QpType::XRC_RECV && q.cap.max_send_wr == 0 && q.cap.max_recv_wr == 0) {
      auto& d = sink.warning("Q604", q.cap.loc.given() ? q.cap.loc : q.loc, p, "QP '" + q.name + "' can hold no work requests");
      d.hint = "set max_send_wr and/or max_recv_wr";
    }
    // Initiator depth above the responder's resources just queues reads; worth a note.
    if (!q.connect) continue;
    const auto* peer = s.qp(q.connect.name);
    if (!peer) continue;
    const scenario::Attr* mine = nullptr;
    const scenario::Attr* theirs = nullptr;
    for (const auto& t : q.transitions)
      if (auto* a = t.attr("max_rd_atomic"); a && a->symbol == scenario::Symbol::None) mine = a;
    for (const auto& t : peer->transitions)
      if (auto* a = t.attr("max_dest_rd_atomic"); a && a->symbol == scenario::Symbol::None) theirs = a;
    if (mine && theirs && mine->number > theirs->number) {
      auto& d = sink.warning("Q605", mine->loc, mine->path,
                             "max_rd_atomic " + std::to_string(mine->number) + " exceeds the peer's max_dest_rd_atomic " +
                                 std::to_string(theirs->number));
      d.rule = "the requester may have more reads in flight than the responder accepts; the extra ones wait";
      d.related.push_back({theirs->loc, "peer's max_dest_rd_atomic"});
    }
  }
}

}  // namespace qpo::check
