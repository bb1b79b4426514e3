#include "exec/run_tool.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace qpo::exec {

int run_tool(const char* program, const std::vector<std::string>& args, std::string* output) {
  int fds[2];
  // Close-on-exec: another thread's child (hosts run as threads with --local) must not
  // inherit this pipe's write end and hold our EOF back.
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  // argv is built before the fork: the child only execs (it may be a multi-threaded parent's).
  std::vector<std::string> all{program};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], 1);  // dup2 clears close-on-exec on the copies
    dup2(fds[1], 2);
    execvp(program, argv.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[512];
  ssize_t n;
  // SIGINT/SIGTERM handlers are installed without SA_RESTART: retry what they interrupt.
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) output->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  pid_t got;
  while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (got != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace qpo::exec
