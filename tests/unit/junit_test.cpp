#include <doctest/doctest.h>

#include "suite/suite.h"

using qpo::suite::Case;

TEST_CASE("JUnit XML has one testsuite with counts and a testcase per scenario") {
  std::vector<Case> cases(3);
  cases[0] = {"scenarios/a.yaml", "a", {}, "pass", "", "", 1.5};
  cases[1] = {"scenarios/b.yaml", "b", {}, "fail", "workload 'w': status <IBV_WC_REM_ACCESS_ERR>", "log & more", 2.0};
  cases[2] = {"scenarios/x.yaml", "x", {}, "skip", "unsupported by device (rxe): xrc", "", 0.5};
  std::string xml = qpo::suite::junit_xml(cases, "qpo");
  CHECK(xml.find("<testsuite name=\"qpo\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"4.000\">") !=
        std::string::npos);
  CHECK(xml.find("<testcase classname=\"scenarios/a.yaml\" name=\"a\" time=\"1.500\"/>") != std::string::npos);
  CHECK(xml.find("<failure message=\"workload &apos;w&apos;: status &lt;IBV_WC_REM_ACCESS_ERR&gt;\">log &amp; more</failure>") !=
        std::string::npos);
  CHECK(xml.find("<skipped message=\"unsupported by device (rxe): xrc\"/>") != std::string::npos);
  CHECK(xml.rfind("</testsuites>\n") == xml.size() - 14);
}

TEST_CASE("JUnit XML drops control characters that XML 1.0 cannot carry") {
  std::vector<Case> cases(1);
  cases[0] = {"f.yaml", "n", {}, "error", "bad\x01thing", "", 0};
  std::string xml = qpo::suite::junit_xml(cases, "qpo");
  CHECK(xml.find("<error message=\"badthing\">") != std::string::npos);
}
