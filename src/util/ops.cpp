#include "util/ops.h"

#include <infiniband/verbs.h>

#include <cctype>
#include <string>

namespace qpo::util {

namespace {

constexpr OpInfo kOps[] = {
    {Op::Send, "send", "send", IBV_WR_SEND, false, false, true, true, 0, ""},
    {Op::SendImm, "send_imm", "send_with_imm", IBV_WR_SEND_WITH_IMM, false, false, true, true, 0, ""},
    {Op::Write, "write", "rdma_write", IBV_WR_RDMA_WRITE, true, false, false, false, IBV_ACCESS_REMOTE_WRITE, "remote_write"},
    {Op::WriteImm, "write_imm", "rdma_write_with_imm", IBV_WR_RDMA_WRITE_WITH_IMM, true, false, true, false,
     IBV_ACCESS_REMOTE_WRITE, "remote_write"},
    {Op::Read, "read", "rdma_read", IBV_WR_RDMA_READ, true, false, false, false, IBV_ACCESS_REMOTE_READ, "remote_read"},
    {Op::CmpSwap, "cas", "atomic_cmp_swp", IBV_WR_ATOMIC_CMP_AND_SWP, true, true, false, false, IBV_ACCESS_REMOTE_ATOMIC,
     "remote_atomic"},
    {Op::FetchAdd, "faa", "atomic_fetch_add", IBV_WR_ATOMIC_FETCH_AND_ADD, true, true, false, false,
     IBV_ACCESS_REMOTE_ATOMIC, "remote_atomic"},
    // SEND that also invalidates an rkey on the responder (a type 2 window's: `invalidate:`).
    {Op::SendInv, "send_inv", "send_with_inv", IBV_WR_SEND_WITH_INV, false, false, true, true, 0, ""},
    // A receive-only workload (`op: recv` on a multicast group's member): datagrams from a sender
    // outside the scenario, counted and sized. Posts nothing.
    {Op::Recv, "recv", "recv", IBV_WR_SEND, false, false, false, false, 0, ""},
};

// Verbs spellings, for users who think in IBV_WR_* names.
constexpr std::pair<const char*, Op> kVerbsNames[] = {
    {"IBV_WR_SEND", Op::Send},
    {"IBV_WR_SEND_WITH_IMM", Op::SendImm},
    {"IBV_WR_RDMA_WRITE", Op::Write},
    {"IBV_WR_RDMA_WRITE_WITH_IMM", Op::WriteImm},
    {"IBV_WR_RDMA_READ", Op::Read},
    {"IBV_WR_ATOMIC_CMP_AND_SWP", Op::CmpSwap},
    {"IBV_WR_ATOMIC_FETCH_AND_ADD", Op::FetchAdd},
    {"IBV_WR_SEND_WITH_INV", Op::SendInv},
    {"atomic_cmp_and_swp", Op::CmpSwap},
    {"atomic_fetch_and_add", Op::FetchAdd},
};

bool same_ci(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<size_t>(op)]; }

std::optional<Op> parse_op(std::string_view name) {
  for (const auto& o : kOps)
    if (same_ci(name, o.name) || (*o.scenario && same_ci(name, o.scenario))) return o.op;
  for (const auto& [n, op] : kVerbsNames)
    if (same_ci(name, n)) return op;
  // IBV_WR_ in front of a scenario spelling (IBV_WR_ATOMIC_CMP_SWP), as scenarios have written.
  constexpr std::string_view kPrefix = "IBV_WR_";
  if (name.size() > kPrefix.size() && same_ci(name.substr(0, kPrefix.size()), kPrefix))
    for (const auto& o : kOps)
      if (*o.scenario && same_ci(name.substr(kPrefix.size()), o.scenario)) return o.op;
  return std::nullopt;
}

const char* op_names() { return "send send_imm write write_imm read cas faa send_inv recv"; }

std::vector<std::string> scenario_op_names() {
  std::vector<std::string> names;
  for (const auto& o : kOps)
    if (*o.scenario) names.emplace_back(o.scenario);
  return names;
}

std::vector<std::string> verbs_op_names() {
  std::vector<std::string> names;
  for (const auto& [name, op] : kVerbsNames)
    if (std::string_view(name).rfind("IBV_WR_", 0) == 0) names.emplace_back(name);
  return names;
}

const OpInfo* scenario_op(std::string_view name) {
  for (const auto& o : kOps)
    if (*o.scenario && name == o.scenario) return &o;
  return nullptr;
}

}  // namespace qpo::util
