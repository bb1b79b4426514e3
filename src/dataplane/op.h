#pragma once
// The operations a data path posts, one table for names, verbs opcodes and what each needs.
#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace qpo::dataplane {

enum class Op : uint8_t { Send, SendImm, Write, WriteImm, Read, CmpSwap, FetchAdd, Recv };

struct OpInfo {
  Op op;
  const char* name;        // short name used in Lua and reports: "write"
  const char* scenario;    // scenario spelling: "rdma_write"
  ibv_wr_opcode opcode;    // meaningless for Recv
  bool remote;             // needs a remote MR (address + rkey)
  bool atomic;             // 8-byte operand, 8-byte aligned remote address
  bool consumes_recv;      // the peer must have a receive posted
};

const OpInfo& op_info(Op op);
inline const char* op_name(Op op) { return op_info(op).name; }
// Short names (send, send_imm, write, write_imm, read, cas, faa, recv), the scenario's
// (rdma_write, atomic_fetch_add, ...) and the verbs' (IBV_WR_RDMA_WRITE, ...).
std::optional<Op> parse_op(std::string_view name);
// For error messages: "send send_imm write write_imm read cas faa recv".
const char* op_names();

}  // namespace qpo::dataplane
