#pragma once
// One end of an rdma_cm connection (a QP's `cm:`), lowered: everything its Cm* steps need,
// resolved against the scenario by the planner (the peer's host and type, what identifies the
// peer's connect request, the MRs an exchange_only connection carries), so exec's CM steps
// never look the scenario up. Plan::cm_ends holds one per CM QP; a step finds its end by
// StepExtra::cm_end.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/buffer_key.h"
#include "plan/qp_id.h"
#include "spec/rules.h"

namespace qpo::plan {

struct CmEnd {
  std::string qp;      // the QP; its listener id is qp + ".listener"
  std::string host;    // the QP's host
  spec::QpType type = spec::QpType::RC;
  bool active = true;
  bool exchange_only = false;  // perftest -z: the private data carries the pair's exchange
  std::string address;         // active: the IP it connects to; passive: the IP it binds ("" = any)
  uint32_t port = 0;
  std::string private_data;    // sent with rdma_connect / rdma_accept
  std::optional<std::string> reject;  // passive: rdma_reject with this private data
  // The expected outcome other than a connection: no event within the wait (timeout), or
  // this event (enum rdma_cm_event_type; -1: none expected).
  bool expect_timeout = false;
  int expect_event = -1;
  std::optional<std::string> expect_reason, expect_private_data;
  uint64_t within_ms = 0;      // the wait for an expected event; 0 = the phase timeout
  std::string connect;         // the QP's `connect:` (UD: the CM's QPN and qkey go there), or ""
  // By id (the exchange's Directory keys, Plan::peer_id): the QP, its `connect:` and the peer;
  // kNoObject where there is none.
  ObjectId qp_id = kNoObject, connect_id = kNoObject, peer_id = kNoObject;

  // The peer: "" when none (an active side that expects a failure).
  std::string peer, peer_host, peer_type;
  // The peer is a tool outside the scenario (an `externals:` entry, exchange rdma_cm): nothing
  // identifies its request but its address (`from`, "" = any), and qpo sends the DREQ whatever
  // its role (ucmatose's client waits for the server's).
  bool external = false;
  bool external_client_disconnects = false;  // rping: its client sends the DREQ; qpo as server waits for it
  std::string peer_from;
  // perftest -R with qpo serving (Plan::externals index, -1 none): the tool's test QP connects
  // only after qpo answers the sync its exchange step read; the wait for its request sends it.
  int perftest_sync = -1;
  bool disconnects_first() const { return active || (external && !external_client_disconnects); }
  std::string peer_private_data;  // what the peer's connect request carries ("" none)
  size_t peer_exchange_bytes = 0; // exchange_only: the size of the peer's exchange
  // The host at the other end of the link: the peer's, or for a peerless active side the
  // first other host (its address is on that link); `host` when the connection stays on one.
  std::string link_host;

  // exchange_only: the MRs this side's exchange carries (cm/exchange_data.h order), those the
  // peer's carries, and which of this side's stay in the agents' exchange too (a workload of
  // another QP than the peer aims at them).
  std::vector<std::string> carried_mrs, peer_carried_mrs, carried_and_published;
  // The same by key (plan/buffer_key.h), in the same order: what exec exchanges them by.
  std::vector<BufferKey> carried_keys, peer_carried_keys, carried_and_published_keys;
};

}  // namespace qpo::plan
