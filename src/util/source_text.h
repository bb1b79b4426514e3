#pragma once
// The text of an input file, kept so diagnostics can quote the offending line.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::util {

struct SourceLoc {
  std::string file;  // as given on the command line
  int line = 0;      // 1-based; 0 = no position (whole file)
  int col = 0;       // 1-based
  // The scenario gives this (in the file, or with --set: then `file` names the flag and line
  // is 0); a default-constructed location means the key is absent.
  bool given() const { return !file.empty(); }
};

class SourceText {
 public:
  SourceText(std::string name, std::string text);
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // The line's text without its newline; empty when out of range.
  std::string_view line(int one_based) const;
  int line_count() const { return static_cast<int>(line_starts_.size()); }

 private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

}  // namespace qpo::util
