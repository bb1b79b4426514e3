// The planner lowers each Modify step's attributes to an ibv_qp_attr (plan/attr_template.h):
// literals in place, the run's values (the peer's, the QP's own) as patches; steps alike
// share one template.
#include <doctest/doctest.h>

#include <array>
#include <cerrno>
#include <stdexcept>

#include "plan_fixture.h"

namespace {

const char* kPair = R"(version: 1
name: lowered
devices: { d: { name: rxe0, port: 1, gid_index: 1 } }
cqs: { c: { device: d, depth: 256 } }
qps:
  cli: { count: 8, pd: d, type: RC, send_cq: c, recv_cq: c, connect: srv,
         states: { INIT: { qp_access_flags: [remote_write] }, RTR: { min_rnr_timer: 9 }, RTS: { timeout: 17, sq_psn: 0x1234 } } }
  srv: { count: 8, pd: d, type: RC, send_cq: c, recv_cq: c, connect: cli,
         states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }
)";

// What exec's RemoteQp gives a template: the peer's published values.
struct Peer {
  uint32_t qpn = 0, sq_psn = 0;
  uint16_t lid = 0;
  std::array<uint8_t, 16> gid{};
  uint8_t active_mtu = 0;
};

const qpo::plan::Step* modify_of(const qpo::plan::Plan& p, const std::string& qp, const std::string& to) {
  for (const auto* s : qpo::test::steps_of(p, qpo::plan::StepKind::Modify))
    if (s->object == qp && s->to_state.str() == to) return s;
  return nullptr;
}

}  // namespace

TEST_CASE("a counted group's modify steps share one lowered attr per transition") {
  auto p = qpo::test::plan_of(kPair);
  // cli's three transitions and srv's three: 16 QPs, 48 modify steps, 6 templates.
  CHECK(qpo::test::steps_of(p, qpo::plan::StepKind::Modify).size() == 48);
  CHECK(p.modifies.size() == 6);
  CHECK(modify_of(p, "cli.0", "RTR")->modify == modify_of(p, "cli.7", "RTR")->modify);
  CHECK(modify_of(p, "cli.0", "RTR")->modify != modify_of(p, "srv.0", "RTR")->modify);
}

TEST_CASE("literals are in the template; the peer's and the QP's own values are filled in at run time") {
  auto p = qpo::test::plan_of(kPair);
  const auto& rtr = p.attrs_of(*modify_of(p, "cli.3", "RTR"));
  CHECK(rtr.error.empty());
  CHECK(rtr.attr.qp_state == IBV_QPS_RTR);
  CHECK(rtr.attr.min_rnr_timer == 9);
  Peer peer;
  peer.qpn = 0x1c;
  peer.sq_psn = 0xabcdef;
  peer.gid[15] = 7;
  peer.active_mtu = IBV_MTU_1024;
  qpo::plan::OwnValues own{1, 1, IBV_MTU_4096, 0x42};
  ibv_qp_attr a{};
  rtr.resolve(own, &peer, "cli.3", a);
  CHECK(a.dest_qp_num == 0x1c);
  CHECK(a.rq_psn == 0xabcdef);
  CHECK(a.path_mtu == IBV_MTU_1024);  // the smaller of the two ports'
  CHECK(a.ah_attr.port_num == 1);
  CHECK(a.ah_attr.grh.sgid_index == 1);
  CHECK(a.ah_attr.grh.dgid.raw[15] == 7);
  const auto& rts = p.attrs_of(*modify_of(p, "cli.3", "RTS"));
  rts.resolve(own, &peer, "cli.3", a);
  CHECK(a.timeout == 17);
  CHECK(a.sq_psn == 0x1234);
  const auto& srv_rts = p.attrs_of(*modify_of(p, "srv.3", "RTS"));
  srv_rts.resolve(own, &peer, "srv.3", a);
  CHECK(a.sq_psn == 0x42);  // drawn at bring-up: the QP's own
}

TEST_CASE("a field that needs the peer fails to resolve without one, naming the field and the QP") {
  auto p = qpo::test::plan_of(kPair);
  const auto& rtr = p.attrs_of(*modify_of(p, "srv.0", "RTR"));
  ibv_qp_attr a{};
  const Peer* none = nullptr;
  CHECK_THROWS_WITH_AS(rtr.resolve(qpo::plan::OwnValues{}, none, "srv.0", a),
                       "ah_attr is 'peer' but QP 'srv.0' has no published peer", std::runtime_error);
}

TEST_CASE("a modify step carries what its judgement needs: states, mask, prediction and the scenario's expectation") {
  auto p = qpo::test::plan_of(R"(version: 1
devices: { d: { name: auto } }
cqs: { c: { device: d, depth: 512 } }
qps:
  qa: { pd: d, type: RC, send_cq: c, recv_cq: c, connect: qb,
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { max_dest_rd_atomic: 1, expect: EINVAL } } }
  qb: { pd: d, type: RC, send_cq: c, recv_cq: c, connect: qa,
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { timeout: 17 } } }
)");
  const auto& refused = p.modify_of(*modify_of(p, "qa", "RTS"));
  CHECK(refused.from == qpo::spec::QpState::RTR);
  CHECK(refused.to == qpo::spec::QpState::RTS);
  CHECK(refused.mask == modify_of(p, "qa", "RTS")->mask);
  CHECK_FALSE(refused.predicted_ok);  // max_dest_rd_atomic belongs to INIT->RTR
  CHECK(refused.expect_errno == EINVAL);
  CHECK(refused.expect_name == "EINVAL");
  CHECK(refused.bring_up);
  CHECK_FALSE(refused.quick());  // judged in full, never run ahead on a thread
  CHECK(refused.literal("max_dest_rd_atomic") == 1u);
  const auto& plain = p.modify_of(*modify_of(p, "qb", "RTS"));
  CHECK(plain.predicted_ok);
  CHECK_FALSE(plain.expects_failure());
  CHECK(plain.quick());
  CHECK(plain.literal("timeout") == 17u);
  CHECK_FALSE(plain.literal("sq_psn"));  // random: known only at run time
}
