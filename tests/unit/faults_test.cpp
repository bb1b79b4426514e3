// Faults: two on one netdev are a validation error (Q625, check/faults.cpp); a root qdisc that
// is the host's own configuration is refused, not replaced (exec/faults.cpp); the teardown's
// report line (report::step_line with a detail).
#include <doctest/doctest.h>

#include <string>

#include "check/validate.h"
#include "exec/faults.h"
#include "report/step_line.h"
#include "plan_fixture.h"
#include "scenario_fixture.h"

using qpo::test::line_of;
using qpo::test::load_validate;

namespace {

const std::string kWrite =
    "workloads:\n"
    "  w: { qp: qa, op: rdma_write, size: 4KiB, iterations: 10, local_mr: ma, remote_mr: mb }\n";

std::string with_faults(const std::string& faults) {
  return qpo::test::rc_pair(
      "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12, "
      "ah_attr: { is_global: true, grh: { dgid: peer, sgid_index: auto, hop_limit: 1 } } }",
      "{ path_mtu: auto }", kWrite + "faults:\n" + faults);
}

// Two hosts, each with one device named `a_dev` / `b_dev`, and the given faults.
std::string two_hosts(const std::string& a_dev, const std::string& b_dev, const std::string& faults) {
  return "version: 1\n"
         "name: two\n"
         "hosts: { a: { address: x }, b: { address: y } }\n"
         "devices:\n"
         "  da: { host: a, name: " + a_dev + ", gid_index: auto }\n"
         "  db: { host: b, name: " + b_dev + ", gid_index: auto }\n"
         "faults:\n" + faults;
}

}  // namespace

TEST_CASE("Q625: two traffic faults on one device name both, the device, and where the first is") {
  std::string y = with_faults("  lossy: { device: da, loss: 1% }\n  slow: { device: da, delay: 1ms }\n");
  auto l = load_validate(y);
  const auto* d = l.one("Q625");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == qpo::diag::Severity::Error);
  CHECK(d->message ==
        "faults 'lossy' and 'slow' both act on device 'da' during traffic: one netem per device; merge them into one "
        "fault");
  CHECK(d->path == "faults.slow.device");
  CHECK(d->loc.line == line_of(y, "slow: { device: da"));
  REQUIRE(d->related.size() == 1);
  CHECK(d->related[0].loc.line == line_of(y, "lossy: { device: da"));
  CHECK(d->related[0].label == "fault 'lossy' on device 'da' here");
  CHECK(d->rule ==
        "a fault replaces its netdev's root qdisc (prio, one netem band, u32 filters for udp dport 4791): a second one "
        "replaces the first's netem, and removing either (tc qdisc del root) removes both");
}

TEST_CASE("Q625: a whole-run fault and a traffic fault on one device overlap during traffic") {
  std::string y = with_faults("  base: { device: da, delay: 1ms, during: all }\n  burst: { device: da, loss: 5% }\n");
  auto l = load_validate(y);
  const auto* d = l.one("Q625");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message ==
        "fault 'burst' (during: traffic) and fault 'base' (during: all) both act on device 'da' during traffic: one "
        "netem per device, and removing the traffic fault after the workloads would remove the other too; merge them "
        "into one fault");
  CHECK(d->loc.line == line_of(y, "burst: { device: da"));
}

TEST_CASE("Q625: two whole-run faults on one device") {
  auto l = load_validate(with_faults("  a1: { device: da, loss: 1%, during: all }\n  a2: { device: da, loss: 2%, during: all }\n"));
  const auto* d = l.one("Q625");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message ==
        "faults 'a1' and 'a2' both act on device 'da' during the whole run: one netem per device; merge them into one "
        "fault");
}

TEST_CASE("Q625: three faults on one device are two errors, each naming the first") {
  auto l = load_validate(with_faults(
      "  f1: { device: da, loss: 1% }\n  f2: { device: da, loss: 2% }\n  f3: { device: da, loss: 3% }\n"));
  auto v = l.with_code("Q625");
  REQUIRE(v.size() == 2);
  CHECK(v[0]->path == "faults.f2.device");
  CHECK(v[1]->path == "faults.f3.device");
  CHECK(v[1]->related.at(0).label == "fault 'f1' on device 'da' here");
}

TEST_CASE("one fault per device is no Q625") {
  auto l = load_validate(with_faults("  lossy: { device: da, loss: 1%, delay: 1ms }\n"));
  CHECK_MESSAGE(l.with_code("Q625").empty(), l.dump());
}

TEST_CASE("Q625: two scenario devices opening one device (same name and port on one host) share its netdev") {
  std::string y =
      "version: 1\n"
      "name: same\n"
      "devices:\n"
      "  d1: { name: rxe0, gid_index: auto }\n"
      "  d2: { name: rxe0, gid_index: auto }\n"
      "faults:\n"
      "  f1: { device: d1, loss: 1% }\n"
      "  f2: { device: d2, loss: 2% }\n";
  auto l = load_validate(y);
  const auto* d = l.one("Q625");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message ==
        "faults 'f1' and 'f2' both act on device 'd1' (rxe0) and device 'd2' (rxe0), one netdev, during traffic: one "
        "netem per device; merge them into one fault");
}

TEST_CASE("faults on two hosts' devices of one name are apart (each host its own machine), but not with --local") {
  std::string y = two_hosts("rxe0", "rxe0", "  fa: { device: da, loss: 1% }\n  fb: { device: db, loss: 1% }\n");
  auto l = load_validate(y);
  CHECK_MESSAGE(l.with_code("Q625").empty(), l.dump());
  REQUIRE(l.scenario);
  qpo::diag::DiagSink local;
  qpo::check::check_local_faults(*l.scenario, local);
  REQUIRE(local.all().size() == 1);
  const auto& d = local.all()[0];
  CHECK(d.code == "Q625");
  CHECK(d.message ==
        "faults 'fa' and 'fb' both act on device 'da' (rxe0 on host a) and device 'db' (rxe0 on host b), one netdev "
        "with --local, during traffic: one netem per device; merge them into one fault");
  CHECK(d.loc.line == line_of(y, "fb: { device: db"));
}

