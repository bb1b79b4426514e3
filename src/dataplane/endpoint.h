#pragma once
// What a workload (C++ loop or Lua script) gets to drive one QP: the verbs handles of the
// local side and everything learned about the peer in the out-of-band exchange. The executor
// fills it after bring-up; the data path never creates or destroys verbs objects.
#include <infiniband/verbs.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "dataplane/mr_names.h"

namespace qpo::dataplane {

class RecvPool;

struct LocalMr {
  ibv_mr* mr = nullptr;   // addr/length/lkey/rkey
  uint8_t* data = nullptr;
  size_t length = 0;
};

struct RemoteMr {
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint64_t length = 0;
};

// The send CQ as a latency run on the device's clock reads it: the extended CQ (created with
// IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) and the device's clock (ibv_query_device_ex). Empty
// (cq null) when the send CQ has no timestamps.
struct DeviceClock {
  ibv_cq_ex* cq = nullptr;
  uint64_t khz = 0;    // hca_core_clock: timestamp ticks per millisecond
  uint64_t mask = 0;   // completion_timestamp_mask: the bits a timestamp has (it wraps there)
};

struct Endpoint {
  std::string qp_name;          // scenario name, for messages
  ibv_qp_type qp_type = IBV_QPT_RC;  // what the data path compares
  std::string type_name;              // its name in messages: RC UC UD ... (the rule table's)
  ibv_qp* qp = nullptr;
  // Set when the QP takes the extended post API (ibv_wr_*): sends go that way, as perftest's
  // do; null means ibv_post_send (a provider without it, or --old-post-send).
  ibv_qp_ex* qpx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* send_cq = nullptr;
  ibv_cq* recv_cq = nullptr;
  DeviceClock send_clock;       // send_cq's timestamps, when it has them
  ibv_srq* srq = nullptr;       // receives go here when set
  ibv_comp_channel* send_channel = nullptr;  // event mode, when the CQ has one
  ibv_comp_channel* recv_channel = nullptr;
  uint32_t max_send_wr = 0, max_recv_wr = 0, max_inline_data = 0;
  // max_recv_wr is the room the data path has on the RQ (what the executor keeps posted
  // already taken out), and a limit even when 0: the RQ is full. Without it, max_recv_wr
  // says nothing (0 = not known, as on endpoints built by hand in tests).
  bool recv_limited = false;
  // Peer (UD needs ah + qpn + qkey per send; connected QPs ignore them).
  std::string peer_name;
  uint32_t peer_qpn = 0;
  uint32_t peer_qkey = 0;
  ibv_ah* peer_ah = nullptr;
  MrNames<LocalMr> local_mrs;    // MRs in this QP's PD, by scenario name
  MrNames<RemoteMr> remote_mrs;  // the MRs published in the exchange, by scenario name

  // Receives the data path keeps posted on this QP's RQ (or its SRQ). Left empty by the
  // executor: created on first use and kept for the QP's life, so consecutive workloads on the
  // same QP agree on what is already posted. QPs on one SRQ share one pool. Receives the
  // executor posts itself are counted as messages by the data path but never re-posted.
  std::shared_ptr<RecvPool> recv_pool;
};

}  // namespace qpo::dataplane
