#include "cli/run_pmix.h"

#include <iostream>

#include "cli/commands.h"
#include "cluster/codec.h"
#include "cluster/pmix_channel.h"
#include "report/run_report.h"
#include "util/json_writer.h"

namespace qpo::cli {

namespace {

std::string names(const std::vector<std::string>& hosts) {
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ", ") + h;
  return out;
}

}  // namespace

int run_under_pmix(const LoadedScenario& l, const plan::Plan& p, exec::RunOptions ro, const PmixRunOutput& out) {
  std::string why;
  auto client = cluster::PmixClient::connect(&why);
  if (!client) {
    std::cerr << "qpo: --pmix: " << why << "\n";
    return kSystemError;
  }
  const auto& s = *l.scenario();
  const auto& hosts = p.active_hosts;
  const uint32_t rank = client->rank();
  if (client->size() != hosts.size()) {
    // Every rank finds the same mismatch; one says it.
    if (rank == 0)
      std::cerr << "qpo: --pmix: the launcher started " << client->size() << " ranks, and scenario '" << s.name
                << "' has " << hosts.size() << " hosts (" << names(hosts)
                << "): start one rank per host (mpirun -np " << hosts.size() << "); rank r runs host r in this order\n";
    return kSystemError;
  }
  const std::string& host = hosts[rank];
  ro.all_hosts_local = true;  // the launcher put this rank on the machine of its host's devices
  cluster::PmixChannel channel(*client, hosts, out.meeting_timeout_s);
  report::RunReport mine = exec::HostSession(p, host, ro).run(channel);

  std::vector<std::string> texts;
  std::vector<report::RunReport> parts;
  bool gathered = channel.gather_reports("{\"type\":\"report\",\"report\":" + cluster::report_json(mine) + "}", &texts);
  if (rank != 0) {  // rank 0 speaks for the job
    channel.last_meeting();
    return report::exit_code(mine);
  }
  // As an agent sends its report to a controller: a "report" message (cluster/codec.h).
  if (gathered) {
    for (size_t r = 0; r < texts.size(); ++r) {
      std::string error;
      auto n = cluster::parse_message(texts[r], &error);
      try {
        if (!n) throw std::runtime_error(error);
        parts.push_back(cluster::read_report(cluster::member(*n, "report")));
      } catch (const std::exception& e) {
        report::RunReport broken;
        broken.verdict = report::Verdict::Error;
        broken.reason = "host " + hosts[r] + ": its report is not readable: " + e.what();
        parts.push_back(broken);
      }
    }
  } else {
    // Without the others' reports, this rank's own says what it knows.
    parts.assign(hosts.size(), report::RunReport{});
    for (size_t r = 0; r < hosts.size(); ++r) {
      parts[r].verdict = report::Verdict::Error;
      parts[r].reason = "host " + hosts[r] + ": no report: " + channel.failure();
    }
    parts[rank] = mine;
  }
  auto merged = exec::merge_reports(p.scenario, p.file, parts, hosts);
  if (out.format == "json") {
    util::JsonWriter w;
    report::render_json(w, merged);
    std::cout << w.str() << "\n";
  } else {
    std::cout << report::render_text(merged, out.verbose);
  }
  std::cout << std::flush;
  channel.last_meeting();
  return report::exit_code(merged);
}

}  // namespace qpo::cli
