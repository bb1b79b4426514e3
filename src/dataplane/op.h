#pragma once
// The data path's operations: util/ops.h's table (one vocabulary for the scenario, the
// validator and the data path), under the names the data path has always used.
#include "util/ops.h"

namespace qpo::dataplane {

using util::Op;
using util::OpInfo;
using util::op_info;
using util::op_name;
using util::op_names;
using util::parse_op;

}  // namespace qpo::dataplane
