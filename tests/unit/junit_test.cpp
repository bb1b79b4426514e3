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

TEST_CASE("JUnit XML is well-formed UTF-8 whatever bytes a scenario's output holds") {
  // Found by validating the real `qpo test --junit` output with xmllint (tests/junit/): a
  // hostile scenario with a 0xFF byte in a QP name put that byte into the failure text, and
  // the file (declared UTF-8) no longer parsed.
  std::vector<Case> cases(1);
  cases[0] = {"f\xff.yaml", "n", {}, "fail",
              "'q\xff" "b' connects to 'qa'",
              "ok: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 | bad: \xc0\xaf \xed\xa0\x80 \xef\xbf\xbf \xf4\x90\x80\x80 \x80 \xe2\x82",
              0};
  std::string xml = qpo::suite::junit_xml(cases, "qpo");
  CHECK(xml.find("classname=\"f\xef\xbf\xbd.yaml\"") != std::string::npos);
  CHECK(xml.find("message=\"&apos;q\xef\xbf\xbd" "b&apos; connects to &apos;qa&apos;\"") != std::string::npos);
  // Valid characters (2, 3 and 4 bytes) stay; an overlong '/', a surrogate, U+FFFF, a code
  // point above U+10FFFF, a stray continuation byte and a truncated sequence do not.
  CHECK(xml.find("ok: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 | bad: ") != std::string::npos);
  CHECK(xml.find("\xc0") == std::string::npos);
  CHECK(xml.find("\xed\xa0") == std::string::npos);
  CHECK(xml.find("\xef\xbf\xbf") == std::string::npos);
  CHECK(xml.find("\xf4\x90") == std::string::npos);
  CHECK(xml.find("\xff") == std::string::npos);
}
