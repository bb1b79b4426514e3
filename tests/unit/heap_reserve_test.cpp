// util::reserve_heap_in_huge_pages: the heap grows once by about what was asked, and the kernel
// is told to back that range with huge pages (bench/results/2026-11-29-yaml-tree.md: 34,000
// page faults -> 2,000 for 10,000 hand-written QPs).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "util/heap_reserve.h"

#include "unit/sanitizer_build.h"

TEST_CASE("a small reservation is not worth huge pages: nothing is done") {
  CHECK(qpo::util::reserve_heap_in_huge_pages(1 << 20) == 0);
}

#ifndef QPO_TEST_ASAN  // ASan's allocator does not use the brk heap: there is nothing to reserve
// Run by the next case in a fresh process (a heap that earlier tests filled and freed has room
// already, and the function then does nothing): skipped in the suite itself.
TEST_CASE("heap reservation in a fresh process" * doctest::skip()) {
  auto before = reinterpret_cast<uintptr_t>(sbrk(0));
  size_t advised = qpo::util::reserve_heap_in_huge_pages(64u << 20);
  auto after = reinterpret_cast<uintptr_t>(sbrk(0));
  CHECK(after - before >= (64u << 20));
  CHECK(advised >= (60u << 20));  // the range, cut to whole 2 MiB pages
  // The kernel's view of the heap: its mapping carries the "hg" (MADV_HUGEPAGE) flag.
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_heap = false, advised_flag = false;
  while (std::getline(smaps, line)) {
    size_t dash = line.find('-'), space = line.find(' ');
    if (dash != std::string::npos && dash < space)  // a mapping's first line: "start-end perms ..."
      in_heap = line.find("[heap]") != std::string::npos;
    if (in_heap && line.rfind("VmFlags:", 0) == 0 && line.find(" hg") != std::string::npos) advised_flag = true;
  }
  CHECK(advised_flag);
}

TEST_CASE("64 MiB reserved in a fresh process: the break moves by that, advised for huge pages") {
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    execl("/proc/self/exe", "unit_tests", "--no-skip", "-tc=heap reservation in a fresh process", "-nv",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
#endif
