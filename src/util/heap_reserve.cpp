#include "util/heap_reserve.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace qpo::util {

namespace {
constexpr uintptr_t kHugePage = 2u << 20;
constexpr int kDefaultTopPad = 128 * 1024;  // glibc's M_TOP_PAD default (DEFAULT_TOP_PAD)
constexpr size_t kLargestHeapRequest = 32u << 20;  // the largest M_MMAP_THRESHOLD glibc takes
}  // namespace

size_t reserve_heap_in_huge_pages(size_t bytes) {
  if (bytes < 4 * kHugePage) return 0;
  // Requests stay on the brk heap (not separate mmaps), and what is freed stays in it.
  mallopt(M_MMAP_THRESHOLD, kLargestHeapRequest);
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes < (1u << 30) ? bytes * 2 : (2u << 30) - 1));
  // One allocation larger than all the heap's free memory makes malloc extend the break by it
  // plus the pad: the pad is the reservation. A heap that already holds more free memory than
  // a heap allocation may take (32 MiB) has room enough: nothing to do.
  size_t probe_size = mallinfo2().fordblks + 64 * 1024;
  if (probe_size >= kLargestHeapRequest) return 0;
  mallopt(M_TOP_PAD, static_cast<int>(bytes < (1u << 30) ? bytes : (1u << 30)));
  void* start = sbrk(0);
  // volatile: a malloc whose result is only freed may be removed by the compiler.
  void* volatile probe = std::malloc(probe_size);
  std::free(probe);
  mallopt(M_TOP_PAD, kDefaultTopPad);  // later growth goes back to small steps
  void* end = sbrk(0);
  auto from = (reinterpret_cast<uintptr_t>(start) + kHugePage - 1) & ~(kHugePage - 1);
  auto to = reinterpret_cast<uintptr_t>(end) & ~(kHugePage - 1);
  if (start == reinterpret_cast<void*>(-1) || to <= from) return 0;
  if (madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) != 0) return 0;
  return to - from;
}

}  // namespace qpo::util
