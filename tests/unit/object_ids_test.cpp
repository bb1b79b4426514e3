// Ids are per kind (plan/qp_id.h): a QP, a CQ or a window may share another kind's name, and
// each step, and each name the exchange's directory resolves, takes its own kind's object.
#include <doctest/doctest.h>

#include "exec/directory_names.h"
#include "plan/buffer_key.h"
#include "plan/plan.h"
#include "unit/scenario_fixture.h"

using qpo::exec::MrKey;
using qpo::plan::ObjectKind;
using qpo::plan::StepKind;
using qpo::test::load_validate;
using qpo::test::rc_pair;

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

const qpo::plan::Step* first_step(const qpo::plan::Plan& p, StepKind kind) {
  for (const auto& h : p.hosts)
    for (const auto& st : h.steps)
      if (st.kind == kind) return &st;
  return nullptr;
}

}  // namespace

TEST_CASE("a device named like a QP: its open and query steps carry the device's id, the QP's create the QP's") {
  // Device "qa" is device 1 (after zz); QP qa is QP 0: by name alone the two ids differ.
  auto text = replace_all(replace_all(rc_pair(), "devices: { da:", "devices: { zz: { host: a, name: auto, port: 1 }, qa:"),
                          "device: da", "device: qa");
  auto l = load_validate(text);
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  auto p = qpo::plan::build_plan(*l.checked);
  auto device = p.id_of(ObjectKind::Device, "qa");
  REQUIRE(device == 1);
  int opened = 0;
  for (const auto& st : p.hosts[0].steps)
    if (st.object == "qa" && (st.kind == StepKind::OpenDevice || st.kind == StepKind::QueryPort || st.kind == StepKind::QueryGid)) {
      CHECK(st.id == device);
      ++opened;
    }
  CHECK(opened == 3);
  const auto* create = first_step(p, StepKind::CreateQp);
  REQUIRE(create);
  CHECK(create->object == "qa");
  CHECK(create->id == p.qp_id("qa"));
  CHECK(p.devices.at(device).name == "qa");
  CHECK(p.qps.at(create->id).device == device);
}

TEST_CASE("an MR and a memory window of one name: the directory's name means the window, as the plan's remote_mr does") {
  auto text = rc_pair() + "mws:\n  mb: { type: 2, mr: mb, offset: 0, length: 4KiB, access: [remote_write], bind_qp: qb }\n";
  text = replace_all(text, "access: [local_write, remote_write, remote_read] }", "access: [local_write, remote_write, remote_read, mw_bind] }");
  auto l = load_validate(text);
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  auto p = qpo::plan::build_plan(*l.checked);
  auto k = qpo::plan::buffer_key(p, "mb");
  REQUIRE(k.has_value());
  CHECK(k->kind == MrKey::Kind::Window);
  CHECK(qpo::exec::mr_key_name(p, {MrKey::Kind::Mr, p.id_of(ObjectKind::Mr, "mb")}) == "mb");
}
