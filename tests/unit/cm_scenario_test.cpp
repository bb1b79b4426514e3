// The scenario language's rdma_cm (`cm:` on a QP): what the loader and check/cm.cpp say.
#include <doctest/doctest.h>

#include <string>

#include "unit/scenario_fixture.h"

namespace {

using qpo::test::load_validate;

// Two hosts, an RC pair; `a_cm`/`b_cm` are the QPs' cm: maps, `extra` more of qa's keys.
std::string pair(const std::string& a_cm, const std::string& b_cm, const std::string& extra = "",
                 const std::string& b_address = "lab-node-b") {
  return "version: 1\n"
         "name: t\n"
         "hosts: { a: { address: lab-node-a }, b: { address: " + b_address + " } }\n"
         "devices: { da: { host: a, name: auto }, db: { host: b, name: auto } }\n"
         "cqs: { ca: { device: da, depth: 512 }, cb: { device: db, depth: 512 } }\n"
         "qps:\n"
         "  qa: { pd: da, type: RC, send_cq: ca, recv_cq: ca, cm: " + a_cm + extra + " }\n"
         "  qb: { pd: db, type: RC, send_cq: cb, recv_cq: cb, cm: " + b_cm + " }\n";
}

}  // namespace

TEST_CASE("a cm: pair validates, and cm: peer sets connect: on both RC ends") {
  auto l = load_validate(pair("{ role: active, peer: qb, address: 10.0.1.2 }", "{ role: passive, peer: qa }"));
  CHECK_MESSAGE(l.errors() == 0, l.dump());
  REQUIRE(l.qp("qa"));
  CHECK(l.qp("qa")->connect.name == "qb");
  CHECK(l.qp("qb")->connect.name == "qa");
  CHECK(l.qp("qa")->cm.port == 7471);
}

TEST_CASE("Q543: an active side without address: whose peer host's address is not an IP") {
  auto l = load_validate(pair("{ role: active, peer: qb }", "{ role: passive, peer: qa }"));
  const auto* d = l.one("Q543");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "rdma_cm QP 'qa' needs 'address': the IP its connection resolves");
}

TEST_CASE("the passive host's address is the default when it is an IP") {
  auto l = load_validate(pair("{ role: active, peer: qb }", "{ role: passive, peer: qa }", "", "\"fd00:1::2\""));
  CHECK_MESSAGE(l.errors() == 0, l.dump());
  CHECK(l.qp("qa")->cm.address == "fd00:1::2");
}

TEST_CASE("Q125: an address that is not an IP literal, and an unknown role") {
  auto l = load_validate(pair("{ role: active, peer: qb, address: lab-b }", "{ role: listener, peer: qa }"));
  auto v = l.with_code("Q125");
  REQUIRE_MESSAGE(v.size() == 2, l.dump());
  CHECK(v[0]->message == "'lab-b' is not an IPv4 or IPv6 address");
  CHECK(v[1]->message == "unknown role 'listener'");
}

TEST_CASE("Q546: reject: on the active side") {
  auto l = load_validate(pair("{ role: active, peer: qb, address: 10.0.1.2, reject: no }", "{ role: passive, peer: qa }"));
  const auto* d = l.one("Q546");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "only the passive side rejects a connection");
}

TEST_CASE("Q544: the active side expects REJECTED from a peer that accepts") {
  auto l = load_validate(pair("{ role: active, peer: qb, address: 10.0.1.2, expect: { cm_event: REJECTED } }",
                              "{ role: passive, peer: qa }"));
  const auto* d = l.one("Q544");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "'qa' expects REJECTED, but 'qb' accepts");
}

TEST_CASE("Q127: private data past rdma_connect's 56 bytes") {
  std::string data(56, 'x');
  auto l = load_validate(pair("{ role: active, peer: qb, address: 10.0.1.2, private_data: " + data + " }",
                              "{ role: passive, peer: qa }"));
  const auto* d = l.one("Q127");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "56 bytes of private data (and a NUL) do not fit rdma_connect's 56 bytes");
}

TEST_CASE("Q541: an active side without peer is fine only when it expects a failure") {
  auto ok = load_validate(pair("{ role: active, address: 10.0.1.2, port: 7999, expect: { cm_event: REJECTED, reason: invalid service ID } }",
                               "{ role: passive, peer: qa }"));
  CHECK(ok.with_code("Q541").empty());
  auto bad = load_validate(pair("{ role: active, address: 10.0.1.2 }", "{ role: passive, peer: qa }"));
  const auto* d = bad.one("Q541");
  REQUIRE_MESSAGE(d, bad.dump());
  CHECK(d->message == "rdma_cm QP 'qa' needs 'peer'");
}

TEST_CASE("Q540: a transport rdma_cm does not connect") {
  auto l = load_validate(
      "version: 1\nname: t\n"
      "devices: { da: { name: auto } }\n"
      "cqs: { ca: { device: da, depth: 512 } }\n"
      "xrcds: { x: { device: da } }\n"
      "qps:\n"
      "  qx: { pd: da, type: XRC_SEND, send_cq: ca, cm: { role: active, address: 10.0.1.2, expect: { cm_event: timeout } } }\n");
  const auto* d = l.one("Q540");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "XRC_SEND QP 'qx' cannot connect through rdma_cm");
}

