// The planner: a validated scenario -> per-host ordered verbs calls.
#include <doctest/doctest.h>

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan_fixture.h"
#include "scenario_fixture.h"
#include "util/json_writer.h"
#include "util/strings.h"

using qpo::plan::Arg;
using qpo::plan::HostPlan;
using qpo::plan::Phase;
using qpo::plan::Plan;
using qpo::plan::Step;

using qpo::test::plan_of;

namespace {

const std::string kWrite =
    "workloads:\n  write: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 4KiB, iterations: 100 }\n";

// The RC pair, with qa's min_rnr_timer left to its default (12).
Plan rc_plan() {
  return plan_of(qpo::test::rc_pair(
      "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, "
      "ah_attr: { is_global: true, grh: { dgid: peer, sgid_index: auto, hop_limit: 1 } } }",
      "{ path_mtu: auto }", kWrite));
}

std::string join(const std::vector<std::string>& v) { return qpo::util::join(v, "\n"); }

// "verb object" for each step, e.g. "ibv_modify_qp qa INIT->RTR".
std::vector<std::string> outline(const HostPlan& h) {
  std::vector<std::string> out;
  for (const auto& st : h.steps) {
    std::string s = st.verb + " " + st.object;
    if (st.has_mask) s += " " + st.from_state + "->" + st.to_state;
    out.push_back(s);
  }
  return out;
}

const Step* find_step(const HostPlan& h, const std::string& verb, const std::string& object, const std::string& to = "") {
  for (const auto& st : h.steps)
    if (st.verb == verb && st.object == object && (to.empty() || st.to_state == to)) return &st;
  return nullptr;
}

const Arg* find_arg(const Step& st, const std::string& name) {
  for (const auto& a : st.args)
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace

TEST_CASE("an RC pair plans resources, RESET->INIT, receives, the exchange, RTR, RTS, smoke, the workload, teardown") {
  Plan p = rc_plan();
  REQUIRE(p.hosts.size() == 1);
  CHECK(p.scenario == "rc-pair");
  CHECK(p.hosts[0].host == "a");
  std::vector<std::string> want = {
      "ibv_open_device da",           "ibv_query_port da",           "ibv_query_gid da",
      "ibv_alloc_pd pa",              "ibv_reg_mr ma",               "ibv_reg_mr mb",
      "ibv_create_cq ca",             "ibv_reg_mr qpo.slots.qa",     "ibv_reg_mr qpo.slots.qb",
      "ibv_create_qp qa",             "ibv_create_qp qb",
      "ibv_modify_qp qa RESET->INIT", "ibv_modify_qp qb RESET->INIT", "ibv_post_recv qa",
      "ibv_post_recv qb",             "publish a",                   "resolve a",
      "ibv_modify_qp qa INIT->RTR",   "ibv_modify_qp qa RTR->RTS",   "ibv_modify_qp qb INIT->RTR",
      "ibv_modify_qp qb RTR->RTS",    "smoke send qa",               "smoke receive qb",
      "smoke send qb",                "smoke receive qa",            "prepare mb",
      "workload write",               "verify mb",                   "ibv_destroy_qp qb",
      "ibv_destroy_qp qa",            "ibv_dereg_mr qpo.slots.qb",   "ibv_dereg_mr qpo.slots.qa",
      "ibv_destroy_cq ca",            "ibv_dereg_mr mb",
      "ibv_dereg_mr ma",              "ibv_dealloc_pd pa",           "ibv_close_device da"};
  CHECK(join(outline(p.hosts[0])) == join(want));
  for (size_t i = 0; i < p.hosts[0].steps.size(); ++i) CHECK(p.hosts[0].steps[i].index == static_cast<int>(i) + 1);
  CHECK(p.step_count() == want.size());
}

TEST_CASE("a whole-run fault is applied before the QP creates, which end the setup phase") {
  const Plan p = plan_of(qpo::test::rc_pair(
      "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12, "
      "ah_attr: { is_global: true, grh: { dgid: peer, sgid_index: auto, hop_limit: 1 } } }",
      "{ path_mtu: auto }", kWrite + "faults:\n  lossy: { device: da, loss: 1%, during: all }\n"));
  std::vector<std::string> setup;
  for (const auto& st : p.hosts[0].steps)
    if (st.phase == Phase::Setup) setup.push_back(st.verb + " " + st.object);
  // The bring-up window (bench/qp_rate.sh) opens at the first create: nothing else sits in it.
  std::vector<std::string> want = {"ibv_open_device da", "ibv_query_port da",         "ibv_query_gid da",
                                   "ibv_alloc_pd pa",    "ibv_reg_mr ma",             "ibv_reg_mr mb",
                                   "ibv_create_cq ca",   "tc qdisc replace netem lossy", "ibv_reg_mr qpo.slots.qa",
                                   "ibv_reg_mr qpo.slots.qb", "ibv_create_qp qa", "ibv_create_qp qb"};
  CHECK(join(setup) == join(want));
}

TEST_CASE("receives are posted after RESET->INIT and before the exchange and RTR") {
  const Plan p = rc_plan();
  const auto& h = p.hosts[0];
  auto pos = [&](const std::string& verb, const std::string& obj, const std::string& to = "") {
    for (size_t i = 0; i < h.steps.size(); ++i)
      if (h.steps[i].verb == verb && h.steps[i].object == obj && (to.empty() || h.steps[i].to_state == to)) return i;
    FAIL("no step " << verb << " " << obj << " " << to);
    return size_t{0};
  };
  for (const char* q : {"qa", "qb"}) {
    CAPTURE(q);
    CHECK(pos("ibv_modify_qp", q, "INIT") < pos("ibv_post_recv", q));
    CHECK(pos("ibv_post_recv", q) < pos("publish", "a"));
    CHECK(pos("resolve", "a") < pos("ibv_modify_qp", q, "RTR"));
    CHECK(pos("ibv_modify_qp", q, "RTR") < pos("ibv_modify_qp", q, "RTS"));
  }
  CHECK(h.steps[pos("ibv_post_recv", "qa")].phase == Phase::BringUp);
  CHECK(h.steps[pos("publish", "a")].phase == Phase::Exchange);
}

TEST_CASE("teardown destroys objects in the reverse order of their creation") {
  const Plan p = rc_plan();
  const auto& h = p.hosts[0];
  std::vector<std::string> created, destroyed;
  for (const auto& st : h.steps) {
    const std::string& v = st.verb;
    if (v == "ibv_open_device" || v == "ibv_alloc_pd" || v == "ibv_reg_mr" || v == "ibv_create_cq" ||
        v == "ibv_create_qp" || v == "ibv_create_qp_ex" || v == "ibv_create_srq" || v == "ibv_open_xrcd" ||
        v == "ibv_create_comp_channel")
      created.push_back(st.object);
    if (st.phase == Phase::Teardown) destroyed.push_back(st.object);
  }
  std::vector<std::string> reversed(created.rbegin(), created.rend());
  CHECK(join(destroyed) == join(reversed));
  for (const auto& st : h.steps)
    if (st.phase == Phase::Teardown) CHECK(&st - &h.steps[0] >= static_cast<long>(h.steps.size() - destroyed.size()));
}

TEST_CASE("the RC INIT->RTR step's attr_mask is 0x129181 with exactly these IBV_QP_ names") {
  const Plan p = rc_plan();
  const auto& h = p.hosts[0];
  for (const char* q : {"qa", "qb"}) {
    CAPTURE(q);
    const Step* st = find_step(h, "ibv_modify_qp", q, "RTR");
    REQUIRE(st);
    CHECK(st->has_mask);
    CHECK(st->mask == 0x129181u);
    CHECK(st->from_state == "INIT");
    CHECK(st->prediction == "ok");
    CHECK(qpo::spec::RuleTable::builtin().mask_names(st->mask) ==
          "IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER | "
          "IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN");
  }
}

TEST_CASE("values known only at run time are flagged runtime, with a note") {
  const Plan p = rc_plan();
  const auto& h = p.hosts[0];
  const Step* rtr = find_step(h, "ibv_modify_qp", "qa", "RTR");
  REQUIRE(rtr);
  const Arg* qpn = find_arg(*rtr, "dest_qp_num");
  REQUIRE(qpn);
  CHECK(qpn->runtime);
  CHECK(qpn->value == "peer");
  CHECK(qpn->note == "peer QPN, known after exchange");
  const Arg* mtu = find_arg(*rtr, "path_mtu");
  REQUIRE(mtu);
  CHECK(mtu->runtime);
  CHECK(mtu->value == "auto");
  const Arg* dgid = find_arg(*rtr, "ah_attr.grh.dgid");
  REQUIRE(dgid);
  CHECK(dgid->runtime);
  CHECK(dgid->note == "peer GID, known after exchange");
  const Arg* hop = find_arg(*rtr, "ah_attr.grh.hop_limit");
  REQUIRE(hop);
  CHECK_FALSE(hop->runtime);
  CHECK(hop->value == "1");
  const Step* rts = find_step(h, "ibv_modify_qp", "qa", "RTS");
  REQUIRE(rts);
  const Arg* psn = find_arg(*rts, "sq_psn");
  REQUIRE(psn);
  CHECK(psn->runtime);
  CHECK(psn->value == "random");
}

TEST_CASE("values filled in from defaults are flagged from_default; written ones are not") {
  const Plan p = rc_plan();
  const auto& h = p.hosts[0];
  const Step* qa_rtr = find_step(h, "ibv_modify_qp", "qa", "RTR");
  REQUIRE(qa_rtr);
  const Arg* rnr = find_arg(*qa_rtr, "min_rnr_timer");
  REQUIRE(rnr);
  CHECK(rnr->from_default);
  CHECK(rnr->value == "12");
  CHECK_FALSE(rnr->runtime);
  CHECK_FALSE(find_arg(*qa_rtr, "max_dest_rd_atomic")->from_default);
  const Step* qb_init = find_step(h, "ibv_modify_qp", "qb", "INIT");
  REQUIRE(qb_init);
  const Arg* pkey = find_arg(*qb_init, "pkey_index");
  REQUIRE(pkey);
  CHECK(pkey->from_default);
  CHECK(pkey->value == "0");
  const Arg* port = find_arg(*qb_init, "port_num");
  REQUIRE(port);
  CHECK(port->from_default);
  CHECK(port->runtime);
  CHECK(port->value == "device");
  const Arg* flags = find_arg(*qb_init, "qp_access_flags");
  REQUIRE(flags);
  CHECK_FALSE(flags->from_default);
  CHECK(flags->value == "IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ");
}

TEST_CASE("a two-host scenario yields two host plans, each with only its own objects") {
  std::string y =
      "version: 1\n"
      "hosts: { a: { address: node-a }, b: { address: node-b } }\n"
      "devices: { da: { host: a }, db: { host: b } }\n"
      "mrs:\n  ma: { pd: da, access: [local_write] }\n  mb: { pd: db, access: [local_write, remote_write] }\n"
      "cqs: { ca: { device: da }, cb: { device: db } }\n"
      "qps:\n"
      "  qa: { pd: da, type: RC, send_cq: ca, recv_cq: ca, connect: qb,\n"
      "        states: { INIT: {}, RTR: { path_mtu: auto }, RTS: {} } }\n"
      "  qb: { pd: db, type: RC, send_cq: cb, recv_cq: cb, connect: qa,\n"
      "        states: { INIT: { qp_access_flags: [remote_write] }, RTR: { path_mtu: auto }, RTS: {} } }\n"
      "workloads:\n  w: { qp: qa, op: rdma_write, local_mr: ma, remote_mr: mb, size: 64 }\n";
  Plan p = plan_of(y);
  REQUIRE(p.hosts.size() == 2);
  CHECK(p.hosts[0].host == "a");
  CHECK(p.hosts[0].address == "node-a");
  CHECK(p.hosts[1].host == "b");
  CHECK(p.hosts[1].address == "node-b");
  const std::set<std::string> own[2] = {{"da", "ma", "ca", "qa", "w", "a", "all hosts", "qpo.slots.qa"},
                                        {"db", "mb", "cb", "qb", "b", "all hosts", "qpo.slots.qb"}};
  for (size_t i = 0; i < 2; ++i) {
    CAPTURE(p.hosts[i].host);
    for (const auto& st : p.hosts[i].steps) {
      CAPTURE(st.verb);
      CHECK(own[i].count(st.object) == 1);
    }
    CHECK(find_step(p.hosts[i], "barrier", "all hosts"));
    CHECK(p.hosts[i].steps.front().verb == "ibv_open_device");
    CHECK(p.hosts[i].steps.back().verb == "ibv_close_device");
  }
  CHECK(find_step(p.hosts[0], "workload", "w"));
  CHECK_FALSE(find_step(p.hosts[1], "workload", "w"));
  // Implicit PDs take the device's name; each host allocates only its own.
  CHECK(find_step(p.hosts[0], "ibv_alloc_pd", "da"));
  CHECK_FALSE(find_step(p.hosts[0], "ibv_alloc_pd", "db"));
  CHECK(find_step(p.hosts[1], "ibv_alloc_pd", "db"));
}

TEST_CASE("render_json spells each ibv_modify_qp mask in hex as attr_mask_hex") {
  Plan p = rc_plan();
  qpo::util::JsonWriter w;
  qpo::plan::render_json(w, p);
  const std::string& json = w.str();
  CHECK(json.find("\"attr_mask_hex\"") != std::string::npos);
  CHECK(json.find("\"attr_mask_hex\": \"0x129181\"") != std::string::npos);
  CHECK(json.find("\"attr_mask\": 1216897") != std::string::npos);
  CHECK(json.find("\"IBV_QP_MIN_RNR_TIMER\"") != std::string::npos);
  CHECK(json.front() == '{');
  CHECK(json.back() == '}');
}

TEST_CASE("render_text shows masks in hex and names, and marks defaults") {
  std::string text = qpo::plan::render_text(rc_plan());
  CHECK(text.rfind("plan for rc-pair (37 steps)\n", 0) == 0);
  CHECK(text.find("INIT->RTR  attr_mask=0x129181 (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_RQ_PSN | "
                  "IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN)  => ok") != std::string::npos);
  CHECK(text.find("min_rnr_timer=12 [default]") != std::string::npos);
}

TEST_CASE("a transition expected to fail is planned with its prediction") {
  auto p = plan_of(
      "version: 1\ndevices: { d: {} }\ncqs: { c: { device: d } }\nqps:\n"
      "  q: { pd: d, type: RC, send_cq: c, recv_cq: c, states: { INIT: { qkey: 1, expect: EINVAL } } }\n");
  const Step* st = find_step(p.hosts[0], "ibv_modify_qp", "q", "INIT");
  REQUIRE(st);
  CHECK(st->prediction == "EINVAL (expected EINVAL)");
  CHECK(st->expect == "EINVAL");
  // The QP never reached INIT, so no receives are posted for it.
  CHECK_FALSE(find_step(p.hosts[0], "ibv_post_recv", "q"));
}

TEST_CASE("render_json lists attr_mask_names: the IBV_QP_ names of each step's mask, in bit order") {
  Plan p = rc_plan();
  qpo::util::JsonWriter w;
  qpo::plan::render_json(w, p);
  YAML::Node doc = YAML::Load(w.str());  // JSON is YAML
  REQUIRE(doc["hosts"].size() == 1);
  int checked = 0;
  for (const auto& st : doc["hosts"][0]["steps"]) {
    if (!st["attr_mask"]) continue;
    auto mask = st["attr_mask"].as<uint32_t>();
    std::vector<std::string> names;
    for (const auto& n : st["attr_mask_names"]) names.push_back(n.as<std::string>());
    CAPTURE(st["object"].as<std::string>());
    CAPTURE(st["to"].as<std::string>());
    std::vector<std::string> want;
    const std::string all = qpo::spec::RuleTable::builtin().mask_names(mask, "|");
    for (auto part : qpo::util::split(all, '|')) want.emplace_back(part);
    CHECK(join(names) == join(want));
    if (st["to"].as<std::string>() == "RTR")
      CHECK(join(names) == join({"IBV_QP_STATE", "IBV_QP_AV", "IBV_QP_PATH_MTU", "IBV_QP_RQ_PSN", "IBV_QP_MIN_RNR_TIMER",
                                 "IBV_QP_MAX_DEST_RD_ATOMIC", "IBV_QP_DEST_QPN"}));
    ++checked;
  }
  CHECK(checked == 6);
}

TEST_CASE("sq_psn: random in a recovery step says it is the PSN drawn at bring-up, as exec does (issue 30 item 17d)") {
  auto l = qpo::test::load_validate(qpo::test::rc_pair(
      "{ path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12, ah_attr: { is_global: "
      "true, grh: { dgid: peer, sgid_index: auto, hop_limit: 1 } } }",
      "{ path_mtu: auto }",
      "timeline:\n  - { qp: qa, to: ERR }\n  - { qp: qa, to: RESET }\n  - { qp: qa, to: INIT }\n  - { qp: qa, to: RTR }\n"
      "  - { qp: qa, to: RTS, attrs: { sq_psn: random } }\n"));
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  Plan p = qpo::plan::build_plan(*l.checked);
  const Step* bring_up = nullptr;
  const Step* recovery = nullptr;
  for (const auto& st : p.hosts[0].steps)
    if (st.verb == "ibv_modify_qp" && st.object == "qa" && st.to_state == "RTS") (bring_up ? recovery : bring_up) = &st;
  REQUIRE(bring_up);
  REQUIRE(recovery);
  CHECK(find_arg(*bring_up, "sq_psn")->note == "random 24-bit, chosen at run time");
  CHECK(find_arg(*recovery, "sq_psn")->note ==
        "the random 24-bit PSN drawn at bring-up, kept for the run (the peer's rq_psn: peer holds it)");
}
