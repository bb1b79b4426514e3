#include "dataplane/post.h"

#include <arpa/inet.h>

#include <vector>

#include "dataplane/error.h"
#include "dataplane/send_path.h"

namespace qpo::dataplane {

namespace {

// The names an endpoint has, for a message: the first 20 (a big run names 10,000).
std::string names_of(const auto& names) {
  constexpr size_t kShown = 20;
  std::string s;
  size_t n = 0;
  names.for_each([&](const std::string& name, const auto&) {
    if (n++ < kShown) s += (s.empty() ? "" : ", ") + name;
  });
  if (n > kShown) s += ", and " + std::to_string(n - kShown) + " more";
  return s.empty() ? "(none)" : s;
}

std::string mr_name(const Endpoint& ep, const LocalMr* mr) {
  std::string out = "?";
  ep.local_mrs.for_each([&](const std::string& name, const LocalMr& m) {
    if (&m == mr) out = name;
  });
  return out;
}

std::string remote_name(const Endpoint& ep, const RemoteMr* mr) {
  std::string out = "?";
  ep.remote_mrs.for_each([&](const std::string& name, const RemoteMr& m) {
    if (&m == mr) out = name;
  });
  return out;
}

}  // namespace

const LocalMr& local_mr(const Endpoint& ep, const std::string& name) {
  const LocalMr* mr = ep.local_mrs.find(name);
  if (!mr) usage_error(ep.qp_name, "no local MR '" + name + "' in this QP's PD (has: " + names_of(ep.local_mrs) + ")");
  return *mr;
}

const RemoteMr& remote_mr(const Endpoint& ep, const std::string& name) {
  const RemoteMr* mr = ep.remote_mrs.find(name);
  if (!mr)
    usage_error(ep.qp_name, "no remote MR '" + name + "' known from peer '" + ep.peer_name +
                                "' (has: " + names_of(ep.remote_mrs) + ")");
  return *mr;
}

const LocalMr& default_local_mr(const Endpoint& ep) {
  auto [name, mr] = ep.local_mrs.first();
  if (!mr) usage_error(ep.qp_name, "has no local MR to send from or receive into");
  return *mr;
}

const RemoteMr& default_remote_mr(const Endpoint& ep) {
  auto [name, mr] = ep.remote_mrs.first();
  if (!mr) usage_error(ep.qp_name, "knows no remote MR of peer '" + ep.peer_name + "' (the peer grants no remote access?)");
  return *mr;
}

std::string check_send(const Endpoint& ep, const SendRequest& r) {
  const OpInfo& info = op_info(r.op);
  if (r.op == Op::Recv) return "'recv' is not a send operation (use post_recv)";
  if (r.num_sge < 0 || r.num_sge > kMaxSge) return "at most " + std::to_string(kMaxSge) + " SGEs";
  uint64_t total = 0;
  for (int i = 0; i < r.num_sge; ++i) {
    const Segment& s = r.sge[i];
    if (!s.mr || !s.mr->mr) return "SGE " + std::to_string(i) + " has no registered MR";
    if (s.offset + s.length > s.mr->length)
      return "SGE " + std::to_string(i) + " [" + std::to_string(s.offset) + ", +" + std::to_string(s.length) +
             ") is outside MR '" + mr_name(ep, s.mr) + "' (" + std::to_string(s.mr->length) + " bytes)";
    total += s.length;
  }
  if (info.remote) {
    if (!r.remote) return std::string(info.name) + " needs a remote MR";
    if (r.remote_offset + (info.atomic ? 8 : total) > r.remote->length)
      return "remote range [" + std::to_string(r.remote_offset) + ", +" + std::to_string(info.atomic ? 8 : total) +
             ") is outside remote MR '" + remote_name(ep, r.remote) + "' (" + std::to_string(r.remote->length) +
             " bytes)";
  }
  if (info.atomic) {
    if (total != 8) return std::string(info.name) + " moves exactly 8 bytes (got " + std::to_string(total) + ")";
    if ((r.remote->addr + r.remote_offset) % 8 != 0) return "atomic remote address must be 8-byte aligned";
    if (ep.qp_type != IBV_QPT_RC && ep.qp_type != IBV_QPT_XRC_SEND) return "atomics need an RC QP (this one is " + ep.type_name + ")";
  }
  if (r.op == Op::SendInv && ep.qp_type != IBV_QPT_RC && ep.qp_type != IBV_QPT_XRC_SEND)
    return "send with invalidate needs an RC or XRC QP (this one is " + ep.type_name + ")";
  if ((r.op == Op::Read) && ep.qp_type != IBV_QPT_RC && ep.qp_type != IBV_QPT_XRC_SEND)
    return "RDMA read needs an RC QP (this one is " + ep.type_name + ")";
  if (info.remote && is_ud(ep)) return std::string(info.name) + " is not possible on a UD QP (send only)";
  if (r.inline_data && total > ep.max_inline_data)
    return "inline " + std::to_string(total) + " bytes exceeds the QP's max_inline_data " +
           std::to_string(ep.max_inline_data);
  if (r.inline_data && (r.op == Op::Read || info.atomic)) return "inline data only applies to sends and writes";
  if (is_ud(ep) && !ep.peer_ah) return "UD send needs the peer's address handle (peer_ah is not set)";
  return "";
}

void to_verbs(const Endpoint& ep, const SendRequest& r, ibv_send_wr& wr, ibv_sge* sges) {
  const OpInfo& info = op_info(r.op);
  wr = {};
  wr.wr_id = r.id;
  wr.opcode = static_cast<ibv_wr_opcode>(info.opcode);
  wr.sg_list = sges;
  wr.num_sge = r.num_sge;
  for (int i = 0; i < r.num_sge; ++i) {
    const Segment& s = r.sge[i];
    sges[i].addr = reinterpret_cast<uintptr_t>(s.mr->data) + s.offset;
    sges[i].length = s.length;
    sges[i].lkey = s.mr->mr->lkey;
  }
  int flags = 0;
  if (r.signaled) flags |= IBV_SEND_SIGNALED;
  if (r.inline_data) flags |= IBV_SEND_INLINE;
  if (r.fence) flags |= IBV_SEND_FENCE;
  if (r.solicited) flags |= IBV_SEND_SOLICITED;
  wr.send_flags = flags;
  if (r.op == Op::SendImm || r.op == Op::WriteImm) wr.imm_data = htonl(r.imm);
  if (r.op == Op::SendInv) wr.invalidate_rkey = r.invalidate_rkey;  // host order (a union with imm_data)
  if (info.atomic) {
    wr.wr.atomic.remote_addr = r.remote->addr + r.remote_offset;
    wr.wr.atomic.rkey = r.remote->rkey;
    wr.wr.atomic.compare_add = r.compare_add;
    wr.wr.atomic.swap = r.swap;
  } else if (info.remote) {
    wr.wr.rdma.remote_addr = r.remote->addr + r.remote_offset;
    wr.wr.rdma.rkey = r.remote->rkey;
  }
  if (is_ud(ep)) {
    wr.wr.ud.ah = ep.peer_ah;
    wr.wr.ud.remote_qpn = ep.peer_qpn;
    wr.wr.ud.remote_qkey = ep.peer_qkey;
  }
}

void post_sends(const Endpoint& ep, std::span<const SendRequest> reqs) {
  if (reqs.empty()) return;
  std::vector<ibv_send_wr> wrs(reqs.size());
  std::vector<ibv_sge> sges(reqs.size() * kMaxSge);
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].id >= kUserIdLimit) usage_error(ep.qp_name, "work request id must be below 2^62");
    if (auto p = check_send(ep, reqs[i]); !p.empty())
      usage_error(ep.qp_name, (reqs.size() > 1 ? "WR " + std::to_string(i + 1) + ": " : "") + p);
    to_verbs(ep, reqs[i], wrs[i], &sges[i * kMaxSge]);
    wrs[i].next = i + 1 < reqs.size() ? &wrs[i + 1] : nullptr;
  }
  // Checked last: a script's mistakes are reported the same with or without a device.
  if (!ep.qp) usage_error(ep.qp_name, "has no verbs QP (not brought up?)");
  ibv_send_wr* bad = nullptr;
  if (int e = post_send_chain(ep, wrs.data(), &bad))
    post_error(ep.qp_name, "ibv_post_send", e,
               "at WR " + std::to_string(bad ? bad - wrs.data() + 1 : 0) + " of " + std::to_string(reqs.size()));
}