// Q549 (UC refused) is no longer used: UC ids are RDMA_PS_IB ids of type UC (cm/cm.h Id::endpoint).
namespace {
std::string uc_pair(const std::string& a_cm, const std::string& b_cm, const std::string& extra = "") {
  std::string y = pair(a_cm, b_cm, extra);
  for (size_t at = y.find("type: RC"); at != std::string::npos; at = y.find("type: RC")) y.replace(at, 8, "type: UC");
  return y;
}
}  // namespace

TEST_CASE("a UC cm: pair validates (no Q549 any more), and cm: peer sets connect: on both ends") {
  auto l = load_validate(uc_pair("{ role: active, peer: qb, address: 10.0.1.2 }", "{ role: passive, peer: qa }"));
  CHECK_MESSAGE(l.errors() == 0, l.dump());
  CHECK(l.with_code("Q549").empty());
  CHECK(l.qp("qa")->connect.name == "qb");
  CHECK(l.qp("qb")->connect.name == "qa");
}

TEST_CASE("Q312: a UC cm: QP that writes sq_psn at RTS: the CM sets UC's RTS sq_psn") {
  auto l = load_validate(uc_pair("{ role: active, peer: qb, address: 10.0.1.2 }", "{ role: passive, peer: qa }",
                                 ", states: { RTS: { sq_psn: 5 } }"));
  const auto* d = l.one("Q312");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "sq_psn of QP 'qa' is set by rdma_cm (RTS: rdma_init_qp_attr), not by the scenario");
  CHECK(d->rule == "rdma_cm computes UC RTS's sq_psn from the resolved route and the peer's connection messages");
}

TEST_CASE("Q127: a UC active side's private data over rdma_connect's 56 bytes names RDMA_PS_IB") {
  std::string big(56, 'x');
  auto l = load_validate(uc_pair("{ role: active, peer: qb, address: 10.0.1.2, private_data: " + big + " }",
                                 "{ role: passive, peer: qa }"));
  const auto* d = l.one("Q127");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "56 bytes of private data (and a NUL) do not fit rdma_connect's 56 bytes");
  CHECK(d->rule == "rdma_connect on RDMA_PS_IB: what the IB CM message leaves after the rdma_cm header");
}

// exchange_only (perftest -z): an RC pair with its own states:, the exchange through the CM.
namespace {
std::string exchange_pair(const std::string& a_cm, const std::string& b_cm, const std::string& type = "RC",
                          const std::string& workloads = "") {
  std::string states = type == "UD" ? "{ INIT: { pkey_index: 0, port_num: 1, qkey: 0x11 }, RTR: {}, RTS: { sq_psn: 0 } }"
                                    : "{ INIT: { pkey_index: 0, port_num: 1, qp_access_flags: [remote_write] },"
                                      " RTR: { path_mtu: auto, dest_qp_num: peer, rq_psn: peer,"
                                      " ah_attr: { is_global: true, grh: { dgid: peer, sgid_index: auto, hop_limit: 64 } } },"
                                      " RTS: { sq_psn: random } }";
  return "version: 1\n"
         "name: t\n"
         "hosts: { a: { address: lab-node-a }, b: { address: lab-node-b } }\n"
         "devices: { da: { host: a, name: auto }, db: { host: b, name: auto } }\n"
         "mrs: { ma: { pd: da, size: 4096, access: [local_write, remote_write] },"
         " mb: { pd: db, size: 4096, access: [local_write, remote_write] } }\n"
         "cqs: { ca: { device: da, depth: 512 }, cb: { device: db, depth: 512 } }\n"
         "qps:\n"
         "  qa: { pd: da, type: " + type + ", send_cq: ca, recv_cq: ca, cm: " + a_cm + ", states: " + states + " }\n"
         "  qb: { pd: db, type: " + type + ", send_cq: cb, recv_cq: cb, cm: " + b_cm + ", states: " + states + " }\n" +
         workloads;
}
}  // namespace

TEST_CASE("exchange_only: the pair keeps its states: (no Q312/Q313) and cm: peer sets connect:") {
  auto l = load_validate(exchange_pair("{ role: active, peer: qb, address: 10.0.1.2, exchange_only: true }",
                                       "{ role: passive, peer: qa, exchange_only: true }"));
  CHECK_MESSAGE(l.errors() == 0, l.dump());
  CHECK(l.qp("qa")->cm.exchange_only);
  CHECK(l.qp("qa")->connect.name == "qb");
  CHECK(l.qp("qa")->transitions.size() == 3);
}

