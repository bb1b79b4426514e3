// The exchange's MR entries go by id (exec/exchange.h MrKey); scripts, workloads and messages
// name them (exec/directory_names.h); the planner turns a name into its key (plan/buffer_key.h).
// Each kind's name, its key back, and its text on the wire.
#include <doctest/doctest.h>

#include "exec/directory_names.h"
#include "plan/buffer_key.h"
#include "golden/plan_of_file.h"

using qpo::exec::MrKey;
using qpo::test::plan_of_file;

TEST_CASE("MR keys: a scenario MR, a memory window and a QP's slot buffer, by name and back") {
  auto p = plan_of_file("scenarios/two-host-memory-window.yaml");
  MrKey mb{MrKey::Kind::Mr, p.id_of(qpo::plan::ObjectKind::Mr, "mb")};
  MrKey wb{MrKey::Kind::Window, p.id_of(qpo::plan::ObjectKind::Mw, "wb")};
  MrKey slots = qpo::exec::slots_key(p.qp_id("qb"));
  CHECK(qpo::exec::mr_key_name(p, mb) == "mb");
  CHECK(qpo::exec::mr_key_name(p, wb) == "wb");
  CHECK(qpo::exec::mr_key_name(p, slots) == "qpo.slots.qb");
  CHECK(qpo::plan::buffer_key(p, "mb") == mb);
  CHECK(qpo::plan::buffer_key(p, "wb") == wb);
  CHECK(qpo::plan::buffer_key(p, "qpo.slots.qb") == slots);
  CHECK_FALSE(qpo::plan::buffer_key(p, "qpo.slots.nobody").has_value());
  CHECK_FALSE(qpo::plan::buffer_key(p, "nothing").has_value());
  CHECK(qpo::exec::mr_key_name(p, {MrKey::Kind::Mr, 99}).empty());
}

TEST_CASE("MR keys: an external peer's buffer goes by its place in the plan's externals") {
  auto p = plan_of_file("scenarios/interop/ib-write-bw-client.yaml");
  REQUIRE(p.externals.size() == 1);
  MrKey tool{MrKey::Kind::External, 0};
  CHECK(qpo::exec::mr_key_name(p, tool) == "tool");
  CHECK(qpo::plan::buffer_key(p, "tool") == tool);
}

TEST_CASE("MR keys on the wire: a kind letter and the id, and nothing else reads back") {
  CHECK(qpo::exec::mr_key_text({MrKey::Kind::Mr, 3}) == "m3");
  CHECK(qpo::exec::mr_key_text({MrKey::Kind::Slots, 12}) == "s12");
  CHECK(qpo::exec::mr_key_text({MrKey::Kind::Window, 0}) == "w0");
  CHECK(qpo::exec::mr_key_text({MrKey::Kind::External, 1}) == "x1");
  CHECK(qpo::exec::mr_key_from_text("s12") == MrKey{MrKey::Kind::Slots, 12});
  CHECK_FALSE(qpo::exec::mr_key_from_text("s").has_value());
  CHECK_FALSE(qpo::exec::mr_key_from_text("s-1").has_value());
  CHECK_FALSE(qpo::exec::mr_key_from_text("s1x").has_value());
  CHECK_FALSE(qpo::exec::mr_key_from_text("z1").has_value());
  CHECK_FALSE(qpo::exec::mr_key_from_text("m4294967296").has_value());
}
