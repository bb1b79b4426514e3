// A run says when its figures are not to be trusted: the host's CPU contention while the
// workloads ran and the spread of their samples (src/report/measurement_quality.h,
// src/exec/host_load.h).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "exec/host_load.h"
#include "report/measurement_quality.h"

using namespace qpo;

namespace {

std::optional<report::Scalar> field(const report::Fields& f, const std::string& key) {
  for (const auto& [k, v] : f)
    if (k == key) return v;
  return std::nullopt;
}

// A fake /proc with the three files qpo reads.
std::string write_proc(const std::string& dir, uint64_t some_us, uint64_t steal, uint64_t idle, double load) {
  std::filesystem::create_directories(dir + "/pressure");
  std::ofstream(dir + "/pressure/cpu") << "some avg10=0.00 avg60=0.00 avg300=0.00 total=" << some_us
                                       << "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
  std::ofstream(dir + "/stat") << "cpu  100 0 100 " << idle << " 0 0 0 " << steal << " 0 0\n"
                               << "cpu0 50 0 50 0 0 0 0 0 0 0\ncpu1 50 0 50 0 0 0 0 0 0 0\nintr 1\n";
  std::ofstream(dir + "/loadavg") << load << " 1.00 1.00 3/100 1234\n";
  return dir;
}

}  // namespace

TEST_CASE("a quiet host and tight samples: the figures are trusted") {
  report::HostLoad load{"host", 2.0, 0.02, 0.0, 0.8, 2};
  report::Fields summary{{"t_typical", 40.0}, {"far_from_median", 0.01}, {"bimodal_share", 0.0}};
  auto q = report::judge_quality(load, summary);
  CHECK(q.trusted());
  CHECK(std::get<bool>(*field(q.fields, "trusted")));
  CHECK(std::get<double>(*field(q.fields, "cpu_wait")) == doctest::Approx(0.02));
}

TEST_CASE("a contended host is named with its load") {
  report::HostLoad load{"lab host", 2.0, 0.47, std::nullopt, 4.2, 2};
  auto q = report::judge_quality(load, {});
  REQUIRE(q.reasons.size() == 1);
  CHECK(report::quality_warning(q) ==
        "measurement quality: on the lab host a task waited for a CPU 47% of the time (load 4.2 on 2 CPUs): "
        "the figures may not reflect the device");
  CHECK_FALSE(std::get<bool>(*field(q.fields, "trusted")));
  CHECK_FALSE(field(q.fields, "steal"));  // not measured: absent, not 0
}

TEST_CASE("steal time past 5% is a reason") {
  report::HostLoad load{"host", 1.0, std::nullopt, 0.08, std::nullopt, 4};
  auto q = report::judge_quality(load, {});
  REQUIRE(q.reasons.size() == 1);
  CHECK(q.reasons[0] == "the hypervisor stole 8% of the host's CPU time");
}

TEST_CASE("spread: iterations far from the median and two clusters are reasons") {
  report::Fields summary{{"far_from_median", 0.2}, {"bimodal_share", 0.2}};
  auto q = report::judge_quality(report::HostLoad{"host", 1.0}, summary);
  REQUIRE(q.reasons.size() == 2);
  CHECK(q.reasons[0] == "20% of the iterations took more than twice the median");
  CHECK(q.reasons[1] == "the latencies form two clusters (20% of them at 4x or more the rest)");
}

TEST_CASE("host load between two samples of a /proc") {
  std::string dir = (std::filesystem::temp_directory_path() / ("qpo-proc-" + std::to_string(::getpid()))).string();
  auto a = exec::sample_host_load(write_proc(dir, 1'000'000, 10, 1000, 0.5), "lab host");
  CHECK(a.cpus == 2);
  REQUIRE(a.cpu_some_us);
  CHECK(*a.cpu_some_us == 1'000'000);
  auto b = exec::sample_host_load(write_proc(dir, 1'500'000, 30, 1180, 3.5), "lab host");
  b.at = a.at + std::chrono::seconds(2);  // 0.5 s of waiting over 2 s
  auto load = exec::host_load_between(a, b);
  CHECK(load.source == "lab host");
  CHECK(*load.cpu_wait == doctest::Approx(0.25));
  CHECK(*load.steal == doctest::Approx(0.1));  // 20 of 200 jiffies
  CHECK(*load.load1 == doctest::Approx(3.5));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a /proc without pressure files leaves cpu_wait empty, not zero") {
  std::string dir = (std::filesystem::temp_directory_path() / ("qpo-noproc-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  auto a = exec::sample_host_load(dir, "host");
  auto load = exec::host_load_between(a, a);
  CHECK_FALSE(load.cpu_wait);
  CHECK_FALSE(load.steal);
  std::filesystem::remove_all(dir);
}
