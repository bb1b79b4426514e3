// qpo test decides per suite whether it needs two lab guests: it counts the hosts of each
// scenario that own a device, as `qpo run` does (exec::active_hosts), not the `hosts:` map.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "suite/suite.h"

namespace fs = std::filesystem;

namespace {

size_t hosts_of(const std::string& yaml) {
  fs::path dir = fs::temp_directory_path() / ("qpo-collect-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "s.yaml") << yaml;
  qpo::suite::Options o;
  o.paths = {(dir / "s.yaml").string()};
  std::vector<std::string> problems;
  auto cases = qpo::suite::collect(o, &problems);
  fs::remove_all(dir);
  REQUIRE(cases.size() == 1);
  return cases[0].hosts;
}

}  // namespace

TEST_CASE("a declared host that owns no device does not make a scenario multi-host") {
  CHECK(hosts_of("version: 1\nhosts: { a: {}, b: {} }\ndevices: { d: { host: a, name: auto } }\n") == 1);
}

TEST_CASE("two hosts that own devices make a scenario multi-host") {
  CHECK(hosts_of("version: 1\nhosts: { a: {}, b: {} }\n"
                 "devices: { da: { host: a, name: auto }, db: { host: b, name: auto }, dc: { host: b } }\n") == 2);
}

TEST_CASE("devices without host: are one host") {
  CHECK(hosts_of("version: 1\ndevices: { d: { name: auto } }\n") == 1);
}

TEST_CASE("a scenario with an external peer is collected with its name: qpo test skips it, saying why") {
  fs::path dir = fs::temp_directory_path() / ("qpo-collect-ext-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "s.yaml") << "version: 1\nexternals: { tool: { exchange: ibv_pingpong, listen: true } }\n";
  std::ofstream(dir / "t.yaml") << "version: 1\ndevices: { d: { name: auto } }\n";
  qpo::suite::Options o;
  o.paths = {dir.string()};
  std::vector<std::string> problems;
  auto cases = qpo::suite::collect(o, &problems);
  fs::remove_all(dir);
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].external == "tool");
  CHECK(cases[1].external == "");
}
