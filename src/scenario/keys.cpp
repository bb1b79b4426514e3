#include "scenario/keys.h"

#include "util/ops.h"

#include "scenario/thresholds.h"

namespace qpo::scenario::keys {

#define QPO_KEYS(fn, ...)                                        \
  const std::vector<std::string>& fn() {                         \
    static const std::vector<std::string> k{__VA_ARGS__};        \
    return k;                                                    \
  }

QPO_KEYS(top_level, "version", "name", "description", "tags", "requires", "hosts", "devices", "pds", "mrs",
         "cqs", "srqs", "xrcds", "qps", "workloads", "faults", "timeline", "mws",
         "mcast_groups", "externals", "matrix", "wire")
QPO_KEYS(host, "address", "launcher")
QPO_KEYS(device, "host", "name", "port", "gid_index")
QPO_KEYS(pd, "device")
QPO_KEYS(mr, "pd", "size", "access", "count", "per_qp")
QPO_KEYS(cq, "device", "depth", "channel", "timestamps")
QPO_KEYS(srq, "pd", "max_wr", "max_sge", "srq_limit")
QPO_KEYS(xrcd, "device")
QPO_KEYS(qp, "pd", "type", "send_cq", "recv_cq", "srq", "xrcd", "cap", "sq_sig_all", "connect", "states",
         "transitions", "count", "cm")
QPO_KEYS(cap, "max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data")
QPO_KEYS(workload, "qp", "op", "local_mr", "remote_mr", "size", "offset", "iterations", "script", "args",
         "thresholds", "expect", "mcast", "workers", "pin", "cpus", "invalidate")
QPO_KEYS(wire, "events", "expect")
QPO_KEYS(packet_event, "qp", "packets", "psn", "nth", "transmission", "action", "delay")
QPO_KEYS(fault, "device", "loss", "delay", "corrupt", "duplicate", "reorder", "during")
QPO_KEYS(transition_control, "expect", "defaults")
QPO_KEYS(expect, "errno", "status")
QPO_KEYS(capability_names, "xrc", "raw_packet", "odp", "srq", "atomic", "ud", "uc", "rc",
         "cq_timestamps", "mw")
// What a host's `launcher:` template may name (cluster/launch.cpp gives each its value).
QPO_KEYS(launcher_placeholders, "host", "address", "command")
QPO_KEYS(mw, "pd", "type", "mr", "offset", "length", "access", "bind_qp")
QPO_KEYS(external, "exchange", "tool", "server", "listen", "from", "port", "mtu", "rdma_cm", "values", "values_file",
         "own_values")
QPO_KEYS(given_values, "qpn", "psn", "lid", "gid", "qkey", "mtu", "mr")
QPO_KEYS(given_mr, "addr", "rkey", "length")
QPO_KEYS(mcast_group, "gid", "qkey", "mlid", "members", "join")

#undef QPO_KEYS

// The scenario spellings of util/ops.h's table: the one list of operations.
const std::vector<std::string>& workload_ops() {
  static const std::vector<std::string> k = util::scenario_op_names();
  return k;
}

const std::vector<std::string>& threshold() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> names;
    for (const auto& kind : threshold_kinds()) names.emplace_back(kind.name);
    return names;
  }();
  return k;
}

}  // namespace qpo::scenario::keys
