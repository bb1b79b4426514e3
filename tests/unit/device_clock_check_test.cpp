// `clock: device` on the latency built-ins (Q704-Q706): the initiator times its iterations by
// the completion timestamps of its send CQ, so that CQ needs `timestamps: true`, no other QP of
// the workload completing there, and every work request signaled.
#include <doctest/doctest.h>

#include "scenario_fixture.h"

using qpo::test::col_of;
using qpo::test::line_of;
using qpo::test::load_validate;

namespace {

// An RC pair, qa on CQ ca and qb on CQ cb, and a write_lat workload with `args`.
std::string lat_pair(const std::string& cqs, const std::string& args, const std::string& qb_cq = "cb") {
  return "version: 1\n"
         "devices: { d: {} }\n"
         "mrs:\n"
         "  ma: { pd: d, size: 16KiB, access: [local_write, remote_write] }\n"
         "  mb: { pd: d, size: 16KiB, access: [local_write, remote_write] }\n"
         "cqs: " + cqs + "\n"
         "qps:\n"
         "  qa: { pd: d, type: RC, send_cq: ca, recv_cq: ca, connect: qb,\n"
         "        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n"
         "  qb: { pd: d, type: RC, send_cq: " + qb_cq + ", recv_cq: " + qb_cq + ", connect: qa,\n"
         "        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n"
         "workloads:\n"
         "  lat: { qp: qa, script: 'builtin:write_lat', local_mr: ma, remote_mr: mb, args: " + args + " }\n";
}

const char* kStampedCqs = "{ ca: { device: d, timestamps: true }, cb: { device: d } }";

}  // namespace

TEST_CASE("clock: device with a timestamped send CQ of the initiator's own validates") {
  auto l = load_validate(lat_pair(kStampedCqs, "{ clock: device }"));
  CHECK_MESSAGE(l.errors() == 0, l.dump());
}

TEST_CASE("clock: device on a send CQ without timestamps is Q704 at the clock arg") {
  std::string y = lat_pair("{ ca: { device: d }, cb: { device: d } }", "{ clock: device }");
  auto l = load_validate(y);
  const auto* d = l.one("Q704");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "clock: device reads QP 'qa''s send CQ 'ca' for completion timestamps, and it has no 'timestamps: true'");
  CHECK(d->path == "workloads.lat.args.clock");
  CHECK(d->loc.line == line_of(y, "clock: device"));
  CHECK(d->hint == "add 'timestamps: true' to cqs.ca (the run then needs the cq_timestamps capability)");
}

TEST_CASE("clock: host (the default) needs no timestamps") {
  auto l = load_validate(lat_pair("{ ca: { device: d }, cb: { device: d } }", "{ clock: host }"));
  CHECK_MESSAGE(l.errors() == 0, l.dump());
}

TEST_CASE("clock: device on a CQ the peer completes on too is Q705 naming the peer") {
  std::string y = lat_pair("{ ca: { device: d, timestamps: true } }", "{ clock: device }", "ca");
  auto l = load_validate(y);
  const auto* d = l.one("Q705");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "clock: device needs QP 'qa''s send CQ 'ca' to itself; QP 'qb' of the workload completes there too");
  CHECK(d->hint == "give QP 'qa' a CQ of its own");
}

TEST_CASE("clock: device with cq_mod 16 is Q706 at cq_mod") {
  std::string y = lat_pair(kStampedCqs, "{ clock: device, cq_mod: 16 }");
  auto l = load_validate(y);
  const auto* d = l.one("Q706");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "clock: device times each iteration by its own completion; cq_mod is 16");
  CHECK(d->path == "workloads.lat.args.cq_mod");
  CHECK(d->loc.col == col_of(y, "cq_mod: 16"));
}

TEST_CASE("clock: device with cq_mod 1 written as 1 or 1.0 is no Q706; on read_lat cq_mod is not judged") {
  CHECK(load_validate(lat_pair(kStampedCqs, "{ clock: device, cq_mod: 1 }")).with_code("Q706").empty());
  CHECK(load_validate(lat_pair(kStampedCqs, "{ clock: device, cq_mod: 1.0 }")).with_code("Q706").empty());
  std::string y = lat_pair(kStampedCqs, "{ clock: device, cq_mod: 4 }");
  y.replace(y.find("builtin:write_lat"), 17, "builtin:read_lat");
  auto l = load_validate(y);
  CHECK_MESSAGE(l.errors() == 0, l.dump());  // reads are signaled one by one anyway
}

TEST_CASE("clock: device on a bandwidth built-in is not judged here (its setup() rejects the option)") {
  std::string y = lat_pair("{ ca: { device: d }, cb: { device: d } }", "{ clock: device }");
  auto pos = y.find("builtin:write_lat");
  y.replace(pos, 17, "builtin:write_bw");
  auto l = load_validate(y);
  CHECK(l.with_code("Q704").empty());
}
