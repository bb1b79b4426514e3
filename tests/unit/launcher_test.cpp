// A host's launcher: template (util/command_template.h): words, quotes, placeholders, the argv
// it makes for an agent (cluster/launch.h), and Q163 for a template qpo cannot use.
#include <doctest/doctest.h>

#include "cluster/launch.h"
#include "scenario_fixture.h"
#include "util/command_template.h"

using qpo::util::expand_command_template;
using qpo::util::parse_command_template;
using Argv = std::vector<std::string>;

TEST_CASE("launcher: {command} as a word of its own is the agent command's words") {
  CHECK(qpo::cluster::launcher_argv("srun -w {host} -N1 {command}", "a", "node-a", "/opt/qpo/bin/qpo") ==
        Argv{"srun", "-w", "a", "-N1", "/opt/qpo/bin/qpo", "agent", "--stdio"});
}

TEST_CASE("launcher: a placeholder inside a quoted word is substituted there, a list joined by spaces") {
  CHECK(qpo::cluster::launcher_argv("sh -c 'exec {command} 2>/tmp/{host}.log'", "b", "x", "qpo") ==
        Argv{"sh", "-c", "exec qpo agent --stdio 2>/tmp/b.log"});
}

TEST_CASE("launcher: {address}, double quotes and literal braces") {
  CHECK(qpo::cluster::launcher_argv("mpirun --host {address} \"--tag={{{host}}}\" {command}", "a", "10.0.0.1", "qpo") ==
        Argv{"mpirun", "--host", "10.0.0.1", "--tag={a}", "qpo", "agent", "--stdio"});
}

TEST_CASE("command template: the placeholders it names, once each, in order") {
  std::string error;
  auto t = parse_command_template("x {host} {command} {host}-{addres}", &error);
  REQUIRE(t);
  CHECK(t->placeholders == Argv{"host", "command", "addres"});
  CHECK(expand_command_template(*t, {{"host", {"h"}}}) == Argv{"x", "h", "{command}", "h-{addres}"});
}

TEST_CASE("command template: an unclosed quote, a brace without its pair, nothing at all") {
  std::string error;
  CHECK_FALSE(parse_command_template("srun 'a {command}", &error));
  CHECK(error == "unclosed ' quote");
  CHECK_FALSE(parse_command_template("srun {host {command}", &error));
  CHECK(error == "'{' without '}' in '{host' (write {{ for a literal brace)");
  CHECK_FALSE(parse_command_template("  ", &error));
  CHECK(error == "no command");
}

TEST_CASE("loader: a launcher naming an unknown placeholder is Q163 with a did-you-mean") {
  auto l = qpo::test::load_only("version: 1\nhosts:\n  a: { launcher: \"srun -w {adress} {command}\" }\n");
  const auto* d = l.one("Q163");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "unknown placeholder {adress} in the launcher");
  CHECK(d->hint.rfind("did you mean {address}? known: {host}, {address}, {command}", 0) == 0);
  CHECK(d->loc.line == 3);
  CHECK(d->path == "hosts.a.launcher");
}

TEST_CASE("loader: a launcher without {command} is Q163") {
  auto l = qpo::test::load_only("version: 1\nhosts:\n  a: { launcher: \"srun -w {host}\" }\n");
  const auto* d = l.one("Q163");
  REQUIRE_MESSAGE(d, l.dump());
  CHECK(d->message == "the launcher has no {command}: the agent would never start");
}

TEST_CASE("loader: a good launcher is kept on its host") {
  auto l = qpo::test::load_only("version: 1\nhosts:\n  a: { address: n1, launcher: \"srun -w {host} -N1 {command}\" }\n");
  CHECK(l.with_code("Q163").empty());
  REQUIRE(l.scenario);
  REQUIRE(l.scenario->host("a"));
  CHECK(l.scenario->host("a")->launcher == "srun -w {host} -N1 {command}");
}
