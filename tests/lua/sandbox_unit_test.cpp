// The sandbox: what a workload script cannot do unless the user opts in.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

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
  qpo::lua::WorkloadSpec spec;
  spec.script = "/dev/zero";
  spec.workers = {{"qa", "initiator", {"qa"}}};
  CHECK(qpo::lua::check_workload(spec).find("workload script '/dev/zero' is not a regular file") != std::string::npos);
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
