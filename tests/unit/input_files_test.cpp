// Issue 30 items 5, 8, 11, 12: every file qpo reads is a regular file within a cap of its
// kind (util/input_file.h), and every file it writes is replaced without following a planted
// name, or written through when it is a device or FIFO (util/output_file.h).
//
// The binary runs under `timeout` (a hang bound, not a timing assertion: a FIFO read without
// the fix never returns) and, without AddressSanitizer, under a 2 GiB address-space limit (so
// /dev/zero or a sparse 10 GiB file read without the fix ends in bad_alloc, not in the
// machine's memory).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "shell_command.h"
#include "scenario_fixture.h"
#include "util/input_file.h"
#include "util/output_file.h"
#include "test_threads.h"

namespace fs = std::filesystem;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

using Outcome = qpo::test::CommandOutcome;

// `args` is shell text (paths here are made by the test: no quoting needed).
Outcome run_qpo(const std::string& args, const std::string& env = "") {
  std::string cmd = std::string(kAsan ? "" : "ulimit -v 2097152; ") + env + " timeout -s KILL 60 " + QPO_BINARY + " " +
                    args + " </dev/null 2>&1";
  return qpo::test::run_command(cmd);
}

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/qpo-files-XXXXXX";
    REQUIRE(mkdtemp(name));
    path = name;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name, const std::string& text) const {
    std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string fifo(const std::string& name) const {
    std::string p = path + "/" + name;
    REQUIRE(mkfifo(p.c_str(), 0600) == 0);
    return p;
  }
  // 10 GiB that take no space: the size alone must refuse it.
  std::string sparse(const std::string& name) const {
    std::string p = file(name, "");
    fs::resize_file(p, 10ull << 30);
    return p;
  }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A run result qpo report takes, naming `scenario_file` as the file it ran.
std::string results(const std::string& scenario_file) {
  return "{\"scenario\": \"s\", \"file\": \"" + scenario_file + "\", \"verdict\": \"PASS\", \"steps\": []}\n";
}

const std::string kScenario = std::string(QPO_SOURCE_DIR) + "/scenarios/rc-send-recv.yaml";
const std::string kTenGiB = "is 10737418240 bytes";

}  // namespace

// --- item 5: FIFOs (opened without a writer: without the fix the open blocks for ever) ---

TEST_CASE("qpo report: a FIFO as the results file is refused at once, naming what it is") {
  TempDir t;
  auto fifo = t.fifo("r.json");
  auto o = run_qpo("report " + fifo + " -o " + t.path + "/r.html");
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo report: cannot read " + fifo + ": it is a FIFO (named pipe); a run result must be a regular file\n");
}

TEST_CASE("qpo report: a FIFO a results file names as its scenario is not opened; the page is written without it") {
  TempDir t;
  auto fifo = t.fifo("s.yaml");
  auto o = run_qpo("report " + t.file("r.json", results(fifo)) + " -o " + t.path + "/r.html");
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(o.output.find("no scenario text on the page: cannot read " + fifo + ": it is a FIFO (named pipe)") != std::string::npos);
  CHECK(fs::is_regular_file(t.path + "/r.html"));
}

TEST_CASE("qpo validate --provider FIFO is refused at once") {
  TempDir t;
  auto fifo = t.fifo("p.yaml");
  auto o = run_qpo("validate --provider " + fifo + " " + kScenario);
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo: --provider: cannot read " + fifo + ": it is a FIFO (named pipe); a provider file must be a regular file\n");
}

TEST_CASE("qpo test --matrix FIFO is refused at once") {
  TempDir t;
  auto fifo = t.fifo("m.yaml");
  auto o = run_qpo("test --no-lab --matrix " + fifo + " " + kScenario);
  CHECK_MESSAGE(o.exit_code == 1, o.output);
  CHECK(o.output.find("cannot read " + fifo + ": it is a FIFO (named pipe); a matrix file must be a regular file") != std::string::npos);
}

TEST_CASE("qpo agent --listen --token-file FIFO is refused at once") {
  TempDir t;
  auto fifo = t.fifo("token");
  auto o = run_qpo("agent --listen 127.0.0.1:0 --token-file " + fifo);
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo agent: --listen needs --token-file: cannot read " + fifo +
                        ": it is a FIFO (named pipe); a token file must be a regular file\n");
}

// --- item 8: devices and giant files are refused before they are read ---

