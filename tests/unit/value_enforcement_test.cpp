// Value rules say truthfully who rejects a value past each bound (schemas/verbs-rules.yaml
// `enforced_by`, per bound where the bounds differ): the loader, validate's Q401, `qpo rules
// show --values` and the probe's prediction all read the same per-bound answer.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "probe/cases.h"
#include "scenario_fixture.h"
#include "spec/providers.h"
#include "spec/rules.h"

using qpo::diag::Severity;
using qpo::spec::QpState;
using qpo::test::load_validate;
using qpo::test::rc_pair;

namespace {

const qpo::spec::RuleTable& rules() { return qpo::spec::RuleTable::builtin(); }

std::string rules_show(std::vector<std::string> args) {
  CLI::App app{"qpo", "qpo"};
  auto action = qpo::cli::add_rules(app);
  args.insert(args.begin(), "rules");
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  app.parse(args);
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  action();
  std::cout.rdbuf(old);
  return out.str();
}

// The line of `text` that starts with `prefix`, or "".
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

const std::string kRulesHead =
    "source: test\nstates: [RESET, INIT]\nqp_types:\n  - { name: RC, kernel: IB_QPT_RC, ibv: 2, user: true }\n"
    "attributes:\n  - { mask: IBV_QP_STATE, bit: 0, fields: [qp_state] }\ntransitions: []\nvalues:\n";

std::string parse_error(const std::string& values) {
  try {
    qpo::spec::RuleTable::parse(kRulesHead + values);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// The probe's cases for one QP type on an rxe-like device (one port, 128 outstanding reads).
std::vector<qpo::probe::Case> rxe_cases(const std::string& type, const std::string& provider = "rxe") {
  qpo::probe::DeviceFacts facts{provider, {{"max_qp_rd_atom", 128}, {"max_qp_init_rd_atom", 128}, {"phys_port_cnt", 1}}};
  return qpo::probe::cases_for_type(rules(), rules().type_index(type), facts);
}

const qpo::probe::Case* find(const std::vector<qpo::probe::Case>& cases, QpState from, QpState to,
                             const std::string& what) {
  for (const auto& c : cases)
    if (c.cur == from && c.next == to && c.key.text() == what) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("path_mtu's bounds are enforced by different parts: nothing below 1, rxe above 5") {
  const auto* r = rules().value_rule("path_mtu");
  REQUIRE(r);
  CHECK(r->below_by == "none");
  CHECK(r->above_by == "provider");
  CHECK(r->providers == std::vector<std::string>{"rxe"});
  CHECK(qpo::spec::enforced_by_text(*r) == "below: none, above: provider");
}

TEST_CASE("path_mtu 0 is a Q401 warning: nothing rejects it, the provider stores it") {
  auto l = load_validate(rc_pair("{ path_mtu: 0 }"));
  const auto* d = l.one("Q401");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == Severity::Warning);
  CHECK(d->message == "path_mtu = 0 is outside 1..5");
  CHECK(d->rule ==
        "value range of path_mtu (below 1: nothing rejects it: the kernel accepts it and the provider stores it as is); "
        "rxe refuses a path_mtu above its port's max MTU and stores 0, which is no MTU (ib_mtu_enum_to_int gives -1)");
}

TEST_CASE("path_mtu 6 is a Q401 error naming rxe as the one that rejects it") {
  auto l = load_validate(rc_pair("{ path_mtu: 6 }"));
  const auto* d = l.one("Q401");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == Severity::Error);
  CHECK(d->message == "path_mtu = 6 is outside 1..5");
  CHECK(d->rule.rfind("value range of path_mtu (above 5: providers rxe reject it: EINVAL; others may store or "
                      "truncate it); ",
                      0) == 0);
}

TEST_CASE("path_mig_state 3 is a Q401 warning: the kernel and rxe accept and store it") {
  std::string y = rc_pair();
  y.replace(y.find("sq_psn: random,"), 15, "sq_psn: random, path_mig_state: 3,");
  auto l = load_validate(y);
  const auto* d = l.one("Q401");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == Severity::Warning);
  CHECK(d->rule == "value range of path_mig_state (nothing rejects it: the kernel accepts it and the provider stores "
                   "it as is); 3 is no ibv_mig_state; rxe stores it (RoCE has no path migration)");
}

TEST_CASE("dest_qp_num 2^24 is a Q401 warning naming the 24-bit field") {
  auto l = load_validate(rc_pair("{ path_mtu: auto, dest_qp_num: 0x1000000 }"));
  const auto* d = l.one("Q401");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == Severity::Warning);
  CHECK(d->rule.rfind("value range of dest_qp_num (only the 24-bit IBTA field bounds it: the kernel accepts it", 0) == 0);
}

TEST_CASE("no value rule claims the kernel for a bound the kernel core does not enforce") {
  // Linux 6.1 uverbs modify_qp checks port numbers (rdma_is_port_valid) and the states; the
  // rest it passes on, and _ib_modify_qp checks none of these values.
  for (const char* name : {"path_mtu", "path_mig_state", "qkey", "dest_qp_num", "qp_access_flags",
                           "en_sqd_async_notify", "alt_timeout"}) {
    const auto* r = rules().value_rule(name);
    REQUIRE(r);
    CHECK_MESSAGE(r->below_by != "kernel", name);
    CHECK_MESSAGE(r->above_by != "kernel", name);
  }
  CHECK(rules().value_rule("port_num")->above_by == "kernel");
  CHECK(rules().value_rule("port_num")->device_cap == "phys_port_cnt");
}

