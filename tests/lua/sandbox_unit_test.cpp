// The sandbox: what a workload script cannot do unless the user opts in.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "lua/workload.h"
#include "lua_fixture.h"

using qpo::test::FakeEndpoints;
using qpo::test::run_inline;

namespace {

// Runs `expr` in a sandboxed worker and returns tostring of it.
std::string eval(const std::string& expr, bool sandbox = true) {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w) return tostring(" + expr + ") end", 1, sandbox);
  REQUIRE_MESSAGE(r.ok, r.error);
  return r.workers[0].result.as_string();
}

std::string fails(const std::string& body) {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w)\n" + body + "\nend");
  CHECK_FALSE(r.ok);
  return r.error;
}

}  // namespace

TEST_CASE("processes, exits and file changes are gone") {
  CHECK(eval("os.execute") == "nil");
  CHECK(eval("os.exit") == "nil");
  CHECK(eval("os.remove") == "nil");
  CHECK(eval("os.rename") == "nil");
  CHECK(eval("io.popen") == "nil");
  CHECK(eval("io.open") == "nil");
  CHECK(eval("io.lines") == "nil");
  CHECK(eval("type(io.write)") == "function");
  CHECK(eval("type(os.clock)") == "function");
  CHECK(eval("type(os.time)") == "function");
  // Through require too: the loaded table holds the trimmed libraries.
  CHECK(eval("require('os').execute") == "nil");
  CHECK(eval("require('io').popen") == "nil");
}

TEST_CASE("the environment is out of reach: os.getenv is gone, through require too") {
  CHECK(eval("os.getenv") == "nil");
  CHECK(eval("require('os').getenv") == "nil");
}

TEST_CASE("no C modules, no bytecode, no debug hooks") {
  CHECK(eval("package.loadlib") == "nil");
  CHECK(eval("package.cpath") == "");
  CHECK(eval("string.dump") == "nil");
  CHECK(eval("debug.sethook") == "nil");
  CHECK(eval("debug.getregistry") == "nil");
  CHECK(eval("type(debug.traceback)") == "function");
  CHECK(fails("require 'socket.core'").find("no shipped module") != std::string::npos);
  // A binary chunk (the signature is enough to be refused).
  CHECK(eval("select(2, load('\\27Lua', 'x', 'b'))").find("binary chunks are not allowed") != std::string::npos);
  CHECK(eval("select(2, load('\\27Lua'))").find("binary") != std::string::npos);
  CHECK(eval("load('return 1 + 1')()") == "2");
}

