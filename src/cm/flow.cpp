#include "cm/flow.h"

#include <cerrno>

#include "verbs/qp_control.h"
#include "verbs/verbs_error.h"

namespace qpo::cm {

namespace {

// IB CM reject reasons (IBTA 12.6.7.2; the kernel's enum ib_cm_rej_reason).
constexpr const char* kRejectReasons[] = {
    nullptr,
    "no QP",
    "no EEC",
    "no resources",
    "timeout",
    "unsupported",
    "invalid comm ID",
    "invalid comm instance",
    "invalid service ID",
    "invalid transport type",
    "stale connection",
    "RDC does not exist",
    "invalid GID",
    "invalid LID",
    "invalid SL",
    "invalid traffic class",
    "invalid hop limit",
    "invalid packet rate",
    "invalid alternate GID",
    "invalid alternate LID",
    "invalid alternate SL",
    "invalid alternate traffic class",
    "invalid alternate hop limit",
    "invalid alternate packet rate",
    "port CM redirect",
    "port redirect",
    "invalid MTU",
    "insufficient responder resources",
    "consumer defined",
    "invalid RNR retry",
    "duplicate local comm ID",
    "invalid class version",
    "invalid flow label",
    "invalid alternate flow label",
};

std::string printable_data(const std::vector<unsigned char>& d) {
  // Private data is a fixed-size field on the wire: the peer's text, then zero padding.
  std::string s;
  for (unsigned char c : d) {
    if (c == 0) break;
    s += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return s;
}

}  // namespace

std::string reject_reason(int status) {
  if (status > 0 && static_cast<size_t>(status) < sizeof kRejectReasons / sizeof kRejectReasons[0])
    return kRejectReasons[status];
  return "reason " + std::to_string(status);
}

std::string describe(const Event& e) {
  std::string out = e.name();
  std::string inner;
  if (e.type == RDMA_CM_EVENT_REJECTED) inner = "status " + std::to_string(e.status) + ": " + reject_reason(e.status);
  else if (e.status) inner = "status " + std::to_string(e.status) + (e.status < 0 ? " (" + verbs::errno_name(-e.status) + ")" : "");
  std::string data = printable_data(e.private_data);
  if (!data.empty()) inner += (inner.empty() ? "" : ", ") + std::string("private data '") + data + "'";
  return inner.empty() ? out : out + " (" + inner + ")";
}

Unexpected::Unexpected(std::string object, std::string wanted, std::optional<Event> got, int err)
    : std::runtime_error(object + ": waited for " + wanted + ", " +
                         (got ? "got " + describe(*got)
                              : err == ETIMEDOUT ? std::string("no event came (timeout)")
                                                 : "the wait failed: " + verbs::errno_name(err))),
      got_(std::move(got)),
      err_(err) {}

Event expect_event(EventChannel& channel, rdma_cm_event_type want, int timeout_ms, const std::string& object) {
  int err = 0;
  auto e = next_event(channel, timeout_ms, &err);
  if (!e || e->type != want) throw Unexpected(object, event_name(want), std::move(e), err);
  return *e;
}

int modify_by_cm(rdma_cm_id* id, ibv_qp* qp, ibv_qp_state state, const std::string& object, ibv_qp_attr* applied) {
  const char* to = state == IBV_QPS_INIT ? "to INIT" : state == IBV_QPS_RTR ? "to RTR" : state == IBV_QPS_RTS ? "to RTS" : "";
  ibv_qp_attr attr{};
  int mask = 0;
  attr.qp_state = state;
  if (qp->qp_type == IBV_QPT_UD && state != IBV_QPS_INIT) {
    // The CM knows a UD QP's INIT (port, pkey, qkey) only; RTR and RTS take what librdmacm's own
    // UD bring-up gives them (ucma_init_ud_qp): the state, and sq_psn 0.
    mask = IBV_QP_STATE;
    if (state == IBV_QPS_RTS) mask |= IBV_QP_SQ_PSN;
  } else if (rdma_init_qp_attr(id, &attr, &mask) != 0) {
    throw verbs::VerbsError("rdma_init_qp_attr", object, errno, to);
  }
  verbs::modify_qp_or_throw(qp, attr, mask, object, to);
  if (applied) *applied = attr;
  return mask;
}

}  // namespace qpo::cm
