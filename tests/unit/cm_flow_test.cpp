// src/cm without a device: the names and texts the run log will show for CM events, and
// addresses as the CM takes them.
#include <doctest/doctest.h>
#include <arpa/inet.h>

#include <cerrno>

#include "cm/cm.h"
#include "cm/flow.h"

using namespace qpo;

TEST_CASE("cm: event names are librdmacm's, prefixed as the C enum spells them") {
  CHECK(cm::event_name(RDMA_CM_EVENT_ESTABLISHED) == "RDMA_CM_EVENT_ESTABLISHED");
  CHECK(cm::event_name(RDMA_CM_EVENT_REJECTED) == "RDMA_CM_EVENT_REJECTED");
  CHECK(cm::event_name(RDMA_CM_EVENT_ADDR_ERROR) == "RDMA_CM_EVENT_ADDR_ERROR");
}

TEST_CASE("cm: reject reasons by the IB CM's numbers") {
  CHECK(cm::reject_reason(28) == "consumer defined");
  CHECK(cm::reject_reason(8) == "invalid service ID");
  CHECK(cm::reject_reason(1) == "no QP");
  CHECK(cm::reject_reason(33) == "invalid alternate flow label");
  CHECK(cm::reject_reason(34) == "reason 34");
  CHECK(cm::reject_reason(0) == "reason 0");
}

TEST_CASE("cm: a REJECTED event reads with its reason and the peer's private data up to the padding") {
  cm::Event e;
  e.type = RDMA_CM_EVENT_REJECTED;
  e.status = 28;
  e.private_data = {'g', 'o', ' ', 'a', 'w', 'a', 'y', 0, 0, 0};
  CHECK(cm::describe(e) == "RDMA_CM_EVENT_REJECTED (status 28: consumer defined, private data 'go away')");
}

TEST_CASE("cm: an error event reads with its errno") {
  cm::Event e;
  e.type = RDMA_CM_EVENT_ADDR_ERROR;
  e.status = -ETIMEDOUT;
  CHECK(cm::describe(e) == "RDMA_CM_EVENT_ADDR_ERROR (status -110 (ETIMEDOUT))");
  cm::Event ok;
  ok.type = RDMA_CM_EVENT_ESTABLISHED;
  CHECK(cm::describe(ok) == "RDMA_CM_EVENT_ESTABLISHED");
}

TEST_CASE("cm: waiting for one event and getting another, or none") {
  cm::Event e;
  e.type = RDMA_CM_EVENT_UNREACHABLE;
  e.status = -ETIMEDOUT;
  cm::Unexpected got("qa", "RDMA_CM_EVENT_CONNECT_RESPONSE", e, 0);
  CHECK(std::string(got.what()) ==
        "qa: waited for RDMA_CM_EVENT_CONNECT_RESPONSE, got RDMA_CM_EVENT_UNREACHABLE (status -110 (ETIMEDOUT))");
  REQUIRE(got.got());
  CHECK(got.got()->type == RDMA_CM_EVENT_UNREACHABLE);
  cm::Unexpected none("qb", "RDMA_CM_EVENT_CONNECT_REQUEST", std::nullopt, ETIMEDOUT);
  CHECK(std::string(none.what()) == "qb: waited for RDMA_CM_EVENT_CONNECT_REQUEST, no event came (timeout)");
  CHECK(!none.got());
}

TEST_CASE("cm: IPv4 and IPv6 literals become socket addresses with the port; names do not") {
  sockaddr_storage ss;
  REQUIRE(cm::make_sockaddr("10.0.1.2", 7471, &ss));
  CHECK(ss.ss_family == AF_INET);
  CHECK(ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port) == 7471);
  REQUIRE(cm::make_sockaddr("fd00:1::2", 7471, &ss));
  CHECK(ss.ss_family == AF_INET6);
  CHECK(ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port) == 7471);
  CHECK_FALSE(cm::make_sockaddr("lab-node-b", 7471, &ss));
}
