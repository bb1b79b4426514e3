// qpo test's baselines (cli/baseline.h): cases compared with DIR/<case>.json by qpo compare's
// code, saved, and their figures as JUnit properties; on the saved result files of tests/compare.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "cli/baseline.h"

namespace fs = std::filesystem;
namespace bl = qpo::cli::baseline;

namespace {

const std::string kDir = std::string(QPO_SOURCE_DIR) + "/tests/compare/";

qpo::suite::Case passed(const std::string& name, const std::string& result) {
  qpo::suite::Case c;
  c.name = name;
  c.file = "s.yaml";
  c.outcome = "pass";
  c.results = kDir + result;
  return c;
}

struct Dir {
  fs::path path = fs::temp_directory_path() / ("qpo-baseline-" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  void put(const std::string& case_name, const std::string& result) {
    fs::copy_file(kDir + result, path / bl::file_name(case_name), fs::copy_options::overwrite_existing);
  }
};

}  // namespace

TEST_CASE("baseline: a case's file is its name, with characters outside the safe set as _") {
  CHECK(bl::file_name("rc-write[path_mtu=1024,size=4KiB]") == "rc-write[path_mtu=1024,size=4KiB].json");
  CHECK(bl::file_name("a/b c") == "a_b_c.json");
  CHECK(bl::file_name("..") == "_...json");
}

TEST_CASE("baseline: a regression past the tolerance fails the case and names the figure") {
  Dir d;
  d.put("bw[size=64]", "baseline.json");
  std::vector<qpo::suite::Case> cases{passed("bw[size=64]", "bw-down.json")};
  auto b = bl::compare_with(cases, d.path.string(), 5);
  REQUIRE(b.size() == 1);
  REQUIRE(b[0].result);
  CHECK(b[0].result->regressions() == 1);
  CHECK(cases[0].outcome == "fail");
  CHECK(cases[0].reason == "1 regression beyond 5% against " + (d.path / "bw[size=64].json").string() +
                               ": write_bw bw_avg -10.0%");
}

TEST_CASE("baseline: a change too large for a percentage names the value it changed from, not 0") {
  Dir d;
  d.put("lat", "lat-denormal.json");  // t_typical 5e-324: 100 usec is an infinite change
  std::vector<qpo::suite::Case> cases{passed("lat", "lat-100.json")};
  auto b = bl::compare_with(cases, d.path.string(), 5);
  CHECK(cases[0].reason == "1 regression beyond 5% against " + (d.path / "lat.json").string() +
                               ": write_lat t_typical from 4.94066e-324");
}

TEST_CASE("baseline: the same drop inside the tolerance passes") {
  Dir d;
  d.put("bw", "baseline.json");
  std::vector<qpo::suite::Case> cases{passed("bw", "bw-down.json")};
  auto b = bl::compare_with(cases, d.path.string(), 15);
  REQUIRE(b[0].result);
  CHECK(b[0].result->regressions() == 0);
  CHECK(cases[0].outcome == "pass");
  CHECK(bl::render_text(cases, b).find("baseline bw: no regression beyond 15% (") == 0);
}

TEST_CASE("baseline: a case without a baseline file is a note, not a failure") {
  Dir d;
  std::vector<qpo::suite::Case> cases{passed("new-case", "within.json")};
  auto b = bl::compare_with(cases, d.path.string(), 5);
  CHECK_FALSE(b[0].result);
  CHECK(b[0].note == "no baseline (" + (d.path / "new-case.json").string() + ")");
  CHECK(cases[0].outcome == "pass");
}

TEST_CASE("baseline: a baseline file that is not a result fails the case") {
  Dir d;
  d.put("bw", "truncated.json");
  std::vector<qpo::suite::Case> cases{passed("bw", "within.json")};
  bl::compare_with(cases, d.path.string(), 5);
  CHECK(cases[0].outcome == "fail");
  CHECK(cases[0].reason.rfind("baseline: " + (d.path / "bw.json").string() + ": ", 0) == 0);
}

TEST_CASE("baseline: a failed case is not compared, and not saved") {
  Dir d;
  d.put("bw", "baseline.json");
  auto failed = passed("bw", "bw-down.json");
  failed.outcome = "fail";
  std::vector<qpo::suite::Case> cases{failed, passed("ok[x=1]", "within.json")};
  auto b = bl::compare_with(cases, d.path.string(), 5);
  CHECK(b[0].note == "not compared: the case did not pass");
  fs::path out = d.path / "saved";
  std::vector<std::string> errors;
  CHECK(bl::save(cases, out.string(), &errors) == 1);
  CHECK(errors.empty());
  CHECK(fs::exists(out / "ok[x=1].json"));
  CHECK_FALSE(fs::exists(out / "bw.json"));
}

TEST_CASE("baseline: a case's properties are its parameters, then its figures with units") {
  auto c = passed("bw[size=64]", "bw-down.json");
  c.parameters = {{"size", "64"}};
  bl::add_properties(c);
  REQUIRE(c.properties.size() == 2);
  CHECK(c.properties[0] == std::pair<std::string, std::string>{"size", "64"});
  CHECK(c.properties[1] == std::pair<std::string, std::string>{"write_bw.bw_avg", "90 MB/s"});
}

TEST_CASE("junit: a case's properties are written inside its testcase") {
  auto c = passed("bw[size=64]", "bw-down.json");
  c.properties = {{"size", "64"}, {"write_bw.bw_avg", "90 MB/s"}};
  std::string xml = qpo::suite::junit_xml({c}, "qpo");
  CHECK(xml.find("<testcase classname=\"s.yaml\" name=\"bw[size=64]\" time=\"0.000\">\n      <properties>\n"
                 "        <property name=\"size\" value=\"64\"/>\n"
                 "        <property name=\"write_bw.bw_avg\" value=\"90 MB/s\"/>\n      </properties>\n    </testcase>") !=
        std::string::npos);
}

TEST_CASE("results: each case keeps its run as DIR/<case>.json; a name two cases share gets -2") {
  Dir d;
  std::vector<qpo::suite::Case> cases(3);
  cases[0].name = "rc-write";
  cases[1].name = "rc write";
  cases[2].name = "rc-write";
  bl::name_results(cases, d.path.string());
  CHECK(cases[0].results == (d.path / "rc-write.json").string());
  CHECK(cases[1].results == (d.path / "rc_write.json").string());
  CHECK(cases[2].results == (d.path / "rc-write-2.json").string());
}

TEST_CASE("results: a file an earlier suite left under a case's name is removed before the case runs") {
  Dir d;
  d.put("rc-write", "baseline.json");
  std::vector<qpo::suite::Case> cases(1);
  cases[0].name = "rc-write";
  bl::name_results(cases, d.path.string());
  CHECK_FALSE(fs::exists(cases[0].results));
}

TEST_CASE("results: --json names each kept case's file, null for a case whose run wrote none") {
  std::vector<qpo::suite::Case> cases{passed("a", "baseline.json"), passed("b", "no-such-file.json")};
  std::string json = bl::suite_json(cases, {}, true);
  CHECK(json.find("\"results\": \"" + kDir + "baseline.json\"") != std::string::npos);
  CHECK(json.find("\"results\": null") != std::string::npos);
  CHECK(bl::suite_json(cases, {}, false).find("\"results\"") == std::string::npos);
}

TEST_CASE("results: --json's set lists qpo test's own --set values, then the matrix case's, as its run had them") {
  auto c = passed("rc-write[size=4KiB]", "baseline.json");
  c.overrides = {"workloads.write.size=4KiB"};
  std::string json = bl::suite_json({c}, {}, true, {"qps.qa.states.RTR.path_mtu=1024"});
  auto global = json.find("\"qps.qa.states.RTR.path_mtu=1024\""), own = json.find("\"workloads.write.size=4KiB\"");
  REQUIRE(global != std::string::npos);
  REQUIRE(own != std::string::npos);
  CHECK(global < own);
  CHECK(json.find("\"set\"") < global);
}
