// verbs/qp_control.h and verbs_error.h: the pure parts of the control-verb wrappers - how a
// failed call is named (object, transition, mask in words) and the errno a return becomes.
#include <doctest/doctest.h>

#include <cerrno>

#include "verbs/qp_control.h"
#include "verbs/verbs_error.h"

using qpo::spec::QpState;

TEST_CASE("an ibv_modify_qp call is named with its QP, transition and mask in words") {
  const qpo::spec::Mask mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU;
  CHECK(qpo::verbs::call_text("ibv_modify_qp", "qa", qpo::verbs::transition_text(QpState::INIT, QpState::RTR, mask)) ==
        "ibv_modify_qp(qa, INIT->RTR mask=0x181 (IBV_QP_STATE|IBV_QP_AV|IBV_QP_PATH_MTU))");
}

TEST_CASE("a verb call without a detail is named by its object alone") {
  CHECK(qpo::verbs::call_text("ibv_query_qp", "qa") == "ibv_query_qp(qa)");
}

TEST_CASE("a VerbsError's text is the call's name, the errno's name and its description") {
  qpo::verbs::VerbsError e("ibv_modify_qp", "qa", EINVAL, "to RTR");
  CHECK(std::string(e.what()) == "ibv_modify_qp(qa, to RTR) failed: EINVAL (Invalid argument)");
}

TEST_CASE("a verb's return becomes 0 or a positive errno") {
  CHECK(qpo::verbs::verb_errno(0) == 0);
  CHECK(qpo::verbs::verb_errno(ENOMEM) == ENOMEM);  // rdma-core's usual form: the errno itself
  errno = EPERM;
  CHECK(qpo::verbs::verb_errno(-1) == EPERM);  // -1 with errno set
  errno = 0;
  CHECK(qpo::verbs::verb_errno(-1) == EIO);  // -1 without an errno is still a failure
}
