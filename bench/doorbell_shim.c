// LD_PRELOAD shim for profiling a data path on rxe: per thread, it times every write() to a
// uverbs device fd and the user time between two of them, and prints both at exit.
//
// Why write(): rxe's provider rings its doorbell with a write() of an empty POST_SEND command
// on the device fd, and the kernel runs the requester (and, on loopback, the responder and the
// completer) inside that syscall. So "in write()" is the device's time for a WR and the gap
// between two writes is the tool's own time per WR. Nothing else is intercepted; other fds go
// straight to libc.
//   LD_PRELOAD=build/bench/libqpo_doorbell_shim.so ib_send_bw ...
//   -> "doorbell: pid 173 tid 173 writes 2000 in_write_us 998.034 between_us 3.758" on stderr
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

typedef ssize_t (*write_fn)(int, const void*, size_t);

enum { kMaxFd = 4096, kMaxThreads = 16, kMinWrites = 100 };
enum { kUnknown = 0, kUverbs = 1, kOther = 2 };

struct thread_stats {
  long tid;
  uint64_t writes, ticks_in_write, ticks_between, last_end;
};

static write_fn real_write;
static unsigned char fd_kind[kMaxFd];
static struct thread_stats stats[kMaxThreads];
static int thread_count;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct thread_stats* mine;
static uint64_t start_ticks;
static struct timespec start_time;

__attribute__((constructor)) static void shim_init(void) {
  real_write = (write_fn)dlsym(RTLD_NEXT, "write");
  start_ticks = __rdtsc();
  clock_gettime(CLOCK_MONOTONIC, &start_time);
}

static int is_uverbs(int fd) {
  if (fd < 0 || fd >= kMaxFd) return 0;
  if (fd_kind[fd] == kUnknown) {
    char path[64], target[256];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0) return 0;
    target[n] = 0;
    fd_kind[fd] = strstr(target, "uverbs") ? kUverbs : kOther;
  }
  return fd_kind[fd] == kUverbs;
}

ssize_t write(int fd, const void* buf, size_t len) {
  if (!is_uverbs(fd)) return real_write(fd, buf, len);
  uint64_t before = __rdtsc();
  ssize_t r = real_write(fd, buf, len);
  uint64_t after = __rdtsc();
  if (!mine) {
    pthread_mutex_lock(&stats_lock);
    if (thread_count < kMaxThreads) {
      mine = &stats[thread_count++];
      mine->tid = (long)syscall(SYS_gettid);
    }
    pthread_mutex_unlock(&stats_lock);
    if (!mine) return r;
  }
  if (mine->last_end) mine->ticks_between += before - mine->last_end;
  mine->writes++;
  mine->ticks_in_write += after - before;
  mine->last_end = after;
  return r;
}

// Threads with fewer than kMinWrites writes did set-up only (create_qp, modify_qp, ...).
__attribute__((destructor)) static void shim_report(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double seconds = (double)(now.tv_sec - start_time.tv_sec) + (double)(now.tv_nsec - start_time.tv_nsec) / 1e9;
  double ticks_per_us = (double)(__rdtsc() - start_ticks) / seconds / 1e6;
  for (int i = 0; i < thread_count; ++i) {
    const struct thread_stats* s = &stats[i];
    if (s->writes < kMinWrites) continue;
    fprintf(stderr, "doorbell: pid %d tid %ld writes %llu in_write_us %.3f between_us %.3f\n", getpid(), s->tid,
            (unsigned long long)s->writes, (double)s->ticks_in_write / ticks_per_us / (double)s->writes,
            (double)s->ticks_between / ticks_per_us / (double)(s->writes - 1));
  }
}
