#pragma once
// Work completion statuses by the names the verbs header gives them (IBV_WC_REM_ACCESS_ERR):
// the one table for reports, the scenario's `expect: {status: ...}`, the data path and Lua.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::util {

// "IBV_WC_REM_ACCESS_ERR"; an unknown status -> "IBV_WC_UNKNOWN".
const char* wc_status_name(int status);
// Accepts "IBV_WC_REM_ACCESS_ERR" or "REM_ACCESS_ERR" (any case).
std::optional<int> parse_wc_status(std::string_view name);
// Every name in the table ("IBV_WC_SUCCESS", ...), in table order (did-you-mean, help texts).
std::vector<std::string> wc_status_names();

}  // namespace qpo::util
