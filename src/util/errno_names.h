#pragma once
// The errno values verbs return and scenarios may expect, by the names <errno.h> gives them:
// one table for the report's "EINVAL" and the scenario's `expect: EINVAL`.
#include <string>
#include <string_view>
#include <vector>

namespace qpo::util {

// "EINVAL"; nullptr for an errno outside the table.
const char* errno_symbol(int err);
// "EINVAL", or "errno 123" outside the table: for messages.
std::string errno_name(int err);
// EINVAL for "EINVAL" or "einval" (ENOTSUP is EOPNOTSUPP); 0 for an unknown name.
int errno_from_symbol(std::string_view name);
// Every name in the table, in table order (for did-you-mean and help texts).
std::vector<std::string> errno_symbols();

}  // namespace qpo::util
