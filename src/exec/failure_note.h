#pragma once
// What a failing host tells the others (through the run's Channel) so they stop at once
// instead of waiting for it: "host b failed at step 14 (ibv_modify_qp, qb): <its error>".
// The others then report "aborted: <that>" and tear down (README, "Across hosts").
#include <string>

#include "report/run_report.h"

namespace qpo::exec {

// This host's first failed line as a note for the other hosts ("host b stopped: unsupported
// by device ..." when it could not run the scenario); "" when the run has not
// failed here, or when its failure is itself an echo of another host's (aborted, another
// host failed, stopped by the channel): only a cause is worth telling.
std::string failure_note(const report::RunReport& r, const std::string& host);

// Whether a host's verdict reason only echoes another host's failure.
bool is_echo(const std::string& reason);

// What a wait that a stop cut short says ("stopped while waiting for RDMA_CM_EVENT_CONNECT_REQUEST"):
// every such wait words it here, so cut_short_by_stop recognises it.
std::string stopped_while_waiting(const std::string& what);
// Whether a failure is what a stop did to a wait in progress ("rdma_get_cm_event(qb): stopped
// while waiting for RDMA_CM_EVENT_CONNECT_REQUEST"): a symptom of the stop, not a cause.
bool cut_short_by_stop(const std::string& reason);

// Host `host` was told to stop because another host failed (`why`: "aborted: host a failed at
// step 17 (rdma_connect, qa): ..."): its report gets one abort line. Its reason becomes the
// abort when it had not failed, or failed only because the stop cut a wait short; a failure
// of its own (a verb's error) stays its reason, with the abort as the line after it. The abort
// reports on the latest plan step run: the report's, or `latest` (steps whose lines the
// bring-up window names later), so it sits after them and the walked steps never go back.
void take_abort(report::RunReport& r, const std::string& host, const std::string& why, int latest = 0);

}  // namespace qpo::exec
