#include "cli/lab.h"

#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>

#include "verbs/device.h"

namespace qpo::cli {

namespace {

// Runs lab.sh with `args`; returns its exit code, or 2 when it cannot be started.
int run_lab_script(const std::vector<std::string>& args) {
  std::string script = lab_script();
  if (access(script.c_str(), X_OK) != 0) {
    std::cerr << "qpo: the lab's script (lab.sh) is not at";
    for (const auto& p : lab_script_places()) std::cerr << " " << p;
    std::cerr << " (install qpo, or set QPO_LAB_SCRIPT)\n";
    return 2;
  }
  std::vector<std::string> argv{script};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::cerr << "qpo: fork failed\n";
    return 2;
  }
  if (pid == 0) {
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 2;
}

}  // namespace

bool use_lab(bool lab, bool no_lab, const std::string& doing) {
  if (lab) return true;
  if (no_lab || !verbs::list_devices().empty()) return false;
  std::cerr << "qpo: no RDMA device on this host; " << doing << " in the Soft-RoCE lab (use --no-lab to refuse)\n";
  return true;
}

void say_if_no_device(const std::string& doing) {
  if (verbs::list_devices().empty())
    std::cerr << "qpo: --no-lab, and this host has no RDMA device: " << doing
              << " here fails at the first device it opens (without --no-lab it goes to the Soft-RoCE lab)\n";
}

std::vector<std::string> lab_script_places() {
  if (const char* env = std::getenv("QPO_LAB_SCRIPT")) return {env};
  std::vector<std::string> places;
  // Installed (cmake --install, the .deb): PREFIX/bin/qpo beside PREFIX/share/qpo/lab.
  std::string self = self_path();
  if (auto slash = self.rfind('/'); slash != std::string::npos)
    places.push_back(self.substr(0, slash) + "/../share/qpo/lab/lab.sh");
  places.push_back(std::string(QPO_SOURCE_DIR) + "/scripts/lab/lab.sh");  // the checkout it was built from
  return places;
}

std::string lab_script() {
  auto places = lab_script_places();
  for (const auto& p : places)
    if (access(p.c_str(), X_OK) == 0) return p;
  return places.front();
}

std::string self_path() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "";
  return std::string(self, static_cast<size_t>(n));
}

int run_in_lab(const std::vector<std::string>& qpo_args, const std::vector<std::string>& lab_args) {
  std::string self = self_path();
  if (self.empty()) {
    std::cerr << "qpo: cannot find my own binary for the lab\n";
    return 2;
  }
  std::vector<std::string> args{"run"};
  args.insert(args.end(), lab_args.begin(), lab_args.end());
  args.insert(args.end(), {"--", self});
  args.insert(args.end(), qpo_args.begin(), qpo_args.end());
  return run_lab_script(args);
}

int run_in_lab2(const std::string& cmd_a, const std::string& cmd_b, const std::vector<std::string>& lab_args) {
  std::vector<std::string> args{"run2"};
  args.insert(args.end(), lab_args.begin(), lab_args.end());
  args.insert(args.end(), {"--cmd-a", cmd_a, "--cmd-b", cmd_b});
  return run_lab_script(args);
}

}  // namespace qpo::cli