TEST_CASE("--local: two hosts' devices of different names are two netdevs, no Q625") {
  auto l = load_validate(two_hosts("rxe0", "rxe1", "  fa: { device: da, loss: 1% }\n  fb: { device: db, loss: 1% }\n"));
  REQUIRE(l.scenario);
  qpo::diag::DiagSink local;
  qpo::check::check_local_faults(*l.scenario, local);
  CHECK(local.all().empty());
}

TEST_CASE("parse_root_qdisc reads the kind and handle of tc qdisc show's first qdisc line") {
  auto q = qpo::exec::parse_root_qdisc("qdisc fq_codel 0: root refcnt 2 limit 10240p flows 1024 quantum 1514\n");
  CHECK(q.kind == "fq_codel");
  CHECK(q.handle == "0:");
  q = qpo::exec::parse_root_qdisc("qdisc tbf 8001: root refcnt 2 rate 1Gbit burst 4Kb lat 400ms \n");
  CHECK(q.kind == "tbf");
  CHECK(q.handle == "8001:");
  q = qpo::exec::parse_root_qdisc("");
  CHECK(q.kind.empty());
  CHECK(q.handle.empty());
}

TEST_CASE("a root qdisc the kernel attached (handle 0:, whatever its kind) may be replaced") {
  using qpo::exec::root_qdisc_refusal;
  CHECK(root_qdisc_refusal("eth0", {"noqueue", "0:"}).empty());
  CHECK(root_qdisc_refusal("eth0", {"pfifo_fast", "0:"}).empty());
  CHECK(root_qdisc_refusal("eth0", {"fq_codel", "0:"}).empty());
  CHECK(root_qdisc_refusal("eth0", {"mq", "0:"}).empty());
  CHECK(root_qdisc_refusal("eth0", {"fq", "0:"}).empty());  // net.core.default_qdisc=fq
  CHECK(root_qdisc_refusal("eth0", {"", ""}).empty());      // none shown
}

TEST_CASE("a root qdisc someone installed (tbf, mqprio) is refused with the netdev, the qdisc and why") {
  using qpo::exec::root_qdisc_refusal;
  CHECK(root_qdisc_refusal("eth0", {"tbf", "8001:"}) ==
        "netdev eth0 has root qdisc tbf (handle 8001:), not a kernel default (noqueue, pfifo_fast, fq_codel, mq, handle 0:): qpo "
        "would replace it, and removing the fault would leave the kernel default; remove it first or run the fault on "
        "another device");
  CHECK(root_qdisc_refusal("ens1f0", {"mqprio", "8002:"}).find("netdev ens1f0 has root qdisc mqprio (handle 8002:)") == 0);
}

TEST_CASE("an mq or fq_codel someone installed (a handle of their own) is refused too: the kind is not the test") {
  using qpo::exec::root_qdisc_refusal;
  CHECK(root_qdisc_refusal("eth0", {"mq", "1:"}).find("netdev eth0 has root qdisc mq (handle 1:)") == 0);
  CHECK(root_qdisc_refusal("eth0", {"fq_codel", "8001:"}).find("netdev eth0 has root qdisc fq_codel (handle 8001:)") == 0);
}

TEST_CASE("a fault's own prio 1: found as root qdisc is refused and named as a fault's") {
  std::string why = qpo::exec::root_qdisc_refusal("eth0", {"prio", "1:"});
  CHECK(why ==
        "netdev eth0 has root qdisc prio (handle 1:), not a kernel default (noqueue, pfifo_fast, fq_codel, mq, handle 0:): qpo "
        "would replace it, and removing the fault would leave the kernel default; remove it first or run the fault on "
        "another device (prio 1: is a fault's own qdisc: another fault on this netdev, or one a killed qpo left "
        "behind: 'tc qdisc del dev eth0 root' removes it)");
}

TEST_CASE("step_line with a detail fills every field it is given and nothing else") {
  auto r = qpo::report::step_line("a", "teardown", "ip link set", "da", "dev eth0 up", qpo::report::StepStatus::Ok,
                                  "the link a step took down is up again");
  CHECK(r.host == "a");
  CHECK(r.phase == "teardown");
  CHECK(r.verb == "ip link set");
  CHECK(r.object == "da");
  CHECK(r.detail == "dev eth0 up");
  CHECK(r.status == qpo::report::StepStatus::Ok);
  CHECK(r.message == "the link a step took down is up again");
  CHECK(r.err == 0);
  CHECK(r.micros == 0);
  CHECK(r.plan_step == 0);
}

TEST_CASE("the plan's fault step names the RoCEv2 port and that the root qdisc is read first") {
  auto p = qpo::test::plan_of(with_faults("  lossy: { device: da, loss: 1% }\n"));
  auto faults = qpo::test::steps_of(p, qpo::plan::StepKind::Fault);
  REQUIRE(faults.size() == 1);
  std::string args;
  for (const auto& a : faults[0]->args) args += a.name + "=" + a.value + "; ";
  CHECK(args ==
        "device=da (its netdev); netem=loss 1% delay 0us corrupt 0% duplicate 0% reorder 0%; packets=RoCEv2 (udp "
        "dport 4791); root qdisc=a kernel default, else the step fails; during=traffic; ");
}
