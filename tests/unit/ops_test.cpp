// The one table of operations (util/ops.h): every name an op goes by, and the scenario's
// `op:` read through it.
#include <doctest/doctest.h>

#include "scenario/keys.h"
#include "scenario_fixture.h"
#include "util/ops.h"

using qpo::test::load_only;
using qpo::util::Op;
using qpo::util::parse_op;

TEST_CASE("an op is found by its scenario spelling, its short name and its verbs name, in any case") {
  CHECK(parse_op("rdma_write") == Op::Write);
  CHECK(parse_op("write") == Op::Write);
  CHECK(parse_op("IBV_WR_RDMA_WRITE") == Op::Write);
  CHECK(parse_op("ibv_wr_atomic_cmp_and_swp") == Op::CmpSwap);
  CHECK(parse_op("IBV_WR_ATOMIC_FETCH_ADD") == Op::FetchAdd);  // IBV_WR_ + the scenario spelling
  CHECK_FALSE(parse_op("rdma_wrte").has_value());
}

TEST_CASE("the loader's list of workload ops is the table's scenario spellings, recv (receive only) last") {
  std::vector<std::string> want{"send",      "send_with_imm",  "rdma_write",      "rdma_write_with_imm",
                                "rdma_read", "atomic_cmp_swp", "atomic_fetch_add", "send_with_inv", "recv"};
  CHECK(qpo::scenario::keys::workload_ops() == want);
}

TEST_CASE("send with invalidate is in the table: send_inv, send_with_inv, IBV_WR_SEND_WITH_INV, a SEND to the receiver") {
  CHECK(parse_op("send_inv") == Op::SendInv);
  CHECK(parse_op("send_with_inv") == Op::SendInv);
  CHECK(parse_op("IBV_WR_SEND_WITH_INV") == Op::SendInv);
  const auto* info = qpo::util::scenario_op("send_with_inv");
  REQUIRE(info != nullptr);
  CHECK(info->name == std::string("send_inv"));
  CHECK(info->consumes_recv);
  CHECK(info->payload_in_recv);
  CHECK_FALSE(info->remote);
}

TEST_CASE("what each op needs from the responder comes from the table") {
  CHECK(qpo::util::scenario_op("rdma_read")->access_name == std::string("remote_read"));
  CHECK(qpo::util::scenario_op("rdma_write_with_imm")->consumes_recv);
  CHECK_FALSE(qpo::util::scenario_op("rdma_write_with_imm")->payload_in_recv);
  CHECK(qpo::util::scenario_op("send")->payload_in_recv);
  // recv: a receive-only workload (datagrams from a sender outside the scenario): it needs nothing
  // of a responder and posts no send.
  const auto* recv = qpo::util::scenario_op("recv");
  REQUIRE(recv != nullptr);
  CHECK_FALSE(recv->consumes_recv);
  CHECK_FALSE(recv->remote);
}

TEST_CASE("a workload's op may be written by any of its names; the model holds the enum, messages the scenario spelling") {
  auto l = load_only(
      "version: 1\n"
      "workloads:\n"
      "  a: { qp: q, op: write }\n"
      "  b: { qp: q, op: IBV_WR_ATOMIC_CMP_AND_SWP }\n");
  REQUIRE(l.scenario);
  CHECK(l.scenario->workload("a")->op == Op::Write);
  CHECK(l.scenario->workload("b")->op == Op::CmpSwap);
  CHECK(l.scenario->workload("a")->op_spelling() == std::string("rdma_write"));
  CHECK(l.scenario->workload("b")->op_spelling() == std::string("atomic_cmp_swp"));
  CHECK(l.with_code("Q106").empty());
}

TEST_CASE("an unknown op is Q106 with a did-you-mean from the table") {
  auto l = load_only("version: 1\nworkloads:\n  a: { qp: q, op: rdma_wrte }\n");
  const auto* d = l.one("Q106");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown operation 'rdma_wrte'");
  CHECK(d->hint == "did you mean 'rdma_write'?");
}
