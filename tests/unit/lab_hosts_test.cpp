// A multi-host scenario in the lab (cli/lab_hosts.h): the two guests' commands, the address
// overrides guest a's qpo run gets, the limit of two guests; and `qpo run --local` refusing a
// fault between hosts that --local puts on one device (Q511).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "shell_command.h"
#include "check/validate.h"
#include "cli/lab_hosts.h"
#include "scenario_fixture.h"

namespace {

using qpo::test::load_validate;

// Two hosts, an RC write from a to b, a fault on host a's device. `db_name` is host b's device.
std::string two_hosts_with_fault(const std::string& db_name = "rxe0") {
  return "version: 1\n"
         "name: two-hosts-fault\n"
         "hosts: { a: { address: lab-node-a }, b: { address: lab-node-b } }\n"
         "devices:\n"
         "  da: { host: a, name: rxe0 }\n"
         "  db: { host: b, name: " + db_name + " }\n"
         "mrs:\n"
         "  ma: { pd: da, size: 64KiB, access: [local_write] }\n"
         "  mb: { pd: db, size: 64KiB, access: [local_write, remote_write] }\n"
         "cqs: { ca: { device: da }, cb: { device: db } }\n"
         "qps:\n"
         "  qa: { pd: da, type: RC, send_cq: ca, recv_cq: ca, connect: qb, states: { INIT: {}, RTR: {}, RTS: {} } }\n"
         "  qb: { pd: db, type: RC, send_cq: cb, recv_cq: cb, connect: qa,\n"
         "        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }\n"
         "workloads:\n"
         "  write: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 4KiB, iterations: 10 }\n"
         "faults:\n"
         "  lossy: { device: da, loss: 1% }\n";
}

// Two hosts with IP addresses, an rdma_cm RC pair whose active side leaves address: to its
// default (the passive host's address); `passive_on` is the host of the passive QP.
std::string two_hosts_cm(const std::string& b_address = "192.168.7.2", char passive_on = 'b') {
  char active_on = passive_on == 'b' ? 'a' : 'b';
  std::string a_address = passive_on == 'b' ? "192.168.7.1" : b_address;
  std::string other = passive_on == 'b' ? b_address : "192.168.7.1";
  return std::string("version: 1\n") +
         "hosts: { a: { address: \"" + a_address + "\" }, b: { address: \"" + other + "\" } }\n"
         "devices: { da: { host: a, name: auto }, db: { host: b, name: auto } }\n"
         "mrs:\n"
         "  ma: { pd: d" + active_on + ", size: 64KiB, access: [local_write] }\n"
         "  mb: { pd: d" + passive_on + ", size: 64KiB, access: [local_write, remote_write] }\n"
         "cqs: { ca: { device: da }, cb: { device: db } }\n"
         "qps:\n"
         "  qa: { pd: d" + active_on + ", type: RC, send_cq: c" + active_on + ", recv_cq: c" + active_on +
         ", cm: { role: active, peer: qb, port: 7471 } }\n"
         "  qb: { pd: d" + passive_on + ", type: RC, send_cq: c" + passive_on + ", recv_cq: c" + passive_on +
         ", cm: { role: passive, peer: qa, port: 7471 } }\n"
         "workloads:\n"
         "  write: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 4KiB, iterations: 10 }\n";
}

// The scenario as guest a's qpo run loads it: with every --set flag the lab gives it.
qpo::test::Loaded in_lab(const std::string& yaml) {
  auto checked = load_validate(yaml);
  REQUIRE_MESSAGE(checked.checked, checked.dump());
  auto g = qpo::cli::lab_guest_commands({"a", "b"}, "/opt/qpo", {}, "/t", "/s.yaml",
                                        qpo::cli::lab_cm_addresses(checked.checked->model(), {"a", "b"}));
  qpo::test::Loaded l(yaml);
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink, g.overrides);
  REQUIRE_MESSAGE(l.scenario, l.dump());
  l.checked.emplace(qpo::check::validate(*l.scenario, l.sink));
  return l;
}

using Outcome = qpo::test::CommandOutcome;

Outcome run_qpo(const std::string& args) {
  std::string cmd = std::string(QPO_BINARY) + " " + args + " 2>&1";
  return qpo::test::run_command(cmd);
}