void post_recvs(const Endpoint& ep, std::span<const RecvRequest> reqs) {
  if (reqs.empty()) return;
  std::vector<ibv_recv_wr> wrs(reqs.size());
  std::vector<ibv_sge> sges(reqs.size() * kMaxSge);
  for (size_t i = 0; i < reqs.size(); ++i) {
    const RecvRequest& r = reqs[i];
    if (r.id >= kUserIdLimit) usage_error(ep.qp_name, "work request id must be below 2^62");
    if (r.num_sge < 0 || r.num_sge > kMaxSge) usage_error(ep.qp_name, "at most " + std::to_string(kMaxSge) + " SGEs");
    wrs[i] = {};
    wrs[i].wr_id = r.id;
    wrs[i].sg_list = &sges[i * kMaxSge];
    wrs[i].num_sge = r.num_sge;
    for (int k = 0; k < r.num_sge; ++k) {
      const Segment& s = r.sge[k];
      if (!s.mr || !s.mr->mr) usage_error(ep.qp_name, "receive SGE without a registered MR");
      if (s.offset + s.length > s.mr->length)
        usage_error(ep.qp_name, "receive SGE [" + std::to_string(s.offset) + ", +" + std::to_string(s.length) +
                                    ") is outside MR '" + mr_name(ep, s.mr) + "' (" + std::to_string(s.mr->length) +
                                    " bytes)");
      sges[i * kMaxSge + k] = {reinterpret_cast<uintptr_t>(s.mr->data) + s.offset, s.length, s.mr->mr->lkey};
    }
    wrs[i].next = i + 1 < reqs.size() ? &wrs[i + 1] : nullptr;
  }
  if (!ep.qp && !ep.srq) usage_error(ep.qp_name, "has no verbs QP (not brought up?)");
  ibv_recv_wr* bad = nullptr;
  int e = ep.srq ? ibv_post_srq_recv(ep.srq, wrs.data(), &bad) : ibv_post_recv(ep.qp, wrs.data(), &bad);
  if (e)
    post_error(ep.qp_name, ep.srq ? "ibv_post_srq_recv" : "ibv_post_recv", e,
               "at WR " + std::to_string(bad ? bad - wrs.data() + 1 : 0) + " of " + std::to_string(reqs.size()));
}

}  // namespace qpo::dataplane