TEST_CASE("qpo report: /dev/zero as the results file is refused, not read until memory runs out") {
  TempDir t;
  auto o = run_qpo("report /dev/zero -o " + t.path + "/r.html");
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo report: cannot read /dev/zero: it is a character device; a run result must be a regular file\n");
}

TEST_CASE("qpo agent --listen: /dev/zero as the token file is refused") {
  auto o = run_qpo("agent --listen 127.0.0.1:0 --token-file /dev/zero");
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output.find("cannot read /dev/zero: it is a character device; a token file must be a regular file") != std::string::npos);
}

TEST_CASE("qpo validate --provider /dev/zero is refused") {
  auto o = run_qpo("validate --provider /dev/zero " + kScenario);
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output.find("cannot read /dev/zero: it is a character device; a provider file must be a regular file") != std::string::npos);
}

TEST_CASE("qpo report: a sparse 10 GiB results file is refused by its size") {
  TempDir t;
  auto big = t.sparse("r.json");
  auto o = run_qpo("report " + big + " -o " + t.path + "/r.html");
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo report: " + big + " " + kTenGiB + "; a run result is limited to 64 MiB\n");
}

TEST_CASE("qpo compare: a sparse 10 GiB results file is refused by its size before it is read") {
  TempDir t;
  auto big = t.sparse("r.json");
  auto o = run_qpo("compare " + big + " " + std::string(QPO_SOURCE_DIR) + "/tests/compare/baseline.json");
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output.find(big + " " + kTenGiB + "; a run result is limited to 64 MiB") != std::string::npos);
}

TEST_CASE("qpo validate --provider: a sparse 10 GiB provider file is refused by its size") {
  TempDir t;
  auto big = t.sparse("p.yaml");
  auto o = run_qpo("validate --provider " + big + " " + kScenario);
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo: --provider: " + big + " " + kTenGiB + "; a provider file is limited to 4 MiB\n");
}

TEST_CASE("qpo test --matrix: a sparse 10 GiB matrix file is refused by its size") {
  TempDir t;
  auto big = t.sparse("m.yaml");
  auto o = run_qpo("test --no-lab --matrix " + big + " " + kScenario);
  CHECK_MESSAGE(o.exit_code == 1, o.output);
  CHECK(o.output.find(big + " " + kTenGiB + "; a matrix file is limited to 16 MiB") != std::string::npos);
}

TEST_CASE("qpo agent --listen: a sparse 10 GiB token file is refused by its size") {
  TempDir t;
  auto big = t.sparse("token");
  auto o = run_qpo("agent --listen 127.0.0.1:0 --token-file " + big);
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo agent: --listen needs --token-file: " + big + " " + kTenGiB + "; a token file is limited to 4096 bytes\n");
}

TEST_CASE("qpo report: a sparse 10 GiB scenario named by the results is not read; the page is written") {
  TempDir t;
  auto big = t.sparse("s.yaml");
  auto o = run_qpo("report " + t.file("r.json", results(big)) + " -o " + t.path + "/r.html");
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(o.output == "qpo report: no scenario text on the page: " + big + " " + kTenGiB + "; a scenario is limited to 16 MiB\n");
}

TEST_CASE("qpo report: results nested 100,000 levels deep are refused at the 65th level") {
  TempDir t;
  auto bomb = t.file("r.json", std::string(100000, '['));
  auto o = run_qpo("report " + bomb + " -o " + t.path + "/r.html");
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo report: " + bomb + ": not JSON: line 1, column 65: nests deeper than 64 levels\n");
}

TEST_CASE("qpo validate --provider: a provider file nested 100,000 levels deep is refused before parsing") {
  TempDir t;
  auto bomb = t.file("p.yaml", std::string(100000, '['));
  auto o = run_qpo("validate --provider " + bomb + " " + kScenario);
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo: --provider: " + bomb + ":1: [ ] and { } nest deeper than 64 levels; not a provider file\n");
}

TEST_CASE("a file that reports size 0 (/proc) is still read no further than the cap") {
  auto f = qpo::util::read_input_file("/proc/self/status", {"status file", 16});
  CHECK(f.problem == qpo::util::InputFile::Problem::TooLarge);
  CHECK(f.error == "/proc/self/status is more than 16 bytes; a status file is limited to 16 bytes");
  CHECK(f.text.empty());
}

// --- item 11: the page shows only a scenario ---