TEST_CASE("dofile and loadfile only reach the allowed directories") {
  CHECK(fails("dofile('/etc/passwd')").find("outside the script's allowed directories") != std::string::npos);
  CHECK(fails("loadfile('/etc/hostname')").find("sandbox") != std::string::npos);
  CHECK(fails("dofile()").find("reading stdin is not allowed") != std::string::npos);

  // The script's own directory is allowed: helper files and modules next to it work.
  auto dir = std::filesystem::temp_directory_path() / ("qpo-lua-sandbox-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "helper.lua") << "return 40 + 2\n";
  std::ofstream(dir / "mymod.lua") << "return { answer = function() return 'yes' end }\n";
  std::ofstream(dir / "main.lua") << "function initiator(w)\n"
                                     "  return dofile('helper.lua') .. require('mymod').answer()\n"
                                     "end\n";
  FakeEndpoints f;
  qpo::lua::WorkloadSpec spec;
  spec.script = (dir / "main.lua").string();
  spec.workers = {{"qa", "initiator", {"qa"}}};
  auto r = qpo::lua::run_workload(spec, f.eps);
  CHECK_MESSAGE(r.ok, r.error);
  CHECK(r.workers[0].result.as_string() == "42yes");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a workload script that is not a regular file is refused, not read forever") {
  // A symlink named .lua to an endless device.
  auto path = std::filesystem::temp_directory_path() / ("qpo-lua-zero-" + std::to_string(::getpid()) + ".lua");
  std::filesystem::create_symlink("/dev/zero", path);
  qpo::lua::WorkloadSpec spec;
  spec.script = path.string();
  spec.workers = {{"qa", "initiator", {"qa"}}};
  CHECK(qpo::lua::check_workload(spec).find("workload script '" + path.string() + "' is not a regular file") !=
        std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("a workload script larger than the limit is refused with its size") {
  auto path = std::filesystem::temp_directory_path() / ("qpo-lua-big-" + std::to_string(::getpid()) + ".lua");
  {
    std::ofstream out(path);
    std::string comment(1 << 20, '-');
    for (int i = 0; i < 5; ++i) out << comment << "\n";
  }
  qpo::lua::WorkloadSpec spec;
  spec.script = path.string();
  spec.workers = {{"qa", "initiator", {"qa"}}};
  CHECK(qpo::lua::check_workload(spec).find("scripts are limited to 4194304 bytes") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("shipped modules load with require in both modes") {
  CHECK(eval("type(require('qpo.perf'))") == "table");
  CHECK(eval("type(require('qpo.perf'))", false) == "table");
}

TEST_CASE("opting out of the sandbox restores the standard libraries") {
  CHECK(eval("type(os.execute)", false) == "function");
  CHECK(eval("type(io.popen)", false) == "function");
  CHECK(eval("type(package.loadlib)", false) == "function");
  CHECK(eval("type(debug.sethook)", false) == "function");
}

namespace {

// check_workload (what `qpo validate` runs) on an inline script, and how long it took.
std::string validate_inline(const std::string& text, double* seconds) {
  qpo::lua::WorkloadSpec spec;
  spec.source = text;
  spec.script = "hostile.lua";
  spec.workers = {{"qa", "initiator", {"qa"}}};
  auto start = std::chrono::steady_clock::now();
  std::string error = qpo::lua::check_workload(spec);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return error;
}

}  // namespace

TEST_CASE("validate: a setup() that never returns fails after 2 s, naming the limit") {
  double s = 0;
  std::string e = validate_inline("function initiator(w) end\nfunction setup(a) while true do end end", &s);
  CHECK(e.find("setup() did not finish within 2 s") != std::string::npos);
  CHECK(s < 10);
}

TEST_CASE("validate: a loop that catches the deadline error with pcall still ends") {
  double s = 0;
  std::string e = validate_inline(
      "function initiator(w) end\nwhile true do pcall(function() while true do end end) end", &s);
  CHECK(e.find("the script's top level did not finish within 2 s") != std::string::npos);
  CHECK(s < 10);
}

TEST_CASE("validate: a setup() that allocates without bound fails at 64 MiB, naming the limit") {
  double s = 0;
  std::string e = validate_inline(
      "function initiator(w) end\n"
      // 1 MiB a step: the memory bound comes long before the 2 s one, also under ASan on a busy host.
      "function setup(a) local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1 << 20) .. i end end", &s);
  CHECK(e == "setup() used more than 64 MiB");
  CHECK(s < 10);
}

TEST_CASE("validate: a raising __index on _G fails the lookup of setup() as a script error, not an abort") {
  double s = 0;
  std::string e = validate_inline(
      "function initiator(w) end\nsetmetatable(_G, {__index = function(t, k) error('no ' .. k) end})", &s);
  CHECK(e.find("looking up setup(): ") != std::string::npos);
  CHECK(e.find("no setup") != std::string::npos);
}

TEST_CASE("validate: finalizers are refused, since Lua runs them where no time limit can stop them") {
  double s = 0;
  std::string e = validate_inline(
      "function initiator(w) end\nsetmetatable({}, {__gc = function() while true do end end})", &s);
  CHECK(e.find("setmetatable: finalizers (__gc) are not available to scripts") != std::string::npos);
}

TEST_CASE("validate: a setup() asleep in qpo.sleep is stopped from outside after the limit") {
  double s = 0;
  std::string e = validate_inline("function initiator(w) end\nfunction setup(a) qpo.sleep(1e9) end", &s);
  CHECK(e.find("the script's top level or setup() did not finish within 2 s (stopped from outside") == 0);
  CHECK(s < 60);
}

TEST_CASE("validate: a pattern match that backtracks for hours is stopped from outside after the limit") {
  double s = 0;
  std::string e = validate_inline(
      "function initiator(w) end\n"
      "function setup(a) string.find(string.rep('a', 40), string.rep('a*', 40) .. 'b') end", &s);
  CHECK(e.find("did not finish within 2 s (stopped from outside") != std::string::npos);
  CHECK(s < 60);
}

TEST_CASE("validate: a tail-called pcall that catches the limit's error still fails the check") {
  double s = 0;
  std::string e = validate_inline(
      "function initiator(w) end\nfunction setup(a) return pcall(function() while true do end end) end", &s);
  CHECK(e == "setup() did not finish within 2 s");
}

TEST_CASE("validate: the script's output goes to stderr, so a JSON document on stdout stays whole") {
  // The check runs in a child whose stdout is its stderr: capture this process's stdout.
  std::fflush(stdout);
  FILE* tmp = std::tmpfile();
  REQUIRE(tmp);
  int saved = dup(1);
  dup2(fileno(tmp), 1);
  double s = 0;
  std::string e = validate_inline(
      "function initiator(w) end\nio.write('{\"forged\": true}')\nfunction setup(a) print('hello') end", &s);
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::rewind(tmp);
  char buf[64] = {0};
  size_t n = std::fread(buf, 1, sizeof buf - 1, tmp);
  std::fclose(tmp);
  CHECK(e == "");
  CHECK(n == 0);
}

TEST_CASE("a script file whose name does not end in .lua is not read (a syntax error would quote it)") {
  qpo::lua::WorkloadSpec spec;
  spec.script = "/etc/passwd";
  spec.workers = {{"qa", "initiator", {"qa"}}};
  CHECK(qpo::lua::check_workload(spec) == "workload script '/etc/passwd': not a .lua file (a script file's name ends in .lua)");
}

TEST_CASE("run: a raising __index on _G fails the lookup of report(), after the workers' results") {
  FakeEndpoints f;
  auto r = run_inline(f, "function setup(a) return a end\nfunction initiator(w) return 7 end\nsetmetatable(_G, {__index = function(t, k) error('no ' .. k) end})");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("report(): looking up report(): ") == 0);
  CHECK(r.error.find("no report") != std::string::npos);
  REQUIRE(r.workers.size() == 1);
  CHECK(r.workers[0].ok);
  CHECK(r.workers[0].result.as_int() == 7);
}

TEST_CASE("run: setup() has validate's time limit") {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w) end\nfunction setup(a) while true do end end");
  CHECK_FALSE(r.ok);
  CHECK(r.error == "setup() did not finish within 2 s");
}

TEST_CASE("run: a result made of one table shared thirty levels deep is refused, not copied 2^30 times") {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w) local t = {} for i = 1, 30 do t = {t, t} end return t end");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("the value is too large to leave the Lua state (more than 4194304 values") != std::string::npos);
}

TEST_CASE("run: an error() message of 40 MiB is cut and counted") {
  FakeEndpoints f;
  auto r = run_inline(f, "function initiator(w) error(string.rep('x', 40 << 20)) end");
  CHECK_FALSE(r.ok);
  CHECK(r.error.size() < 8192);
  CHECK(r.error.find(" more bytes]") != std::string::npos);
}

namespace {

std::vector<std::string> output_of(const std::string& source) {
  FakeEndpoints f;
  std::vector<std::string> lines;
  qpo::lua::Callbacks cb;
  cb.log = [&](const std::string&, const std::string& line) { lines.push_back(line); };
  auto r = run_inline(f, source, 1, true, qpo::lua::Value::table(), cb);
  CHECK_MESSAGE(r.ok, r.error);
  return lines;
}

}  // namespace

TEST_CASE("io.write is script output like print: whole lines to the log, never stdout") {
  auto lines = output_of("function initiator(w) io.write('{\"forged\": ', 'true}\\nsecond') end");
  CHECK(lines == std::vector<std::string>{"{\"forged\": true}", "second"});
}

TEST_CASE("script output is printable: escape sequences cannot drive the terminal") {
  auto lines = output_of("function initiator(w) print('UD\\27]0;TITLE\\7\\27[2J') end");
  CHECK(lines == std::vector<std::string>{"UD\\x1B]0;TITLE\\x07\\x1B[2J"});
}

TEST_CASE("print in a loop shows 1 MiB, then counts the rest") {
  auto lines = output_of("function initiator(w) for i = 1, 100000 do print(string.rep('x', 99)) end end");
  REQUIRE(lines.size() > 2);
  CHECK(lines.size() < 11000);
  CHECK(lines[lines.size() - 2] == "(the script printed 1 MiB; the rest of its output is counted, not shown)");
  CHECK(lines.back().find("(script output not shown: ") == 0);
}