std::string write_file(const std::string& tag, const std::string& text) {
  std::string path = "/tmp/qpo-lab-hosts-" + tag + "-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("lab guests: guest a runs the controller with host a local and host b at guest b's agent") {
  auto g = qpo::cli::lab_guest_commands({"a", "b"}, "/opt/qpo", {"--format", "json"}, "/tmp/t/token", "/s/x.yaml");
  CHECK(g.a ==
        "exec '/opt/qpo' 'run' '--no-lab' '--token-file' '/tmp/t/token' '--format' 'json' '--set' "
        "'hosts.a.address=localhost' '--set' 'hosts.b.address=\"tcp://[fd00:1::2]:7000\"' '/s/x.yaml'");
  CHECK(g.b == "QPO_AGENT_ONCE=1 exec '/opt/qpo' 'agent' '--listen' '[::]:7000' '--token-file' '/tmp/t/token'");
  REQUIRE(g.overrides.size() == 2);
}

TEST_CASE("lab guests: the address overrides load as the addresses the controller reaches") {
  auto g = qpo::cli::lab_guest_commands({"a", "b"}, "/opt/qpo", {}, "/t", "/s.yaml");
  qpo::test::Loaded l(two_hosts_with_fault());
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink, g.overrides);
  REQUIRE_MESSAGE(l.scenario, l.dump());
  CHECK(l.errors() == 0);
  CHECK(l.scenario->host("a")->address == "localhost");
  CHECK(l.scenario->host("b")->address == "tcp://[fd00:1::2]:7000");
}

TEST_CASE("lab guests: an rdma_cm QP without address: connects to its passive host's guest (issue 30 item 17a)") {
  auto checked = load_validate(two_hosts_cm());
  REQUIRE_MESSAGE(checked.errors() == 0, checked.dump());
  CHECK(checked.checked->model().qp("qa")->cm.address == "192.168.7.2");  // validate: host b's address
  CHECK(qpo::cli::lab_cm_addresses(checked.checked->model(), {"a", "b"}) ==
        std::vector<std::string>{"qps.qa.cm.address=\"10.0.1.2\""});
  auto l = in_lab(two_hosts_cm());
  CHECK_MESSAGE(l.errors() == 0, l.dump());  // was Q543: host b's address became tcp://[fd00:1::2]:7000
  CHECK(l.checked->model().qp("qa")->cm.address == "10.0.1.2");
}

TEST_CASE("lab guests: the cm default keeps IPv6, and a passive QP in guest a gets guest a's IP") {
  auto v6 = in_lab(two_hosts_cm("fd00:9::2"));
  CHECK_MESSAGE(v6.errors() == 0, v6.dump());
  CHECK(v6.checked->model().qp("qa")->cm.address == "fd00:1::2");
  auto on_a = in_lab(two_hosts_cm("192.168.7.2", 'a'));
  CHECK_MESSAGE(on_a.errors() == 0, on_a.dump());  // host a became localhost
  CHECK(on_a.checked->model().qp("qa")->cm.address == "10.0.1.1");
}

TEST_CASE("lab guests: an address: the file gives is the file's, also in the lab") {
  std::string y = two_hosts_cm();
  y.replace(y.find("peer: qb, port"), 14, "peer: qb, address: 10.0.1.2, port");
  auto checked = load_validate(y);
  REQUIRE(checked.checked);
  CHECK(qpo::cli::lab_cm_addresses(checked.checked->model(), {"a", "b"}).empty());
}

TEST_CASE("lab guests: shell quoting keeps a quote inside a word") {
  CHECK(qpo::cli::shell_quote("it's") == "'it'\\''s'");
  CHECK(qpo::cli::shell_quote("") == "''");
}

TEST_CASE("lab guests: two hosts fit, three say the lab has two guests") {
  CHECK(qpo::cli::lab_hosts_problem({"a", "b"}).empty());
  CHECK(qpo::cli::lab_hosts_problem({"a", "b", "c"}) ==
        "the scenario has 3 hosts (a, b, c), the Soft-RoCE lab has 2 guests (lab.sh run2); run it with --local "
        "(every host on one device, in one guest) or on machines with RDMA devices");
}

