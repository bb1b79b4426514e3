#pragma once
// The rdma_cm connection flow over a QP qpo created itself (librdmacm's "user-managed QP":
// rdma_connect/rdma_accept with conn_param.qp_num, no rdma_create_qp). The CM computes each
// transition's attributes (rdma_init_qp_attr: port, pkey, path, peer QPN, PSNs, MTU, timeouts)
// and qpo applies them with its own ibv_modify_qp, so the QP stays one of qpo's objects.
//   active:  resolve_addr -> ADDR_RESOLVED -> resolve_route -> ROUTE_RESOLVED -> INIT ->
//            rdma_connect -> CONNECT_RESPONSE -> RTR -> RTS -> rdma_establish
//   passive: bind + listen -> CONNECT_REQUEST (a new id) -> INIT -> RTR -> rdma_accept ->
//            ESTABLISHED -> RTS        (or rdma_reject with private data)
//   either:  rdma_disconnect -> DISCONNECTED
// Every wait has a timeout; an event other than the one awaited is an Unexpected error that
// carries the event, so a caller can accept it as an expected outcome (REJECTED with the
// peer's reason and private data, UNREACHABLE, ADDR_ERROR, a timeout).
#include <infiniband/verbs.h>

#include <stdexcept>
#include <string>

#include "cm/cm.h"

namespace qpo::cm {

// The IB CM reject reason of a REJECTED event's status: "consumer defined" for 28,
// "invalid service ID" for 8 (include/rdma/ib_cm.h); "reason N" when unnamed.
std::string reject_reason(int status);

// Waiting for one event did not end with it: another event came, or none within the timeout.
class Unexpected : public std::runtime_error {
 public:
  Unexpected(std::string object, std::string wanted, std::optional<Event> got, int err);
  const std::optional<Event>& got() const { return got_; }  // nullopt: timeout or failure
  int error() const { return err_; }                        // ETIMEDOUT, or errno of the wait

 private:
  std::optional<Event> got_;
  int err_;
};

// One line for the run log: "RDMA_CM_EVENT_REJECTED (status 28: consumer defined, private data 'go away')".
std::string describe(const Event& e);

// The next event, which must be `want`; throws Unexpected otherwise (timeout included).
Event expect_event(EventChannel& channel, rdma_cm_event_type want, int timeout_ms, const std::string& object);

// rdma_init_qp_attr(id, state) then ibv_modify_qp(qp) with the mask the CM chose; returns
// that mask. A UD QP's RTR and RTS are the state (and sq_psn 0), as librdmacm brings up its
// own UD QPs. Throws verbs::VerbsError naming the verb that failed and the target state.
// `applied`, when given, receives the attributes as passed to ibv_modify_qp (a UD QP's qkey).
int modify_by_cm(rdma_cm_id* id, ibv_qp* qp, ibv_qp_state state, const std::string& object,
                 ibv_qp_attr* applied = nullptr);

}  // namespace qpo::cm
