#pragma once
// Static validation of matrix combinations (suite/matrix.h), before anything runs: every
// combination is loaded and validated with its overrides, and a bad value's diagnostic points
// at its matrix entry, as a --set's points at the flag.
#include <string>
#include <vector>

#include "cli/input.h"
#include "suite/suite.h"

namespace qpo::cli {

// Validates the matrix cases among `cases` (with `overrides` from --set first); prints each
// invalid one's name and diagnostics on stderr and marks it failed ("invalid: ..."). Returns
// how many are invalid.
size_t validate_matrix_cases(std::vector<suite::Case>& cases, const std::vector<std::string>& overrides, bool color);

// qpo validate: adds the problems of `path`'s matrix (Q160-Q162) and of its combinations to
// `l` (once each, though several combinations share a bad value), when the file is valid.
void check_matrix(const std::string& path, const std::vector<std::string>& overrides, LoadedScenario& l);

// qpo run without --set on a file with a matrix: a note that one run uses the file's values.
void note_unused_matrix(const std::string& path);

}  // namespace qpo::cli
