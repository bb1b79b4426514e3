#include "cli/lab_hosts.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/lab.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {

// A fresh secret for this run's agent: 24 random bytes as hex ("" when there is no randomness).
std::string make_token() {
  unsigned char raw[24] = {};
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  ssize_t n = ::read(fd, raw, sizeof raw);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof raw)) return "";
  std::string hex;
  char b[3];
  for (unsigned char c : raw) {
    std::snprintf(b, sizeof b, "%02x", c);
    hex += b;
  }
  return hex;
}

}  // namespace

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string lab_hosts_problem(const std::vector<std::string>& hosts) {
  constexpr size_t guests = sizeof kLabGuests / sizeof kLabGuests[0];
  if (hosts.size() <= guests) return "";
  std::string names;
  for (const auto& h : hosts) names += (names.empty() ? "" : ", ") + h;
  return "the scenario has " + std::to_string(hosts.size()) + " hosts (" + names + "), the Soft-RoCE lab has " +
         std::to_string(guests) + " guests (lab.sh run2); run it with --local (every host on one device, in one "
         "guest) or on machines with RDMA devices";
}

std::vector<std::string> lab_cm_addresses(const scenario::Scenario& checked, const std::vector<std::string>& hosts) {
  std::vector<std::string> out;
  for (const auto& q : checked.qps) {
    if (!q.cm.given || !q.cm.active || q.cm.address_loc.given() || !q.cm.peer) continue;
    const auto* passive = checked.qp(q.cm.peer.name);
    if (!passive) continue;
    auto at = std::find(hosts.begin(), hosts.end(), checked.host_of_qp(*passive));
    size_t i = static_cast<size_t>(at - hosts.begin());
    if (at == hosts.end() || i >= sizeof kLabGuests / sizeof kLabGuests[0]) continue;
    bool ipv6 = q.cm.address.find(':') != std::string::npos;
    out.push_back("qps." + q.name + ".cm.address=\"" + (ipv6 ? kLabGuests[i].ip6 : kLabGuests[i].ip4) + "\"");
  }
  return out;
}

GuestCommands lab_guest_commands(const std::vector<std::string>& hosts, const std::string& self,
                                 const std::vector<std::string>& run_args, const std::string& token_file,
                                 const std::string& scenario_file, const std::vector<std::string>& cm_addresses) {
  GuestCommands g;
  // Host A is guest a's own (its agent is the controller's local child); every other host is
  // reached through the agent listening in its guest.
  std::string agent = std::string("tcp://[") + kLabGuests[1].ip6 + "]:" + std::to_string(kLabAgentPort);
  g.overrides.push_back("hosts." + hosts[0] + ".address=localhost");
  if (hosts.size() > 1) g.overrides.push_back("hosts." + hosts[1] + ".address=\"" + agent + "\"");
  g.overrides.insert(g.overrides.end(), cm_addresses.begin(), cm_addresses.end());
  std::vector<std::string> a{self, "run", "--no-lab", "--token-file", token_file};
  a.insert(a.end(), run_args.begin(), run_args.end());
  for (const auto& o : g.overrides) a.insert(a.end(), {"--set", o});
  a.push_back(scenario_file);
  g.a = "exec " + shell_words(a);
  g.b = "QPO_AGENT_ONCE=1 exec " +
        shell_words({self, "agent", "--listen", "[::]:" + std::to_string(kLabAgentPort), "--token-file", token_file});
  return g;
}

int run_hosts_in_lab(const std::vector<std::string>& hosts, const std::vector<std::string>& addresses,
                     const std::vector<std::string>& run_args, const std::string& scenario_file,
                     const std::vector<std::string>& lab_args, const std::vector<std::string>& cm_addresses) {
  if (auto why = lab_hosts_problem(hosts); !why.empty()) {
    std::cerr << "qpo: " << why << "\n";
    return 2;
  }
  std::string self = self_path();
  if (self.empty()) {
    std::cerr << "qpo: cannot find my own binary for the lab\n";
    return 2;
  }
  // The guests see this host's file system: the token goes into a private directory here.
  char dir_template[] = "/tmp/qpo-lab-hosts.XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) {
    std::cerr << "qpo: cannot create a temporary directory for the lab's agent token\n";
    return 2;
  }
  std::string token_file = std::string(dir) + "/token";
  int fd = ::open(token_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  std::string token = make_token();
  bool written = !token.empty() && fd >= 0;
  token += "\n";
  written = written && ::write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size());
  if (fd >= 0) ::close(fd);
  if (!written) {
    std::cerr << "qpo: cannot write the lab's agent token " << token_file << "\n";
    std::filesystem::remove_all(dir);
    return 2;
  }
  std::string file = scenario_file;
  if (!file.empty() && file[0] != '/' && file != "-") file = std::filesystem::absolute(file).string();
  auto cmds = lab_guest_commands(hosts, self, run_args, token_file, file, cm_addresses);
  std::string where, given;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const auto& g = kLabGuests[i];
    where += std::string(i ? ", " : "") + "host " + hosts[i] + " in guest " + g.name + " (" + g.ip4 + ", " + g.ip6 + ")";
    given += std::string(i ? ", " : "") + util::printable(hosts[i], 200) + ": " +
             util::printable(i < addresses.size() ? addresses[i] : "?", 200);
  }
  std::cerr << "qpo: " << hosts.size() << " hosts, one lab guest each, joined by the lab's link: " << where
            << "; guest a runs the controller, guest " << kLabGuests[1].name << " a `qpo agent --listen` on port "
            << kLabAgentPort << "; the scenario's addresses (" << given << ") are not used in the lab"
            << (cm_addresses.empty() ? "" : ", and an rdma_cm QP without address: connects to its passive host's guest")
            << "\n";
  std::vector<std::string> lab{"--plain-a"};
  lab.insert(lab.end(), lab_args.begin(), lab_args.end());
  int rc = run_in_lab2(cmds.a, cmds.b, lab);
  std::filesystem::remove_all(dir);
  return rc;
}

}  // namespace qpo::cli
