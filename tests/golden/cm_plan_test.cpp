// The rdma_cm example scenarios' plans: the CM calls are typed steps in the stages the hosts
// meet after (listen before connect), an expected event ends the active flow at its step, and
// the ids and channel go before the QPs at teardown.
#include <doctest/doctest.h>

#include <rdma/rdma_cma.h>

#include <regex>
#include <string>

#include "golden/plan_of_file.h"
#include "plan/plan.h"
#include "unit/scenario_fixture.h"

namespace {

// "kind object" of one host's steps from stage `from` on (and its teardown), one per line.
std::string steps(const qpo::plan::Plan& p, const std::string& host, bool teardown) {
  std::string out;
  for (const auto& h : p.hosts)
    if (h.host == host)
      for (const auto& st : h.steps)
        if (teardown ? st.phase == qpo::plan::Phase::Teardown : st.stage >= 0)
          out += std::string(qpo::plan::step_kind_name(st.kind)) + " " + st.object +
                 (st.expect.empty() ? "" : " expect " + st.expect) + "\n";
  return out;
}

qpo::plan::Plan plan_of(qpo::test::Loaded& l) {
  REQUIRE(l.scenario);
  REQUIRE_FALSE(l.sink.has_errors());
  return qpo::plan::build_plan(*l.checked);
}

}  // namespace

TEST_CASE("two-host-cm-reject: listen, then connect; the expected REJECTED ends each active flow") {
  qpo::test::Loaded l(qpo::test::source_file("scenarios/two-host-cm-reject.yaml"), "two-host-cm-reject.yaml");
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink);
  if (l.scenario) l.checked = qpo::validate::validate(*l.scenario, l.sink);
  auto p = plan_of(l);
  CHECK(p.stages == std::vector<std::string>{"cm listen", "cm connect"});
  CHECK(steps(p, "a", false) ==
        "cm_channel qpo.cm.a\n"
        "cm_create_id qa\n"
        "cm_create_id qn\n"
        "cm_resolve_addr qa\n"
        "cm_resolve_route qa\n"
        "cm_modify qa\n"
        "post_recv qa\n"
        "cm_connect qa expect RDMA_CM_EVENT_REJECTED\n"
        "cm_resolve_addr qn\n"
        "cm_resolve_route qn\n"
        "cm_modify qn\n"
        "post_recv qn\n"
        "cm_connect qn expect RDMA_CM_EVENT_REJECTED\n");
  CHECK(steps(p, "b", false) ==
        "cm_channel qpo.cm.b\n"
        "cm_create_id qb.listener\n"
        "cm_listen qb.listener\n"
        "cm_wait_request qb\n"
        "cm_reject qb\n");
  CHECK(steps(p, "b", true) ==
        "destroy qb\n"
        "destroy qb.listener\n"
        "destroy qpo.cm.b\n"
        "destroy qb\n"
        "destroy qpo.slots.qb\n"
        "destroy cb\n"
        "destroy db\n"
        "destroy db\n");
}

TEST_CASE("two-host-cm-rc: the active side re-INITs, RTR, RTS, establishes; both disconnect after the traffic") {
  qpo::test::Loaded l(qpo::test::source_file("scenarios/two-host-cm-rc.yaml"), "two-host-cm-rc.yaml");
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink);
  if (l.scenario) l.checked = qpo::validate::validate(*l.scenario, l.sink);
  auto p = plan_of(l);
  REQUIRE(p.stages.size() >= 3);
  CHECK(p.stages[0] == "cm listen");
  CHECK(p.stages[1] == "cm connect");
  CHECK(p.stages.back() == "cm disconnect");
  std::string a = steps(p, "a", false);
  CHECK(a.find("cm_connect qa\ncm_modify qa\ncm_modify qa\ncm_modify qa\ncm_establish qa\n") != std::string::npos);
  CHECK(a.find("cm_disconnect qa\n") != std::string::npos);
  std::string b = steps(p, "b", false);
  CHECK(b.find("cm_wait_request qb\ncm_modify qb\npost_recv qb\ncm_modify qb\ncm_accept qb\ncm_modify qb\n") != std::string::npos);
  // Teardown: the connection's id and the listener before the QP.
  std::string tb = steps(p, "b", true);
  CHECK(tb.rfind("destroy qb\ndestroy qb.listener\ndestroy qpo.cm.b\ndestroy qb\n", 0) == 0);
}

