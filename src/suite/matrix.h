#pragma once
// A matrix: parameters of a scenario (override paths, as `--set` takes them) and their values;
// every combination is a case of its own, named by its parameters:
//
//   matrix:
//     qps.qa.states.RTR.path_mtu: [1024, 4096]          # shorthand: the path's last key names it
//     size: { set: workloads.bw.size, values: [4KiB, 64KiB] }
//     mtu:  { set: [qps.qa.states.RTR.path_mtu, qps.qb.states.RTR.path_mtu], values: [1024, 4096] }
//
// -> rc-write[path_mtu=1024,size=4KiB], rc-write[path_mtu=1024,size=64KiB], ... (the first
// parameter changes slowest). Each combination is a list of overrides, applied through
// scenario/overrides.h like `--set`, each remembering the matrix value it came from, so a bad
// value's diagnostic points at that entry.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diag/diagnostic.h"
#include "util/source_text.h"

namespace qpo::suite {

struct MatrixValue {
  std::string text;     // as --set takes it (YAML, flow style): 1024, 4KiB, [a, b]
  std::string display;  // in the case name: the scalar as written, else `text`
  util::SourceLoc loc;  // where it is written
};

struct Parameter {
  std::string name;                // in the case name
  std::vector<std::string> paths;  // override paths, each set to the value
  std::vector<MatrixValue> values;
  util::SourceLoc loc;
};

struct Matrix {
  std::vector<Parameter> parameters;
  util::SourceLoc loc;  // the `matrix:` key
  size_t combinations() const;
};

// One combination: its parameters' values and the overrides that make it.
struct Combination {
  std::vector<std::pair<std::string, std::string>> parameters;  // name -> display value
  std::vector<std::string> overrides;                           // PATH=VALUE
  std::vector<util::SourceLoc> origins;                         // where each override's value is
  std::string suffix() const;  // "[path_mtu=1024,size=4KiB]"
};

// At most this many combinations per matrix (Q162): a suite larger than that is a typo.
constexpr size_t kMaxCombinations = 10000;

// Reads a `matrix:` node (`file` names it in diagnostics). Problems are Q160-Q162 in `sink`;
// nullopt when the matrix cannot be used.
std::optional<Matrix> parse_matrix(const YAML::Node& node, const std::string& file, diag::DiagSink& sink);

// The `matrix:` of a YAML file (a scenario, or a file of its own for `qpo test --matrix`):
// nullopt without diagnostics when the file has none; a file that cannot be read or parsed is
// reported (Q160) when `required`, else left to the loader.
std::optional<Matrix> read_matrix(const std::string& path, bool required, diag::DiagSink& sink);

// Every combination, the first parameter slowest.
std::vector<Combination> expand(const Matrix& m);

}  // namespace qpo::suite
