#pragma once
// Names of verbs enums as the verbs headers spell them (IBV_WC_REM_ACCESS_ERR), from one
// table per enum, so reports, expectations in scenarios and Lua all agree.
#include <optional>
#include <string_view>

namespace qpo::dataplane {

// "IBV_WC_REM_ACCESS_ERR"; "IBV_WC_(unknown N)" is never returned: unknown -> "IBV_WC_UNKNOWN".
const char* wc_status_name(int status);
// Accepts "IBV_WC_REM_ACCESS_ERR" or "REM_ACCESS_ERR" (any case).
std::optional<int> parse_wc_status(std::string_view name);
// "IBV_WC_RDMA_WRITE", "IBV_WC_RECV", ...
const char* wc_opcode_name(int opcode);

}  // namespace qpo::dataplane
