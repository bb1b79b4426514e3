// The run's ODP capability check: on_demand MRs need IBV_ODP_SUPPORT and ODP for the
// transport of every QP that shares their PD (ibv_query_device_ex(3), odp_caps).
#include <doctest/doctest.h>

#include "exec/odp_caps.h"

using qpo::exec::odp_problem;
using qpo::spec::QpType;

namespace {

ibv_odp_caps caps(uint64_t general, uint32_t rc, uint32_t uc, uint32_t ud) {
  ibv_odp_caps c{};
  c.general_caps = general;
  c.per_transport_caps.rc_odp_caps = rc;
  c.per_transport_caps.uc_odp_caps = uc;
  c.per_transport_caps.ud_odp_caps = ud;
  return c;
}

}  // namespace

TEST_CASE("a device without IBV_ODP_SUPPORT cannot register on_demand MRs at all") {
  CHECK(odp_problem(caps(0, IBV_ODP_SUPPORT_WRITE, 0, 0), {QpType::RC}) == "odp_caps.general_caps lacks IBV_ODP_SUPPORT");
}

TEST_CASE("ODP for RC only: an RC pair passes, a UD QP on the MR's PD is named") {
  auto rc_only = caps(IBV_ODP_SUPPORT, IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE, 0, 0);
  CHECK(odp_problem(rc_only, {QpType::RC}).empty());
  CHECK(odp_problem(rc_only, {QpType::RC, QpType::UD}) == "no ODP for UD QPs (odp_caps.per_transport_caps.ud_odp_caps is 0)");
}

TEST_CASE("QP types ODP does not describe (XRC, RAW_PACKET) are left to the verbs call") {
  CHECK(odp_problem(caps(IBV_ODP_SUPPORT, 0, 0, 0), {QpType::XRC_SEND}).empty());
}