TEST_CASE("two-host-cm-uc: UC ids come from rdma_create_ep (RDMA_PS_IB, IBV_QPT_UC) migrated onto the channel") {
  qpo::test::Loaded l(qpo::test::source_file("scenarios/two-host-cm-uc.yaml"), "two-host-cm-uc.yaml");
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink);
  if (l.scenario) l.checked = qpo::validate::validate(*l.scenario, l.sink);
  auto p = plan_of(l);
  CHECK(p.stages.front() == "cm listen");
  CHECK(p.stages.back() == "cm disconnect");
  // The same flow as RC: only the ids are made differently.
  CHECK(steps(p, "a", false).rfind("cm_channel qpo.cm.a\ncm_create_id qa\ncm_resolve_addr qa\ncm_resolve_route qa\n"
                                   "cm_modify qa\npost_recv qa\ncm_connect qa\ncm_modify qa\ncm_modify qa\ncm_modify qa\n"
                                   "cm_establish qa\n", 0) == 0);
  CHECK(steps(p, "b", false).rfind("cm_channel qpo.cm.b\ncm_create_id qb.listener\ncm_listen qb.listener\n"
                                   "cm_wait_request qb\ncm_modify qb\npost_recv qb\ncm_modify qb\ncm_accept qb\ncm_modify qb\n", 0) == 0);
  // What each step says: the real calls and their arguments.
  auto args_of = [&](const std::string& host, qpo::plan::StepKind kind, const std::string& object) {
    std::string out;
    for (const auto& h : p.hosts)
      if (h.host == host)
        for (const auto& st : h.steps)
          if (st.kind == kind && st.object == object) {
            out = st.verb + ":";
            for (const auto& a : st.args) out += " " + a.name + "=" + a.value;
          }
    return out;
  };
  using qpo::plan::StepKind;
  CHECK(args_of("a", StepKind::CmCreateId, "qa") ==
        "rdma_create_ep + rdma_migrate_id: ai_flags=RAI_PASSIVE ai_port_space=RDMA_PS_IB ai_qp_type=IBV_QPT_UC "
        "ai_src_addr=0.0.0.0:0 migrate to=qpo.cm.a");
  CHECK(args_of("b", StepKind::CmCreateId, "qb.listener") ==
        "rdma_create_ep + rdma_migrate_id: ai_flags=RAI_PASSIVE ai_port_space=RDMA_PS_IB ai_qp_type=IBV_QPT_UC "
        "ai_src_addr=[::]:7474 migrate to=qpo.cm.b");
  CHECK(args_of("b", StepKind::CmListen, "qb.listener") == "rdma_listen: address=[::]:7474 backlog=1");
  CHECK(args_of("a", StepKind::CmConnect, "qa") ==
        "rdma_connect: qp_num=qa's private_data='uc from a' responder_resources=0 initiator_depth=0 retry_count=0 "
        "rnr_retry_count=0 waits for=RDMA_CM_EVENT_CONNECT_RESPONSE");
  CHECK(args_of("b", StepKind::CmAccept, "qb") ==
        "rdma_accept: qp_num=qb's private_data='uc welcome' responder_resources=0 initiator_depth=0 "
        "waits for=RDMA_CM_EVENT_ESTABLISHED");
}

