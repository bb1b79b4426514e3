#pragma once
// The operations qpo posts, one table for every name they go by (the scenario's `op:`
// spelling, the short name Lua and reports use, the verbs opcode) and what each needs. The
// loader, the validator, the planner and the data path all read it: one vocabulary.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::util {

// Recv stays last: the send operations are the codes below it (Lua's qpo.op, the per-WR hook).
enum class Op : uint8_t { Send, SendImm, Write, WriteImm, Read, CmpSwap, FetchAdd, SendInv, Recv };

struct OpInfo {
  Op op;
  const char* name;        // short name used in Lua and reports: "write"
  const char* scenario;    // scenario spelling: "rdma_write" ("recv": a workload that only receives)
  int opcode;              // enum ibv_wr_opcode (verbs.h stays below src/verbs and ops.cpp); meaningless for Recv
  bool remote;             // needs a remote MR (address + rkey)
  bool atomic;             // 8-byte operand, 8-byte aligned remote address
  bool consumes_recv;      // the peer must have a receive posted
  bool payload_in_recv;    // the message's bytes land in that receive (not write_with_imm's)
  unsigned remote_access;  // IBV_ACCESS_* the responder's QP and MR must grant (0: none)
  const char* access_name; // that flag as the scenario spells it: "remote_write"
};

const OpInfo& op_info(Op op);
inline const char* op_name(Op op) { return op_info(op).name; }
// Short names (send, send_imm, write, write_imm, read, cas, faa, send_inv, recv), the scenario's
// (rdma_write, atomic_fetch_add, ...) and the verbs' (IBV_WR_RDMA_WRITE, ...), any case.
std::optional<Op> parse_op(std::string_view name);
// For error messages: "send send_imm write write_imm read cas faa send_inv recv".
const char* op_names();
// What a scenario workload's `op:` may say, in table order: "send", "send_with_imm", ...
std::vector<std::string> scenario_op_names();
// The verbs' spellings `op:` takes (IBV_WR_SEND, ..., IBV_WR_ATOMIC_CMP_AND_SWP), in table order:
// the scenario schema's enum lists them (tests/golden/scenarios_test.cpp).
std::vector<std::string> verbs_op_names();
// The table entry of a scenario workload's `op:` (validated by the loader); nullptr if unknown.
const OpInfo* scenario_op(std::string_view name);

}  // namespace qpo::util
