#pragma once
// Posting the reduced share of SRQ receives that scenario/script_qps.h decides for SRQs
// whose QPs only scripts use.
#include <cstdint>
#include <string>

#include "exec/run_state.h"
#include "scenario/script_qps.h"

namespace qpo::exec {

// Posts `count` receives from the SRQ's slots (slot 0 up).
void post_srq_receives(RunState& st, const std::string& srq, uint32_t count);

}  // namespace qpo::exec