TEST_CASE("qpo report: a results file naming /proc/self/environ does not copy the environment into the page") {
  TempDir t;
  auto o = run_qpo("report " + t.file("r.json", results("/proc/self/environ")) + " -o " + t.path + "/r.html",
               "QPO_FILES_SECRET=hunter2-in-the-environment");
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(o.output == "qpo report: no scenario text on the page: /proc/self/environ does not load as a scenario; the page shows no scenario text\n");
  CHECK(read_all(t.path + "/r.html").find("hunter2-in-the-environment") == std::string::npos);
}

TEST_CASE("qpo report: the scenario file a results file names is shown when it loads as a scenario") {
  TempDir t;
  auto scenario = t.file("s.yaml", "# marker-of-the-scenario-text\n" + qpo::test::rc_pair());
  auto o = run_qpo("report " + t.file("r.json", results(scenario)) + " -o " + t.path + "/r.html");
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(o.output.empty());
  CHECK(read_all(t.path + "/r.html").find("marker-of-the-scenario-text") != std::string::npos);
}

// --- item 12: writes ---

TEST_CASE("qpo report -o FILE: a planted FILE.tmp symlink is not followed; its target is untouched") {
  TempDir t;
  auto victim = t.file("victim", "untouched\n");
  fs::create_symlink(victim, t.path + "/r.html.tmp");
  auto o = run_qpo("report " + t.file("r.json", results("")) + " -o " + t.path + "/r.html");
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(read_all(victim) == "untouched\n");
  CHECK(fs::is_symlink(t.path + "/r.html.tmp"));
  CHECK(fs::is_regular_file(fs::symlink_status(t.path + "/r.html")));
  CHECK(read_all(t.path + "/r.html").find("<html") != std::string::npos);
}

TEST_CASE("qpo report -o /dev/null writes through: /dev/null stays a character device") {
  TempDir t;
  auto o = run_qpo("report " + t.file("r.json", results("")) + " -o /dev/null");
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("qpo report -o FIFO writes through to its reader: the FIFO stays a FIFO") {
  TempDir t;
  auto fifo = t.fifo("out");
  // A reader, and a writer of the test's own so the reader sees no end of file before qpo
  // writes; once qpo has exited, closing it ends the reader (also when qpo wrote nothing).
  int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(fd >= 0);
  int own_writer = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(own_writer >= 0);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string got;
  qpo::testing::WorkerThread reader([&] {
    char buf[65536];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  });
  auto o = run_qpo("report " + t.file("r.json", results("")) + " -o " + fifo);
  close(own_writer);
  CHECK(reader.join() == "");
  close(fd);
  CHECK_MESSAGE(o.exit_code == 0, o.output);
  CHECK(fs::is_fifo(fifo));
  CHECK(got.find("<html") != std::string::npos);
}

TEST_CASE("qpo report -o DIRECTORY is refused, naming what it is") {
  TempDir t;
  auto o = run_qpo("report " + t.file("r.json", results("")) + " -o " + t.path);
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output == "qpo: --report " + t.path + ": it is a directory; give a regular file, a character device or a FIFO\n");
}

TEST_CASE("an output named /dev/fd/N is written to that descriptor, where the caller put it") {
  int p[2];
  REQUIRE(pipe(p) == 0);
  std::string error;
  CHECK(qpo::util::write_output_file("/dev/fd/" + std::to_string(p[1]), "results\n", &error));
  close(p[1]);
  char buf[64];
  ssize_t n = read(p[0], buf, sizeof buf);
  close(p[0]);
  CHECK(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0) == "results\n");
}

TEST_CASE("a regular file that an output replaces keeps its permissions") {
  TempDir t;
  auto path = t.file("results.json", "old\n");
  REQUIRE(chmod(path.c_str(), 0640) == 0);
  std::string error;
  REQUIRE_MESSAGE(qpo::util::write_output_file(path, "new\n", &error), error);
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "new\n");
}

TEST_CASE("qpo test --results naming a baseline folder (spelled otherwise) is refused before any case runs") {
  TempDir t;
  fs::create_directories(t.path + "/base");
  auto o = run_qpo("test --no-lab --results " + t.path + "/base/ --save-baseline " + t.path + "/x/../base " + kScenario);
  CHECK_MESSAGE(o.exit_code == 2, o.output);
  CHECK(o.output.find("qpo test: --results " + t.path + "/base/ is the baselines' folder too: name a folder of its own") !=
        std::string::npos);
  CHECK(o.output.find("passed,") == std::string::npos);  // no case ran
}
