// schemas/providers.yaml's format (spec/providers.h): the probe case words, reading, writing,
// comparing entries, the cases qpo probe enumerates with their predictions, and the Q308
// warning of qpo validate --provider.
#include <doctest/doctest.h>
#include <infiniband/verbs.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "check/provider.h"
#include "cli/provider_source.h"
#include "probe/cases.h"
#include "probe/deviations.h"
#include "scenario_fixture.h"
#include "spec/providers.h"

using qpo::spec::ProbeCaseKey;
using qpo::spec::ProviderTable;
using qpo::spec::QpState;

namespace {

const char kTwoProviders[] = R"(providers:
  nic:
    description: "a NIC"
    unsupported: { odp: "no ODP" }
    probed: { device: nic0, kernel: "Linux 6.9", date: "2026-11-25", cases: 10, agreed: 7,
              not_probed: { XRC_SEND: "unsupported by device: no XRC" } }
    deviations:
      - { case: "with IBV_QP_ALT_PATH", predicted: ok, answered: EINVAL, in: ["RC INIT->RTR", "UC RTR->RTS"] }
      - { case: "port_num = 255", predicted: ok, answered: EINVAL, in: ["RC RESET->INIT"] }
      - { case: "minimal mask", predicted: ok, answered: EINVAL, in: ["UD SQD->RTS"] }
  other:
    description: "another"
)";

std::string uc_sqd_with_av() {
  return R"(version: 1
name: t
devices: { d: { name: auto } }
cqs: { c: { device: d, depth: 1024 } }
qps:
  qa:
    pd: d
    type: UC
    send_cq: c
    recv_cq: c
    connect: qb
    states: { INIT: {}, RTR: {}, RTS: {} }
    transitions:
      - { to: SQD }
      - { to: SQD, ah_attr: { is_global: true, grh: { dgid: peer, sgid_index: 1, hop_limit: 1 } } }
  qb: { pd: d, type: UC, send_cq: c, recv_cq: c, connect: qa, states: { INIT: {}, RTR: {}, RTS: {} } }
)";
}

