#pragma once
// Before loading a large scenario: grow the heap once, by about what the load will use, and ask
// the kernel for transparent huge pages there (madvise MADV_HUGEPAGE).
//
// Why: loading, validating and planning 10,000 hand-written QPs touches ~140 MB of heap for the
// first time. In 4 KiB pages that is ~34,000 page faults, and on the VMs qpo is measured on a
// fault is expensive: they were half of `qpo plan`'s CPU time (1.0 s; 0.5 s in huge pages,
// bench/results/2026-11-29-yaml-tree.md). glibc does the same with the tunable
// glibc.malloc.hugetlb=1; this asks for it only when the input is large, without an
// environment variable. Where THP is off or unsupported the madvise fails and nothing changes.
#include <cstddef>

namespace qpo::util {

// Grows the heap by about `bytes` (kept for the process: frees do not shrink it back) and
// advises huge pages for that range. Returns the bytes advised (0: nothing done).
size_t reserve_heap_in_huge_pages(size_t bytes);

}  // namespace qpo::util