TEST_CASE("two-host-cm-exchange: INIT in the bring-up; the CM carries the exchange; RTR and RTS as states: says, after it") {
  qpo::test::Loaded l(qpo::test::source_file("scenarios/two-host-cm-exchange.yaml"), "two-host-cm-exchange.yaml");
  l.scenario = qpo::scenario::load_scenario(l.source, l.sink);
  if (l.scenario) l.checked = qpo::validate::validate(*l.scenario, l.sink);
  auto p = plan_of(l);
  CHECK(p.stages.front() == "cm listen");
  CHECK(p.stages[1] == "cm connect");
  CHECK(p.stages.back() == "cm disconnect");
  CHECK(steps(p, "a", false).rfind("cm_channel qpo.cm.a\ncm_create_id qa\ncm_resolve_addr qa\ncm_resolve_route qa\n"
                                   "cm_connect qa\ncm_establish qa\nmodify qa\nmodify qa\n", 0) == 0);
  CHECK(steps(p, "b", false).rfind("cm_channel qpo.cm.b\ncm_create_id qb.listener\ncm_listen qb.listener\n"
                                   "cm_wait_request qb\ncm_accept qb\nmodify qb\nmodify qb\n", 0) == 0);
  // The bring-up (no stage) takes each QP to INIT only; the stage's modifies are RTR, RTS.
  for (const auto& h : p.hosts)
    for (const auto& st : h.steps) {
      if (st.kind != qpo::plan::StepKind::Modify) continue;
      if (st.stage < 0) CHECK(st.to_state == "INIT");
      else CHECK((st.to_state == "RTR" || st.to_state == "RTS"));
    }
  auto arg_of = [&](const std::string& host, qpo::plan::StepKind kind, const std::string& name) {
    for (const auto& h : p.hosts)
      if (h.host == host)
        for (const auto& st : h.steps)
          if (st.kind == kind)
            for (const auto& a : st.args)
              if (a.name == name) return a.value + " [" + a.note + "]";
    return std::string();
  };
  using qpo::plan::StepKind;
  CHECK(arg_of("a", StepKind::CmConnect, "private_data") ==
        "qa's qp_num, sq_psn, lid, gid, active_mtu, port, slots (56 bytes) [56 of 56 bytes]");
  CHECK(arg_of("b", StepKind::CmAccept, "private_data") ==
        "qb's qp_num, sq_psn, lid, gid, active_mtu, port, slots (56 bytes), MR mb addr, length, rkey (20) [76 of 196 bytes]");
  CHECK(arg_of("a", StepKind::CmCreateId, "port_space") == "RDMA_PS_TCP []");
}

namespace {

// The lowered end each CM step of `host` carries (plan/cm_end.h): "kind object -> end's QP",
// and "'s listener" when the step is about the end's listener id (StepExtra::cm_listener).
std::string ends_of_steps(const qpo::plan::Plan& p, const std::string& host) {
  std::string out;
  for (const auto& h : p.hosts)
    if (h.host == host)
      for (const auto& st : h.steps)
        if (st.stage >= 0 && st.kind != qpo::plan::StepKind::Modify) {
          const auto* e = p.cm_end_of(st);
          out += std::string(qpo::plan::step_kind_name(st.kind)) + " " + st.object + " -> " + (e ? e->qp : "none") +
                 (st.extra().cm_listener ? "'s listener" : "") + "\n";
        }
  return out;
}

}  // namespace

TEST_CASE("two-host-cm-reject: each CM step carries its QP's lowered end; the peerless side's link is the other host") {
  auto p = qpo::test::plan_of_file("scenarios/two-host-cm-reject.yaml");
  REQUIRE(p.cm_ends.size() == 3);
  CHECK(ends_of_steps(p, "b") ==
        "cm_channel qpo.cm.b -> none\n"
        "cm_create_id qb.listener -> qb's listener\n"
        "cm_listen qb.listener -> qb's listener\n"
        "cm_wait_request qb -> qb\n"
        "cm_reject qb -> qb\n");
  const auto& qb = p.cm_ends[2];
  CHECK(qb.qp == "qb");
  CHECK(qb.host == "b");
  CHECK_FALSE(qb.active);
  CHECK(qb.reject.has_value());
  CHECK(qb.peer == "qa");
  CHECK(qb.peer_host == "a");
  CHECK(qb.link_host == "a");
  const auto& qn = p.cm_ends[1];  // connects where nobody listens: no peer
  CHECK(qn.qp == "qn");
  CHECK(qn.peer.empty());
  CHECK(qn.link_host == "b");
  CHECK(qn.port == 7999);
}

TEST_CASE("two-host-cm-reject: the expected event is lowered to its rdma_cm_event_type; the passive end expects none") {
  auto p = qpo::test::plan_of_file("scenarios/two-host-cm-reject.yaml");
  REQUIRE(p.cm_ends.size() == 3);
  CHECK(p.cm_ends[0].expect_event == RDMA_CM_EVENT_REJECTED);
  CHECK_FALSE(p.cm_ends[0].expect_timeout);
  CHECK(p.cm_ends[2].expect_event == -1);
  CHECK_FALSE(p.cm_ends[2].expect_timeout);
}