// What parsing `text` as providers.yaml throws ("no error" when it reads).
std::string fails_with(const std::string& text) {
  try {
    ProviderTable::parse(text, "p.yaml");
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

}  // namespace

TEST_CASE("every probe case's words parse back to the same case") {
  for (const char* text : {"minimal mask", "invalid transition", "with IBV_QP_ALT_PATH", "without IBV_QP_AV",
                           "timeout = 32", "sq_psn = 16777216"}) {
    auto k = ProbeCaseKey::parse(text);
    REQUIRE_MESSAGE(k, text);
    CHECK(k->text() == text);
  }
  CHECK(ProbeCaseKey::parse("timeout = 3x") == std::nullopt);
  CHECK(ProbeCaseKey::parse("with") == std::nullopt);
  CHECK(ProbeCaseKey::parse("sometimes") == std::nullopt);
}

TEST_CASE("a providers document reads, writes and reads back the same") {
  auto t = ProviderTable::parse(kTwoProviders, "t.yaml");
  const auto* nic = t.entry("nic");
  REQUIRE(nic);
  CHECK(nic->probed->kernel == "Linux 6.9");
  CHECK(nic->probed->not_probed.at("XRC_SEND") == "unsupported by device: no XRC");
  REQUIRE(nic->deviations.size() == 3);
  CHECK(nic->deviations[0].in == std::vector<std::string>{"RC INIT->RTR", "UC RTR->RTS"});
  auto again = ProviderTable::parse(t.to_yaml(), "written");
  CHECK(again.to_yaml() == t.to_yaml());
  CHECK(again.entry("nic")->deviations[1].what == "port_num = 255");
  CHECK(again.entry("other")->description == "another");
  CHECK(again.lacks("nic", "odp") == std::optional<std::string>("no ODP"));
}

TEST_CASE("a transition refused with its minimal mask is what qpo run reports as unsupported") {
  auto t = ProviderTable::parse(kTwoProviders, "t.yaml");
  const auto* d = t.transition_deviation("nic", "UD", "SQD", "RTS");
  REQUIRE(d);
  CHECK(d->errno_name == "EINVAL");
  CHECK(d->why.find("qpo probe found nic answers EINVAL to UD SQD->RTS") == 0);
  CHECK(t.transition_deviation("nic", "RC", "SQD", "RTS") == nullptr);
}

TEST_CASE("a malformed providers document names the file and the key") {
  CHECK(fails_with("providers: { x: { descripton: a } }") ==
        "p.yaml: providers.x.descripton: unknown key (known: description, unsupported, probed, deviations, wire, completion_flags)");
  CHECK(fails_with("providers: { x: { deviations: [ { case: often, predicted: ok, answered: ok, in: [] } ] } }")
            .find("p.yaml: providers.x.deviations[0].case: 'often' is none of") == 0);
  CHECK(fails_with("providers: { x: { deviations: [ { case: minimal mask, predicted: ok, answered: ok } ] } }") ==
        "p.yaml: providers.x.deviations[0].in: expected a list of transitions");
  CHECK(fails_with("[1, 2]") == "p.yaml: expected a map with a 'providers:' map");
}

TEST_CASE("the committed rxe entry comes from a probe run and records the RoCE alternate-path ban") {
  const auto* rxe = ProviderTable::builtin().entry("rxe");
  REQUIRE(rxe);
  REQUIRE(rxe->probed);
  CHECK(rxe->probed->device == "rxe0");
  CHECK(rxe->probed->cases > 1000);
  bool alt_path = false;
  for (const auto& d : rxe->deviations)
    alt_path |= d.what == "with IBV_QP_ALT_PATH" && d.answered == "EINVAL" && d.predicted == "ok";
  CHECK(alt_path);
  CHECK(ProviderTable::builtin().lacks("rxe", "xrc"));
}

TEST_CASE("comparing a recorded entry with a new probe names each case answered differently") {
  auto recorded = *ProviderTable::parse(kTwoProviders, "t.yaml").entry("nic");
  CHECK(qpo::probe::compare_deviations(recorded, recorded).empty());
  auto found = recorded;
  found.deviations[1].answered = "ok";                      // port_num 255: now predicted
  found.deviations[1].predicted = "ok";
  found.deviations.erase(found.deviations.begin() + 2);     // UD SQD->RTS: now as predicted
  found.deviations.push_back({"timeout = 32", "EINVAL", "ok", {"RC RTR->RTS"}});
  auto changed = qpo::probe::compare_deviations(recorded, found);
  REQUIRE(changed.size() == 3);
  CHECK(changed[0] == "UD SQD->RTS minimal mask: recorded EINVAL, the device now answers ok as predicted");
  CHECK(changed[1] == "RC RESET->INIT port_num = 255: recorded EINVAL (predicted ok), the device now answers ok (predicted ok)");
  CHECK(changed[2] == "RC RTR->RTS timeout = 32: not recorded, the device now answers ok where qpo predicts EINVAL");
}

TEST_CASE("a probe report groups its disagreements by case and answer, listing the transitions") {
  const auto& rules = qpo::spec::RuleTable::builtin();
  int rc = rules.type_index("RC"), uc = rules.type_index("UC");
  qpo::probe::Report r;
  r.provider = "nic";
  auto with_alt = [&](int type, QpState from, QpState to) {
    qpo::probe::Case c{type, from, to, 0, {ProbeCaseKey::Kind::With, "IBV_QP_ALT_PATH", 0}, "ok"};
    return qpo::probe::Result{c, "EINVAL"};
  };
  r.results = {with_alt(rc, QpState::INIT, QpState::RTR), with_alt(uc, QpState::RTR, QpState::RTS),
               {{rc, QpState::RESET, QpState::INIT, 1u, {}, "ok"}, "ok"}};
  auto e = qpo::probe::entry_from(r);
  CHECK(e.probed->cases == 3);
  CHECK(e.probed->agreed == 1);
  REQUIRE(e.deviations.size() == 1);
  CHECK(e.deviations[0].in == std::vector<std::string>{"RC INIT->RTR", "UC RTR->RTS"});
  auto table = qpo::probe::disagreement_table(r);
  CHECK(table.find("type  transition  mask") == 0);
  CHECK(table.find("UC    RTR->RTS    0     ") != std::string::npos);
}

TEST_CASE("probe cases: every pair of the table for a type, predicted by the rules check predictor") {
  const auto& rules = qpo::spec::RuleTable::builtin();
  qpo::probe::DeviceFacts rxe{"rxe", {{"max_qp_rd_atom", 128}, {"max_qp_init_rd_atom", 128}, {"phys_port_cnt", 1}}};
  auto cases = qpo::probe::cases_for_type(rules, rules.type_index("RC"), rxe);
  auto find = [&](QpState from, QpState to, const std::string& what) -> const qpo::probe::Case* {
    for (const auto& c : cases)
      if (c.cur == from && c.next == to && c.key.text() == what) return &c;
    return nullptr;
  };
  const auto* minimal = find(QpState::INIT, QpState::RTR, "minimal mask");
  REQUIRE(minimal);
  CHECK(minimal->mask == (rules.required(rules.type_index("RC"), QpState::INIT, QpState::RTR) | 1u));
  CHECK(minimal->predicted == "ok");
  CHECK(find(QpState::INIT, QpState::RTR, "without IBV_QP_AV")->predicted == "EINVAL");
  CHECK(find(QpState::INIT, QpState::RTR, "with IBV_QP_ALT_PATH")->predicted == "ok");
  CHECK(find(QpState::RESET, QpState::RTS, "invalid transition")->predicted == "EINVAL");
  CHECK(find(QpState::SQD, QpState::SQD, "minimal mask"));
  CHECK_FALSE(find(QpState::RTS, QpState::SQE, "minimal mask"));  // SQE is not a state a caller moves to
  // Values at and past their bounds, predicted from who enforces the range.
  CHECK(find(QpState::RTR, QpState::RTS, "timeout = 31")->predicted == "ok");
  CHECK(find(QpState::RTR, QpState::RTS, "timeout = 32")->predicted == "EINVAL");  // rxe is a provider that rejects it
  CHECK(find(QpState::RTR, QpState::RTS, "retry_cnt = 8")->predicted == "ok");      // only the field width bounds it
  CHECK(find(QpState::RTR, QpState::RTS, "sq_psn = 16777216")->predicted == "ok, reads back 0");  // masked to 24 bits
  CHECK(find(QpState::RTR, QpState::RTS, "max_rd_atomic = 129")->predicted == "EINVAL");  // past the device cap
  CHECK(find(QpState::RESET, QpState::INIT, "port_num = 0")->predicted == "EINVAL");
  CHECK_FALSE(find(QpState::RESET, QpState::INIT, "pkey_index = 65535"));  // the device decides: nothing to predict
  qpo::probe::DeviceFacts other{"mlx5", rxe.caps};
  auto mlx5 = qpo::probe::cases_for_type(rules, rules.type_index("RC"), other);
  bool timeout_ok = false;
  for (const auto& c : mlx5) timeout_ok |= c.key.text() == "timeout = 32" && c.predicted == "ok";
  CHECK(timeout_ok);
}

TEST_CASE("validate --provider warns Q308 where the provider refuses a step the tables predict succeeds") {
  auto l = qpo::test::load_validate(uc_sqd_with_av());
  REQUIRE_MESSAGE(l.checked, l.dump());
  REQUIRE(l.errors() == 0);
  qpo::check::check_provider(l.checked->model(), *ProviderTable::builtin().entry("rxe"), "schemas/providers.yaml",
                             l.sink);
  auto q308 = l.with_code("Q308");
  REQUIRE_MESSAGE(q308.size() == 1, l.dump());
  CHECK(q308[0]->severity == qpo::diag::Severity::Warning);
  CHECK(q308[0]->path == "qps.qa.transitions[1]");
  CHECK(q308[0]->message ==
        "provider rxe answers EINVAL to UC SQD->SQD with IBV_QP_AV, which the rule tables predict succeeds");
  CHECK(q308[0]->rule.find("deviations of provider rxe in schemas/providers.yaml (qpo probe rxe0, Linux ") == 0);
  CHECK(q308[0]->hint == "leave out ah_attr on this device");
}

TEST_CASE("validate --provider warns Q308 for a value the provider refuses, and not for other values") {
  auto nic = *ProviderTable::parse(kTwoProviders, "nic.yaml").entry("nic");
  std::string y = qpo::test::rc_pair();
  auto l = qpo::test::load_validate(y);
  REQUIRE(l.checked);
  qpo::check::check_provider(l.checked->model(), nic, "nic.yaml", l.sink);
  CHECK_MESSAGE(l.with_code("Q308").empty(), l.dump());  // port_num 1, not 255
  std::string y255 = y;
  y255.replace(y255.find("port_num: 1,"), 12, "port_num: 255,");
  auto l2 = qpo::test::load_validate(y255);
  REQUIRE_MESSAGE(l2.checked, l2.dump());
  qpo::check::check_provider(l2.checked->model(), nic, "nic.yaml", l2.sink);
  const auto* d = l2.one("Q308");
  REQUIRE_MESSAGE(d, l2.dump());
  CHECK(d->message == "provider nic answers EINVAL to RC RESET->INIT port_num = 255, which the rule tables predict succeeds");
  CHECK(d->rule == "deviations of provider nic in nic.yaml (qpo probe nic0, Linux 6.9, 2026-11-25)");
}

TEST_CASE("validate --provider warns Q310 at what needs a capability the provider lacks (rxe: xrc, odp)") {
  std::string y = qpo::test::rc_pair();
  y.replace(y.find("access: [local_write"), 20, "access: [on_demand, local_write");
  auto l = qpo::test::load_validate(y);
  REQUIRE_MESSAGE(l.checked, l.dump());
  qpo::check::check_provider(l.checked->model(), *ProviderTable::builtin().entry("rxe"), "schemas/providers.yaml",
                             l.sink);
  const auto* d = l.one("Q310");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->severity == qpo::diag::Severity::Warning);
  CHECK(d->message == "provider rxe lacks odp (on-demand paging is not implemented by rxe in Linux 6.1): on it "
                      "`qpo run` reports the scenario unsupported by device (exit 77)");
  CHECK(d->path.rfind("mrs.", 0) == 0);
  CHECK(d->loc.line == qpo::test::line_of(y, "on_demand"));
  CHECK(d->rule == "unsupported: of provider rxe in schemas/providers.yaml");
}

