// Text output never carries what a scenario smuggles in: escapes, bidi overrides, zero-width
// characters, broken UTF-8 or megabytes of one name; and the expanded model has a budget.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "diag/render.h"
#include "plan/plan.h"
#include "scenario_fixture.h"
#include "util/strings.h"

using qpo::test::load_validate;
using qpo::util::printable;

TEST_CASE("printable writes control characters as \\xNN") {
  CHECK(printable("UD\x1b]0;TITLE\a\x1b[2J") == "UD\\x1B]0;TITLE\\x07\\x1B[2J");
  CHECK(printable("a\rb") == "a\\x0Db");
  CHECK(printable("line\nnext") == "line\\x0Anext");
  CHECK(printable("line\nnext", 4096, true) == "line\nnext");
}

TEST_CASE("printable writes bidi overrides and zero-width characters as \\u{NNNN}") {
  CHECK(printable("q\xe2\x80\xae" "live") == "q\\u{202E}live");  // U+202E RIGHT-TO-LEFT OVERRIDE
  CHECK(printable("a\xe2\x80\x8b" "b") == "a\\u{200B}b");        // U+200B ZERO WIDTH SPACE
  CHECK(printable("\xef\xbb\xbfx") == "\\u{FEFF}x");              // BOM
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");               // ordinary UTF-8 stays
}

TEST_CASE("printable writes bytes that are not UTF-8 as \\xNN") {
  CHECK(printable("a\xff" "b") == "a\\xFFb");
  CHECK(printable("\xc0\xaf") == "\\xC0\\xAF");  // an overlong '/'
}

TEST_CASE("printable cuts what is past its limit and counts it") {
  std::string big(10000000, 'x');
  std::string shown = printable(big, 100);
  CHECK(shown == std::string(100, 'x') + "... [9999900 more bytes]");
}

TEST_CASE("a QP name with an escape sequence is Q108, and the diagnostic text shows no escape byte") {
  auto l = load_validate(
      "version: 1\ndevices: { d: {} }\ncqs: { c: { device: d, depth: 1024 } }\n"
      "qps:\n  \"q\\e]0;TITLE\\a\": { pd: d, type: UD, send_cq: c, recv_cq: c }\n");
  const auto* d = l.one("Q108");
  REQUIRE_MESSAGE(d, l.dump());
  qpo::diag::Sources sources{{l.source.name(), &l.source}};
  std::string text = qpo::diag::render_text(*d, sources, false);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\a') == std::string::npos);
  CHECK(text.find("q\\x1B]0;TITLE\\x07") != std::string::npos);
}

TEST_CASE("QP names follow the object name rule: spaces, format characters and 65 characters are Q108") {
  for (const std::string& name : {std::string("\"a b\""), std::string("\"q\xe2\x80\xae" "evil\""), std::string(65, 'q')}) {
    CAPTURE(name);
    auto l = load_validate("version: 1\ndevices: { d: {} }\ncqs: { c: { device: d, depth: 1024 } }\nqps:\n  " + name +
                           ": { pd: d, type: UD, send_cq: c, recv_cq: c }\n");
    CHECK_MESSAGE(l.one("Q108"), l.dump());
  }
}

TEST_CASE("count: that would expand past the model's budget is Q606 before anything is expanded") {
  auto l = load_validate("version: 1\ndevices: { d: {} }\ncqs: { c: { device: d } }\nqps:\n"
                         "  q: { pd: d, type: UD, send_cq: c, recv_cq: c, count: 1000000 }\n");
  const auto* d = l.one("Q606");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "count: expands the scenario to 1000000 QPs and 0 transitions; the limits are 200000 QPs and 2000000 transitions");
  CHECK(l.scenario->qps.empty());
}

TEST_CASE("a count: expansion that collides with a hand-written QP is Q105 at the hand-written one") {
  std::string y = "version: 1\ndevices: { d: {} }\ncqs: { c: { device: d, depth: 1024 } }\nqps:\n"
                  "  q: { pd: d, type: UD, send_cq: c, recv_cq: c, count: 2 }\n"
                  "  q.1: { pd: d, type: UD, send_cq: c, recv_cq: c }\n";
  auto l = load_validate(y);
  const auto* d = l.one("Q105");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "QP name 'q.1' is written twice: once by count: and once by hand");
  CHECK(d->loc.line == qpo::test::line_of(y, "q.1:"));
}

TEST_CASE("plan text shows a scenario name with a newline on one line") {
  auto l = load_validate("version: 1\nname: \"x\\nok 1 - forged\"\ndevices: { d: {} }\n");
  REQUIRE(l.scenario);
  std::string text = qpo::plan::render_text(qpo::plan::build_plan(*l.checked));
  CHECK(text.rfind("plan for x\\x0Aok 1 - forged (", 0) == 0);
}

TEST_CASE("qpo validate - stops reading standard input past 16 MiB and says so (Q110)") {
  std::string cmd = std::string("head -c 20000000 /dev/zero | ") + QPO_BINARY + " validate --format json - 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(out.find("\"Q110\"") != std::string::npos);
  CHECK(out.find("more than 16 MiB") != std::string::npos);
}
