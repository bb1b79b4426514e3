#pragma once
// QPO_TEST_ASAN is defined in an AddressSanitizer build (gcc or clang): tests that bound memory
// with RLIMIT_AS, or read the brk heap, leave themselves out there, since ASan reserves
// terabytes of address space up front and has its own allocator.
#if defined(__SANITIZE_ADDRESS__)
#define QPO_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QPO_TEST_ASAN 1
#endif
#endif
