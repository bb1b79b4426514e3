#pragma once
// Names of verbs enums as the verbs headers spell them, from one table per enum, so reports,
// expectations in scenarios and Lua all agree. Completion statuses (IBV_WC_REM_ACCESS_ERR)
// are util/wc_status_names.h, the lowest layer that needs them (the validator does too).
#include "util/wc_status_names.h"

namespace qpo::dataplane {

using util::parse_wc_status;
using util::wc_status_name;

// "IBV_WC_RDMA_WRITE", "IBV_WC_RECV", ...
const char* wc_opcode_name(int opcode);

}  // namespace qpo::dataplane
