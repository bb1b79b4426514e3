// One worker thread drives many QPs of a group (`workers:`, lanes of one stream); one lane's
// error stops it. The QP that failed carries the error; each other lane's line says it did
// not finish because of that QP (issue 20: 250 lines all naming cli.393).
#include <doctest/doctest.h>

#include <infiniband/verbs.h>

#include <cerrno>

#include "exec/workload_results.h"

using qpo::exec::lane_message;
using qpo::exec::LaneFailure;
using qpo::exec::stopped_by_other_lane;

namespace {
const std::string kError = "QP 'cli.393': completion IBV_WC_REM_ACCESS_ERR (vendor_err 0x0): write #1 of 500";
}

TEST_CASE("lanes: the QP that failed keeps its own error") {
  LaneFailure f{"cli.393", IBV_WC_REM_ACCESS_ERR, 0};
  CHECK(lane_message("cli.393", f, kError) == kError);
  CHECK_FALSE(stopped_by_other_lane("cli.393", f));
}

TEST_CASE("lanes: another QP of the worker did not finish because of it, status named") {
  LaneFailure f{"cli.393", IBV_WC_REM_ACCESS_ERR, 0};
  CHECK(lane_message("cli.250", f, kError) == "not finished: worker stopped after cli.393 failed (IBV_WC_REM_ACCESS_ERR)");
  CHECK(stopped_by_other_lane("cli.250", f));
}

TEST_CASE("lanes: a post's errno names how the other QP failed") {
  LaneFailure f{"cli.7", 0, ENOMEM};
  CHECK(lane_message("cli.8", f, "ibv_post_send on QP 'cli.7' failed: ENOMEM") ==
        "not finished: worker stopped after cli.7 failed (ENOMEM)");
}

TEST_CASE("lanes: an error naming no QP (a timeout, a pin) stays every member's own") {
  LaneFailure none;
  CHECK(lane_message("cli.1", none, "workload 'w' pin: CPU 7 is not available here") ==
        "workload 'w' pin: CPU 7 is not available here");
  CHECK_FALSE(stopped_by_other_lane("cli.1", none));
}
