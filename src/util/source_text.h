#pragma once
// The text of an input file, kept so diagnostics can quote the offending line.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::util {

// A file name as locations hold it: one shared copy per distinct name for the life of the
// process (a run sees a handful: its files and its --set flags), so copying a location, which
// the loader and validator do for every key of every QP, costs no allocation.
class FileName {
 public:
  FileName() = default;
  FileName(std::string_view name);  // NOLINT(google-explicit-constructor): a name is a file name
  FileName(const std::string& name) : FileName(std::string_view(name)) {}  // NOLINT
  FileName(const char* name) : FileName(std::string_view(name)) {}         // NOLINT
  const std::string& str() const;
  operator const std::string&() const { return str(); }  // NOLINT: reads like the string it was
  bool empty() const { return name_ == nullptr; }
  // One copy per name: equal names are the same pointer. Order is by text (sorted output).
  friend bool operator==(const FileName& a, const FileName& b) { return a.name_ == b.name_; }
  friend bool operator<(const FileName& a, const FileName& b) { return a.str() < b.str(); }

 private:
  const std::string* name_ = nullptr;  // nullptr: no file (an absent key)
};

struct SourceLoc {
  FileName file;     // as given on the command line
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
