#pragma once
// What a failing host tells the others (through the run's Channel) so they stop at once
// instead of waiting for it: "host b failed at step 14 (ibv_modify_qp, qb): <its error>".
// The others then report "aborted: <that>" and tear down (README, "Across hosts").
#include <string>

#include "report/run_report.h"

namespace qpo::exec {

// This host's first failed line as a note for the other hosts; "" when the run has not
// failed here, or when its failure is itself an echo of another host's (aborted, another
// host failed, stopped by the channel): only a cause is worth telling.
std::string failure_note(const report::RunReport& r, const std::string& host);

// Whether a host's verdict reason only echoes another host's failure.
bool is_echo(const std::string& reason);

}  // namespace qpo::exec
