#pragma once
// A Value as a self-delimiting string and back, exactly (integers stay integers, strings may
// hold any byte): what crosses between hosts when a script workload spans several of them
// (exec/workload_meeting.h). Not JSON: JSON would blur 1 and 1.0 and need a parser here.
//   n | b0 | b1 | i<int>; | d<%a>; | s<len>:<bytes> | t<array count>:<field count>:<values...>
#include <string>

#include "lua/value.h"

namespace qpo::lua {

std::string encode_value(const Value& v);
// Throws std::runtime_error on a malformed or truncated text.
Value decode_value(const std::string& text);

}  // namespace qpo::lua
