// The one table of workload defaults (util/workload_defaults.h) is what README's "Workload
// defaults" prints, row for row; the op loop and the built-ins take it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "unit/scenario_fixture.h"
#include "util/workload_defaults.h"

namespace {

std::string readme() {
  std::ifstream in(std::filesystem::path(QPO_SOURCE_DIR) / "README.md", std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// README's row for `name`: "| `name` | size | iterations | tx_depth | rx_depth |" ("" when absent).
std::string readme_row(const std::string& text, const std::string& name) {
  auto at = text.find("\n| `" + std::string(name) + "` |");
  if (at == std::string::npos) return "";
  auto end = text.find('\n', at + 1);
  std::string line = text.substr(at + 1, end - at - 1);
  // The first five cells: the name and the four numbers.
  size_t cut = 0;
  for (int bars = 0; bars < 5 && cut != std::string::npos; ++bars) cut = line.find('|', cut + 1);
  return cut == std::string::npos ? line : line.substr(0, cut + 1);
}

}  // namespace

TEST_CASE("README's workload defaults are the table the runners take, row for row") {
  std::string text = readme();
  for (const auto& row : qpo::util::kWorkloadDefaults) {
    std::string name = row.name;
    CAPTURE(name);
    std::string want = "| `" + std::string(row.name) + "` | " + std::to_string(row.size) + " | " + std::to_string(row.iterations) +
                       " | " + std::to_string(row.tx_depth) + " | " + std::to_string(row.rx_depth) + " |";
    CHECK(readme_row(text, row.name) == want);
  }
}

TEST_CASE("an op workload that gives no size or iterations takes the op row") {
  auto l = qpo::test::load_validate(qpo::test::rc_pair() + "workloads:\n  w: { qp: qa, op: send, local_mr: ma }\n");
  REQUIRE_MESSAGE(l.errors() == 0, l.dump());
  const auto& w = l.checked->model().workloads.at(0);
  CHECK(w.size == qpo::util::kOpDefaults.size);
  CHECK(w.size == 4096);
  CHECK(w.iterations == 1000);
}