TEST_CASE("Q511 under --local: a fault between two hosts on the same device name is an error") {
  auto l = load_validate(two_hosts_with_fault());
  REQUIRE_MESSAGE(l.checked, l.dump());
  CHECK(l.errors() == 0);
  CHECK(l.with_code("Q511").empty());  // validate alone: the hosts are different machines
  qpo::diag::DiagSink sink;
  qpo::check::check_local_faults(l.checked->model(), sink);
  REQUIRE(sink.all().size() == 1);
  const auto& d = sink.all()[0];
  CHECK(d.code == "Q511");
  CHECK(d.severity == qpo::diag::Severity::Error);
  CHECK(d.path == "faults.lossy.device");
  CHECK(d.loc.line == qpo::test::line_of(two_hosts_with_fault(), "lossy:"));
  CHECK(d.message ==
        "with --local hosts a and b share one device on this machine, which short-cuts workload 'write' between "
        "them, so fault 'lossy' cannot touch it");
  REQUIRE(d.related.size() == 2);
  CHECK(d.related[1].label == "device 'db' (host b, rxe0)");
}

TEST_CASE("Q511 under --local: hosts on differently named devices (say rxe0 and rxe1 on a veth pair) are fine") {
  auto l = load_validate(two_hosts_with_fault("rxe1"));
  REQUIRE_MESSAGE(l.checked, l.dump());
  qpo::diag::DiagSink sink;
  qpo::check::check_local_faults(l.checked->model(), sink);
  CHECK(sink.all().empty());
}

TEST_CASE("qpo run --local with a fault between hosts: error Q511, exit 1, nothing run") {
  auto file = write_file("local", two_hosts_with_fault());
  auto o = run_qpo("run --local --no-lab " + file);
  CHECK(o.exit_code == 1);
  CHECK_MESSAGE(o.output.find("error[Q511]: with --local hosts a and b share one device on this machine") !=
                    std::string::npos,
                o.output);
  CHECK(o.output.find(file + ": not running it with --local\n") != std::string::npos);
  CHECK(o.output.find("PASS") == std::string::npos);
  std::remove(file.c_str());
}

TEST_CASE("qpo run --lab with three hosts: says the lab has two guests, exit 2, no guest booted") {
  std::string text = two_hosts_with_fault();
  text.replace(text.find("hosts: {"), std::string("hosts: {").size(), "hosts: { c: {}, ");
  text.replace(text.find("devices:\n"), std::string("devices:\n").size(), "devices:\n  dc: { host: c, name: rxe0 }\n");
  auto file = write_file("three", text);
  auto o = run_qpo("run --lab " + file);
  CHECK(o.exit_code == 2);
  CHECK_MESSAGE(o.output.find("qpo: the scenario has 3 hosts (c, a, b), the Soft-RoCE lab has 2 guests") !=
                    std::string::npos,
                o.output);
  CHECK(o.output.find("lab:") == std::string::npos);  // lab.sh never started
  std::remove(file.c_str());
}

namespace {

// `qpo run --lab ARGS` with a stand-in lab.sh (QPO_LAB_SCRIPT) that prints the arguments it
// got, one per line: what qpo asks of the lab, without booting a guest.
std::string lab_args_of(const std::string& args) {
  std::string script = "/tmp/qpo-lab-hosts-fake-lab-" + std::to_string(getpid()) + ".sh";
  std::ofstream(script) << "#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; done\n";
  chmod(script.c_str(), 0755);
  std::string cmd = "QPO_LAB_SCRIPT=" + script + " " + QPO_BINARY + " run --lab " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  std::remove(script.c_str());
  return out;
}

}  // namespace

TEST_CASE("phase timeout: the default grows by 0.25 s per QP (1,000 QPs: 370 s), in guest a's qpo run") {
  std::string out = lab_args_of(std::string(QPO_SOURCE_DIR) + "/bench/two-host-1000-qps.yaml");
  CHECK_MESSAGE(out.find("'--phase-timeout' '370'") != std::string::npos, out);
}

TEST_CASE("phase timeout: two QPs keep the 120 s default; --phase-timeout given wins") {
  auto file = write_file("phase", two_hosts_with_fault());
  std::string out = lab_args_of(file);
  CHECK_MESSAGE(out.find("'--phase-timeout' '120'") != std::string::npos, out);
  out = lab_args_of("--phase-timeout 45 " + file);
  CHECK_MESSAGE(out.find("'--phase-timeout' '45'") != std::string::npos, out);
  std::remove(file.c_str());
}
