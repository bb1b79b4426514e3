// Runs inside the Soft-RoCE lab: the probe library (src/probe, what `qpo probe` runs) drives
// fresh QPs of every type rxe can create into each reachable state and tries each case of the
// rule tables; every answer must be the predicted one or a deviation schemas/providers.yaml
// records for rxe, with the same answer.
#include <doctest/doctest.h>

#include "probe/deviations.h"
#include "probe/runner.h"
#include "spec/providers.h"

TEST_CASE("rxe answers every probe case as the rule tables predict or as providers.yaml records") {
  qpo::probe::Options options;
  options.device = "rxe0";
  auto report = qpo::probe::run_probe(options);
  const auto* recorded = qpo::spec::ProviderTable::builtin().entry("rxe");
  REQUIRE(recorded);
  auto changed = qpo::probe::compare_deviations(*recorded, qpo::probe::entry_from(report));
  MESSAGE(report.results.size(), " cases, ", report.agreed(), " as predicted, the rest as recorded");
  for (const auto& c : changed) MESSAGE("CHANGED: ", c);
  CHECK(changed.empty());
  // RC, UC and UD were probed; XRC and RAW_PACKET are not (rxe has neither), with the reason.
  CHECK(report.not_probed.count("RC") == 0);
  CHECK(report.not_probed.count("UD") == 0);
  CHECK(report.not_probed.at("XRC_SEND").find("unsupported by device") == 0);
  CHECK(report.agreed() > 1000);
}