TEST_CASE("two-host-cm-rc: each CM modify carries the state it moves to as a value") {
  auto p = qpo::test::plan_of_file("scenarios/two-host-cm-rc.yaml");
  std::string targets;
  for (const auto& st : p.hosts.at(0).steps)
    if (st.kind == qpo::plan::StepKind::CmModify) {
      CHECK(std::string(qpo::spec::state_name(st.target)) == st.to_state.str());
      targets += st.to_state.str() + " ";
    }
  CHECK(targets == "INIT INIT RTR RTS ");  // the active side INITs, then re-INITs with the access the connection grants
}

TEST_CASE("two-host-cm-exchange: the lowered ends know which MRs each side's exchange carries, and the peer's size") {
  auto p = qpo::test::plan_of_file("scenarios/two-host-cm-exchange.yaml");
  REQUIRE(p.cm_ends.size() == 2);
  const auto &qa = p.cm_ends[0], &qb = p.cm_ends[1];
  CHECK(qa.exchange_only);
  CHECK(qa.carried_mrs.empty());
  CHECK(qa.peer_carried_mrs == std::vector<std::string>{"mb"});
  CHECK(qa.peer_exchange_bytes == 76);
  CHECK(qb.carried_mrs == std::vector<std::string>{"mb"});
  CHECK(qb.carried_and_published.empty());  // only its peer's write aims at mb
  CHECK(qb.peer_exchange_bytes == 56);
  CHECK(qb.peer_type == "RC");
}

TEST_CASE("a passive QP named 'qb.listener': its own steps carry its end, its listener's too") {
  std::string y = std::regex_replace(qpo::test::source_file("scenarios/two-host-cm-rc.yaml"), std::regex("\\bqb\\b"), "qb.listener");
  auto l = qpo::test::load_validate(y);
  auto p = plan_of(l);
  std::string b = ends_of_steps(p, "b");
  CHECK(b.find("cm_channel qpo.cm.b -> none\n") != std::string::npos);
  CHECK(b.find("cm_create_id qb.listener.listener -> qb.listener's listener\n") != std::string::npos);
  CHECK(b.find("cm_listen qb.listener.listener -> qb.listener's listener\n") != std::string::npos);
  CHECK(b.find("cm_wait_request qb.listener -> qb.listener\n") != std::string::npos);
  CHECK(b.find("cm_accept qb.listener -> qb.listener\n") != std::string::npos);
}

TEST_CASE("an active QP named 'qb.listener' beside passive qb: qb's listener steps carry qb's end, the QP's its own") {
  std::string y = std::regex_replace(qpo::test::source_file("scenarios/two-host-cm-rc.yaml"), std::regex("\\bqa\\b"), "qb.listener");
  auto l = qpo::test::load_validate(y);
  auto p = plan_of(l);
  std::string a = ends_of_steps(p, "a"), b = ends_of_steps(p, "b");
  CHECK(b.find("cm_create_id qb.listener -> qb's listener\n") != std::string::npos);
  CHECK(b.find("cm_listen qb.listener -> qb's listener\n") != std::string::npos);
  CHECK(b.find("cm_wait_request qb -> qb\n") != std::string::npos);
  CHECK(a.find("cm_create_id qb.listener -> qb.listener\n") != std::string::npos);
  CHECK(a.find("cm_connect qb.listener -> qb.listener\n") != std::string::npos);
}

TEST_CASE("two-host-cm-exchange: the MRs an exchange_only connection carries are lowered to their keys") {
  auto p = qpo::test::plan_of_file("scenarios/two-host-cm-exchange.yaml");
  const qpo::plan::CmEnd* qb = nullptr;
  const qpo::plan::CmEnd* qa = nullptr;
  for (const auto& e : p.cm_ends) {
    if (e.qp == "qa") qa = &e;
    if (e.qp == "qb") qb = &e;
  }
  REQUIRE(qa != nullptr);
  REQUIRE(qb != nullptr);
  // qa writes into qb's mb: qb's exchange carries mb, qa reads it from its peer's.
  using Key = qpo::plan::BufferKey;
  const Key mb{Key::Kind::Mr, p.id_of(qpo::plan::ObjectKind::Mr, "mb")};
  CHECK(qb->carried_mrs == std::vector<std::string>{"mb"});
  CHECK(qb->carried_keys == std::vector<Key>{mb});
  CHECK(qa->peer_carried_mrs == std::vector<std::string>{"mb"});
  CHECK(qa->peer_carried_keys == std::vector<Key>{mb});
  CHECK(qb->carried_and_published_keys.empty());  // no other QP's workload aims at mb
}
