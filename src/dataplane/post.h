#pragma once
// Posting work requests described in plain terms (MR, offset, length; remote MR, offset)
// rather than raw addresses: every bound is checked against the Endpoint before the verbs call,
// so a script's mistake is a message naming the QP and the MR, not a remote access error.
// One call = one ibv_post_send / ibv_post_recv with the requests chained (a post list).
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "dataplane/endpoint.h"
#include "dataplane/op.h"

namespace qpo::dataplane {

inline constexpr int kMaxSge = 4;
inline constexpr uint32_t kGrhBytes = 40;  // UD receives start with the GRH (or room for it)

// Work-request ids with these top bits belong to the data path's own loops; ids a script
// chooses must stay below 2^62 so they are never mistaken for them.
inline constexpr uint64_t kStreamSendTag = 1ull << 62;
inline constexpr uint64_t kPoolRecvTag = 1ull << 63;
inline constexpr uint64_t kUserIdLimit = 1ull << 62;

struct Segment {
  const LocalMr* mr = nullptr;
  uint64_t offset = 0;
  uint32_t length = 0;
};

struct SendRequest {
  Op op = Op::Send;
  uint64_t id = 0;
  Segment sge[kMaxSge];
  int num_sge = 0;
  const RemoteMr* remote = nullptr;  // write/read/atomics
  uint64_t remote_offset = 0;
  uint32_t imm = 0;                  // host order; sent in network order
  uint64_t compare_add = 0, swap = 0;
  bool signaled = true, inline_data = false, fence = false, solicited = false;
  uint32_t invalidate_rkey = 0;      // send_inv: the responder's rkey (a type 2 window's) to invalidate
};

struct RecvRequest {
  uint64_t id = 0;
  Segment sge[kMaxSge];
  int num_sge = 0;
};

// Throws DataplaneError (Usage for a bad request, Post when the verb fails).
void post_sends(const Endpoint& ep, std::span<const SendRequest> reqs);
// To the endpoint's SRQ when it has one, else its QP.
void post_recvs(const Endpoint& ep, std::span<const RecvRequest> reqs);

// Checks one request against the endpoint; "" when fine, else what is wrong (for post_sends
// and for the stream engine, which validates its template once instead of per WR).
std::string check_send(const Endpoint& ep, const SendRequest& r);
// Local MR by name; throws Usage naming the QP and the MRs it does have.
const LocalMr& local_mr(const Endpoint& ep, const std::string& name);
const RemoteMr& remote_mr(const Endpoint& ep, const std::string& name);
// The first local MR (by name order) when the caller named none.
const LocalMr& default_local_mr(const Endpoint& ep);
const RemoteMr& default_remote_mr(const Endpoint& ep);

// Converts a request to its verbs form (sges points at an array of >= num_sge entries).
void to_verbs(const Endpoint& ep, const SendRequest& r, ibv_send_wr& wr, ibv_sge* sges);
inline bool is_ud(const Endpoint& ep) { return ep.qp_type == IBV_QPT_UD; }

}  // namespace qpo::dataplane
