#pragma once
// The one way qpo reads a file it is given (scenario, matrix, provider file, run results, token
// file): a regular file, opened without blocking, never read past a cap of its kind. A FIFO
// would block the open or the read forever, /dev/zero or a sparse 10 GiB file would be read
// until memory runs out, and /proc files say they are 0 bytes long while holding more: so the
// type is checked on the open descriptor (fstat, no race with a stat by name), the size before
// reading, and the cap again while reading.
#include <cstddef>
#include <optional>
#include <string>

namespace qpo::util {

// What a file is for: the noun used in messages, and the most a file of that kind may hold.
struct InputKind {
  const char* noun;
  size_t max_bytes;
};

// A 10,000-QP scenario written out in full is ~5.6 MB; past this it is not a scenario, and
// parsing it would cost gigabytes (yaml-cpp keeps ~100 bytes per byte of input).
inline constexpr InputKind kScenarioInput{"scenario", 16ull << 20};
// A matrix file is a scenario file's `matrix:` section, or a scenario with one.
inline constexpr InputKind kMatrixInput{"matrix file", kScenarioInput.max_bytes};
// qpo run --format json of a large suite; far above any real one.
inline constexpr InputKind kResultsInput{"run result", 64ull << 20};
// schemas/providers.yaml is 5 KB; a file `qpo probe --out` wrote is of that order.
inline constexpr InputKind kProviderInput{"provider file", 4ull << 20};
// One line holding a secret.
inline constexpr InputKind kTokenInput{"token file", 4096};

struct InputFile {
  enum class Problem {
    None,
    Unreadable,  // the system refused (no such file, permission): errno's text in `error`
    NotRegular,  // a FIFO, device, directory or socket
    TooLarge,    // past the kind's cap: the input is wrong, not the system
  };
  std::string text;
  Problem problem = Problem::None;
  std::string error;  // names the path (terminal-safe) and what is wrong
  explicit operator bool() const { return problem == Problem::None; }
};

// Reads `path` as a `kind`. Never blocks on a FIFO or device, never reads past kind.max_bytes.
InputFile read_input_file(const std::string& path, const InputKind& kind);

// Reads standard input (a pipe is fine there), at most kind.max_bytes.
InputFile read_standard_input(const InputKind& kind);

// "a FIFO (named pipe)", "a directory", ... for st_mode.
const char* file_type_name(unsigned mode);

}  // namespace qpo::util