TEST_CASE("validate --provider: no Q310 for what the provider has") {
  auto l = qpo::test::load_validate(qpo::test::rc_pair());
  REQUIRE(l.checked);
  qpo::check::check_provider(l.checked->model(), *ProviderTable::builtin().entry("rxe"), "schemas/providers.yaml",
                             l.sink);
  CHECK_MESSAGE(l.with_code("Q310").empty(), l.dump());
}

TEST_CASE("--provider takes a known name, a file with one provider, or FILE:NAME") {
  CHECK(qpo::cli::resolve_provider("rxe").origin == "schemas/providers.yaml");
  try {
    qpo::cli::resolve_provider("mlx9");
    FAIL("no error");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("no provider 'mlx9' in schemas/providers.yaml (known: rxe, siw)") == 0);
  }
  std::string path = "/tmp/qpo_providers_test_" + std::to_string(getpid()) + ".yaml";  // one per process
  std::ofstream(path) << kTwoProviders;
  CHECK(qpo::cli::resolve_provider(path + ":nic").entry.name == "nic");
  CHECK(qpo::cli::resolve_provider(path, "other").entry.name == "other");
  try {
    qpo::cli::resolve_provider(path);
    FAIL("no error");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()) == path + " has several providers (nic, other); name one: --provider " + path + ":NAME");
  }
  std::remove(path.c_str());
}

