#pragma once
// The one way qpo writes a file it is told to write (the HTML report, --results, --json,
// --junit, qpo probe --out). qpo often runs as root in shared directories, so:
//  - a regular file (or one not there yet) is written to a new, unpredictably named file in
//    the same directory, created with O_EXCL|O_NOFOLLOW (a planted FILE.tmp symlink is never
//    followed), then renamed over FILE: a reader sees the old page or the new, never half;
//  - a character device or FIFO (-o /dev/null, --results /dev/stdout, a pipe) is written
//    straight through, and stays what it is;
//  - /dev/stdout, /dev/stderr and /dev/fd/N write to that descriptor, where the shell put it;
//  - anything else (a directory, a socket, a symbolic link to a regular file) is refused.
#include <string>
#include <string_view>

namespace qpo::util {

// Writes `text` to `path`; false with `*error` (naming the path, terminal-safe) when it cannot.
bool write_output_file(const std::string& path, std::string_view text, std::string* error);

// A file written as it goes, to be read while it grows (`tail -f`, a tool following a run):
// the same paths are accepted, but a regular file is truncated and written in place (opened
// with O_NOFOLLOW: a symbolic link is refused, as above), and "-" is standard output.
class OutputStream {
 public:
  OutputStream() = default;
  ~OutputStream();
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  // False with `*error` when `path` cannot be opened for writing.
  bool open(const std::string& path, std::string* error);
  bool is_open() const { return fd_ >= 0; }
  // Writes all of `text` at once; false after a write failed (the rest is dropped).
  bool write(std::string_view text);

 private:
  int fd_ = -1;
  bool owned_ = false;  // closed by the destructor (not stdout or a /dev/fd/N)
  bool failed_ = false;
};

}  // namespace qpo::util