TEST_CASE("Q542: only one end of the pair says exchange_only") {
  auto l = load_validate(exchange_pair("{ role: active, peer: qb, address: 10.0.1.2, exchange_only: true }",
                                       "{ role: passive, peer: qa }"));
  auto v = l.with_code("Q542");  // said from each end
  REQUIRE_MESSAGE(v.size() == 2, l.dump());
  CHECK(v[0]->message == "rdma_cm QPs 'qa' and 'qb' do not make a connection: only 'qa' says exchange_only");
  CHECK(v[1]->message == "rdma_cm QPs 'qb' and 'qa' do not make a connection: only 'qa' says exchange_only");
}

TEST_CASE("Q552: exchange_only with private_data:, and on a UD QP") {
  auto l = load_validate(exchange_pair("{ role: active, peer: qb, address: 10.0.1.2, exchange_only: true, private_data: hi }",
                                       "{ role: passive, peer: qa, exchange_only: true }"));
  const auto* d = l.one("Q552");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "QP 'qa' has private_data: and exchange_only");
  CHECK(d->hint == "drop private_data: the exchange fills it");
  auto u = load_validate(exchange_pair("{ role: active, peer: qb, address: 10.0.1.2, exchange_only: true }",
                                       "{ role: passive, peer: qa, exchange_only: true }", "UD"));
  auto v = u.with_code("Q552");
  REQUIRE_MESSAGE(v.size() == 2, u.dump());
  CHECK(v[0]->message == "UD QP 'qa' cannot take exchange_only");
  CHECK(v[0]->path == "qps.qa.cm.exchange_only");
}

TEST_CASE("Q553: the active side's REQ has no room for an MR the passive side's workload aims at") {
  auto l = load_validate(exchange_pair("{ role: active, peer: qb, address: 10.0.1.2, exchange_only: true }",
                                       "{ role: passive, peer: qa, exchange_only: true }", "RC",
                                       "workloads: { w: { qp: qb, op: rdma_write, local_mr: mb, remote_mr: ma, size: 64, iterations: 1 } }\n"));
  const auto* d = l.one("Q553");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "QP 'qa''s exchange is 76 bytes (the QP 36, its slots 20, MRs ma 20 each): rdma_connect carries 56");
  CHECK(d->path == "qps.qa.cm.exchange_only");
  // The passive side's REP has room for it (the same MR aimed at from qa: no error).
  auto ok = load_validate(exchange_pair("{ role: active, peer: qb, address: 10.0.1.2, exchange_only: true }",
                                        "{ role: passive, peer: qa, exchange_only: true }", "RC",
                                        "workloads: { w: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 64, iterations: 1 } }\n"));
  CHECK_MESSAGE(ok.errors() == 0, ok.dump());
}

namespace {
// pair() plus a second RC or UC pair (qc on host a -> qd on host b) listening on port 7471 too.
std::string two_listeners(const char* second_type) {
  return pair("{ role: active, peer: qb, address: 10.0.1.2 }", "{ role: passive, peer: qa }") +
         "  qc: { pd: da, type: " + second_type +
         ", send_cq: ca, recv_cq: ca, cm: { role: active, peer: qd, address: 10.0.1.2 } }\n"
         "  qd: { pd: db, type: " + second_type + ", send_cq: cb, recv_cq: cb, cm: { role: passive, peer: qc } }\n";
}
}  // namespace

TEST_CASE("Q545: two RC listeners on one host and port") {
  auto l = load_validate(two_listeners("RC"));
  const auto* d = l.one("Q545");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "port 7471 of RDMA_PS_TCP is listened on twice on host 'b'");
}

TEST_CASE("an RC and a UC listener share a port number: RDMA_PS_TCP and RDMA_PS_IB are separate spaces") {
  auto l = load_validate(two_listeners("UC"));
  CHECK_MESSAGE(l.with_code("Q545").empty(), l.dump());
  CHECK_MESSAGE(l.errors() == 0, l.dump());
}

TEST_CASE("Q554: an exchange_only QP whose states: stop at INIT") {
  std::string y = exchange_pair("{ role: active, peer: qb, address: 10.0.1.2, exchange_only: true }",
                                "{ role: passive, peer: qa, exchange_only: true }");
  // qb's states: only INIT (the CM brings nothing up for an exchange_only pair).
  auto at = y.find("  qb: ");
  auto s = y.find("states: ", at);
  y.replace(s, y.find('\n', s) - s, "states: { INIT: { pkey_index: 0, port_num: 1, qp_access_flags: [remote_write] } } }");
  auto l = load_validate(y);
  const auto* d = l.one("Q554");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "exchange_only QP 'qb' has no states: reaching RTR: it would stay at INIT");
}

TEST_CASE("Q555: a QP without cm: connecting to an exchange_only QP") {
  std::string y = exchange_pair("{ role: active, peer: qb, address: 10.0.1.2, exchange_only: true }",
                                "{ role: passive, peer: qa, exchange_only: true }") +
                  "  qc: { pd: da, type: RC, send_cq: ca, recv_cq: ca, connect: qb, states: { INIT: {}, RTR: {}, RTS: {} } }\n";
  auto l = load_validate(y);
  const auto* d = l.one("Q555");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "QP 'qc' connects to 'qb', whose exchange goes to its cm: peer 'qa' only");
}