TEST_CASE("the built-in rxe entry carries its wire findings, each with the scenario that shows it, and a probe keeps them") {
  const auto* rxe = qpo::spec::ProviderTable::builtin().entry("rxe");
  REQUIRE(rxe);
  REQUIRE(rxe->wire.size() >= 3);
  for (const auto& w : rxe->wire) CHECK(w.scenario.rfind("scenarios/wire/", 0) == 0);
  auto table = qpo::spec::ProviderTable::builtin();
  qpo::spec::ProviderEntry probed;
  probed.name = "rxe";
  table.merge_probe(probed);
  CHECK(table.entry("rxe")->wire.size() == rxe->wire.size());
  CHECK(table.to_yaml().find("    wire:\n      - topic: \"retransmission timer\"") != std::string::npos);
}

TEST_CASE("a provider's completion flag in another bit is data: rxe's IBV_WC_WITH_INV is bit 2, others libibverbs'") {
  const auto& t = ProviderTable::builtin();
  CHECK(t.completion_flag("rxe", "IBV_WC_WITH_INV", IBV_WC_WITH_INV) == 1u << 2);
  CHECK(t.completion_flag("mlx5", "IBV_WC_WITH_INV", IBV_WC_WITH_INV) == IBV_WC_WITH_INV);
  CHECK(t.completion_flag("rxe", "IBV_WC_WITH_IMM", IBV_WC_WITH_IMM) == IBV_WC_WITH_IMM);
  CHECK(t.entry("rxe")->completion_flags.at("IBV_WC_WITH_INV").why.find("IB_WC_WITH_INVALIDATE is 1 << 2") != std::string::npos);
  auto again = ProviderTable::parse(t.to_yaml(), "written");
  CHECK(again.completion_flag("rxe", "IBV_WC_WITH_INV", IBV_WC_WITH_INV) == 1u << 2);
}

TEST_CASE("a completion flag that is no IBV_WC_* name or no bit of wc_flags is refused, naming the key") {
  CHECK(fails_with("providers: { x: { completion_flags: { WITH_INV: { bit: 2, why: w } } } }") ==
        "p.yaml: providers.x.completion_flags.WITH_INV: not an IBV_WC_* flag");
  CHECK(fails_with("providers: { x: { completion_flags: { IBV_WC_WITH_INV: { bit: 40, why: w } } } }") ==
        "p.yaml: providers.x.completion_flags.IBV_WC_WITH_INV.bit: 40 is not a bit of wc_flags (0..31)");
}