TEST_CASE("rules show --values prints each bound's enforcer for path_mtu") {
  auto text = rules_show({"show", "--type", "RC", "--from", "INIT", "--to", "RTR", "--values"});
  CHECK(line_starting(text, "  path_mtu: ") ==
        "  path_mtu: enum 1..5, default auto; past it: below 1: nothing rejects it: the kernel accepts it and the "
        "provider stores it as is; above 5: providers rxe reject it: EINVAL; others may store or truncate it (rxe "
        "refuses a path_mtu above its port's max MTU and stores 0, which is no MTU (ib_mtu_enum_to_int gives -1))");
  CHECK(line_starting(text, "  port_num: ") ==
        "  port_num: uint 1..255, default device; past it: the kernel rejects it: EINVAL; at most the device's "
        "phys_port_cnt");
}

TEST_CASE("rules show --values --format json gives per-bound enforced_by as an object") {
  auto text = rules_show({"show", "--type", "RC", "--from", "INIT", "--to", "RTR", "--values", "--format", "json"});
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\n'; }), text.end());
  CHECK(text.find("\"path_mtu\":{\"type\":\"enum\",\"enforced_by\":{\"below\":\"none\",\"above\":\"provider\"},"
                  "\"providers\":[\"rxe\"]") != std::string::npos);
  CHECK(text.find("\"timeout\":{\"type\":\"uint\",\"enforced_by\":\"provider\"") != std::string::npos);
}

TEST_CASE("the probe predicts what Linux 6.1 rxe answers for values the kernel accepts") {
  auto rc = rxe_cases("RC");
  auto predicted = [&](QpState from, QpState to, const std::string& what) {
    const auto* c = find(rc, from, to, what);
    return c ? c->predicted : "(no case)";
  };
  CHECK(predicted(QpState::INIT, QpState::RTR, "path_mtu = 0") == "ok");
  CHECK(predicted(QpState::INIT, QpState::RTR, "path_mtu = 6") == "EINVAL");
  CHECK(predicted(QpState::RTR, QpState::RTS, "path_mig_state = 3") == "ok");
  CHECK(predicted(QpState::INIT, QpState::RTR, "dest_qp_num = 16777216") == "ok");
  CHECK(predicted(QpState::RTS, QpState::SQD, "en_sqd_async_notify = 2") == "ok");
  // Ports: below 1 and past the device's port count, the kernel (uverbs rdma_is_port_valid).
  CHECK(predicted(QpState::RESET, QpState::INIT, "port_num = 0") == "EINVAL");
  CHECK(predicted(QpState::RESET, QpState::INIT, "port_num = 1") == "ok");
  CHECK(predicted(QpState::RESET, QpState::INIT, "port_num = 2") == "EINVAL");
  CHECK(predicted(QpState::RESET, QpState::INIT, "port_num = 255") == "(no case)");
}

TEST_CASE("a provider bound is EINVAL only for the providers it names") {
  auto mlx5 = rxe_cases("RC", "mlx5");
  const auto* c = find(mlx5, QpState::INIT, QpState::RTR, "path_mtu = 6");
  REQUIRE(c);
  CHECK(c->predicted == "ok");
}

TEST_CASE("the committed rxe entry records no deviation for the values the tables now predict") {
  const auto* rxe = qpo::spec::ProviderTable::builtin().entry("rxe");
  REQUIRE(rxe);
  for (const auto& d : rxe->deviations)
    for (const char* gone : {"path_mtu = 0", "path_mig_state = 3", "dest_qp_num = 16777216", "en_sqd_async_notify = 2",
                             "port_num = 255"})
      CHECK_MESSAGE(d.what != gone, d.what);
}

TEST_CASE("enforced_by per bound: the loader takes below and above and checks them") {
  CHECK(parse_error("  v: { type: uint, min: 1, max: 5, enforced_by: { below: none, above: kernel } }\n") == "");
  auto t = qpo::spec::RuleTable::parse(kRulesHead +
                                       "  v: { type: uint, min: 1, max: 5, enforced_by: { below: none, above: kernel } }\n");
  CHECK(t.value_rule("v")->below_by == "none");
  CHECK(t.value_rule("v")->above_by == "kernel");
  CHECK(parse_error("  v: { type: uint, min: 1, max: 5, enforced_by: { below: none } }\n")
            .find("v: enforced_by per bound takes below: and above:") != std::string::npos);
  CHECK(parse_error("  v: { type: uint, enforced_by: { below: none, above: kernel } }\n")
            .find("v: enforced_by per bound needs min and max") != std::string::npos);
  CHECK(parse_error("  v: { type: uint, min: 1, max: 5, enforced_by: { below: nobody, above: kernel } }\n")
            .find("v: enforced_by is kernel, provider, field, none, device or lint") != std::string::npos);
  CHECK(parse_error("  v: { type: uint, min: 1, max: 5, enforced_by: { below: none, above: provider } }\n")
            .find("v: enforced_by: provider goes with a providers: list, and only it") != std::string::npos);
}
