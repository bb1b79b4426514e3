#pragma once
// The whole of `qpo validate`: the checks of src/check (no Lua VM), then what only running a
// script can tell - its setup(args) in a sandboxed Lua state, without devices (Q701).
#include "check/validate.h"

namespace qpo::validate {

// check::validate, then check_script_setups. What `qpo validate`, `plan` and `run` apply.
check::Checked validate(const scenario::Scenario& s, diag::DiagSink& sink);
// The same, elaborating `s` in place instead of a copy of it.
check::Checked validate(scenario::Scenario&& s, diag::DiagSink& sink);

// Each script workload's setup(args), as `qpo run` would call it, minus devices (Q701).
// Identical (script, args, roles) are run once.
void check_script_setups(const scenario::Scenario& s, diag::DiagSink& sink);

}  // namespace qpo::validate
