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

TEST_CASE("Q549: a UC QP with cm: is refused, saying why (the CM hands a UC QP RC attributes)") {
  std::string y = pair("{ role: active, peer: qb, address: 10.0.1.2 }", "{ role: passive, peer: qa }");
  for (size_t at = y.find("type: RC"); at != std::string::npos; at = y.find("type: RC")) y.replace(at, 8, "type: UC");
  auto l = load_validate(y);
  auto v = l.with_code("Q549");
  REQUIRE_MESSAGE(v.size() == 2, l.dump());
  CHECK(v[0]->message == "UC QP 'qa' cannot connect through rdma_cm in qpo yet");
  CHECK(v[0]->path == "qps.qa.cm");
  CHECK(v[1]->message == "UC QP 'qb' cannot connect through rdma_cm in qpo yet");
  CHECK_MESSAGE(l.errors() == 2, l.dump());  // nothing follows from it (no lone-QP Q502s)
}
