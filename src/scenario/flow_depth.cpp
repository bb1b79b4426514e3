#include "scenario/flow_depth.h"

#include <cstddef>

namespace qpo::scenario {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The YAML rules that matter for counting brackets, as yaml-cpp applies them:
// - inside a flow collection every bracket is an indicator (plain scalars there cannot hold
//   [ ] { } ,), outside one only a bracket that starts a token (after a space) opens one;
// - a quote starts a quoted scalar where a token starts ('it''s', "a\"b" escape their quote);
// - '#' after a space (or at a line start) comments out the rest of the line;
// - a block scalar (`key: |`, `- >-`) holds the lines indented deeper than its owner.
class Scanner {
 public:
  Scanner(std::string_view text, int max_depth) : s_(text), max_(max_depth) {}

  std::optional<DeepFlow> run() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      bool token_start = i_ == 0 || is_space(s_[i_ - 1]) ||
                         (depth_ > 0 && (s_[i_ - 1] == '[' || s_[i_ - 1] == '{' || s_[i_ - 1] == ',' || s_[i_ - 1] == ':'));
      if (c == '\n') {
        newline();
      } else if (c == '#' && (i_ == 0 || is_space(s_[i_ - 1]))) {
        skip_to_line_end();
        continue;
      } else if ((c == '\'' || c == '"') && token_start) {
        skip_quoted(c);
        continue;
      } else if ((c == '|' || c == '>') && depth_ == 0 && token_start && ends_block_header(i_ + 1)) {
        skip_block_scalar();
        continue;
      } else if (c == '[' || c == '{') {
        if (depth_ > 0 || token_start) {
          if (++depth_ > max_) return DeepFlow{line_, static_cast<int>(i_ - line_start_) + 1};
        }
      } else if ((c == ']' || c == '}') && depth_ > 0) {
        --depth_;
      }
      ++i_;
    }
    return std::nullopt;
  }

 private:
  void newline() {
    ++line_;
    line_start_ = i_ + 1;
  }

  void skip_to_line_end() {
    while (i_ < s_.size() && s_[i_] != '\n') ++i_;
  }

  // From the opening quote to just past the closing one (or the end of the text).
  void skip_quoted(char quote) {
    for (++i_; i_ < s_.size(); ++i_) {
      char c = s_[i_];
      if (c == '\n') newline();
      else if (quote == '"' && c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] != '\n') ++i_;
      else if (c == quote && quote == '\'' && i_ + 1 < s_.size() && s_[i_ + 1] == '\'') ++i_;
      else if (c == quote) {
        ++i_;
        return;
      }
    }
  }

  // After | or >: optional indentation/chomping indicators, then only spaces or a comment.
  bool ends_block_header(size_t j) const {
    while (j < s_.size() && (s_[j] == '-' || s_[j] == '+' || (s_[j] >= '1' && s_[j] <= '9'))) ++j;
    if (j < s_.size() && !is_space(s_[j])) return false;
    while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t')) ++j;
    return j >= s_.size() || s_[j] == '\n' || s_[j] == '\r' || s_[j] == '#';
  }

  // The owner's column: the key (`a: |`, `- a: |`) or the dash (`- |`) the scalar belongs to.
  size_t owner_column() const {
    size_t j = line_start_;
    while (j < i_ && s_[j] == ' ') ++j;
    size_t owner = j - line_start_;
    while (j + 1 < i_ && s_[j] == '-' && s_[j + 1] == ' ') {
      owner = j - line_start_;
      ++j;
      while (j < i_ && s_[j] == ' ') ++j;
      if (j < i_) owner = j - line_start_;
    }
    return owner;
  }

  // The content lines: blank, or indented deeper than the owner. Stops at the first other line.
  void skip_block_scalar() {
    size_t owner = owner_column();
    skip_to_line_end();
    while (i_ < s_.size()) {
      size_t next = i_ + 1;  // s_[i_] is '\n'
      size_t j = next;
      while (j < s_.size() && s_[j] == ' ') ++j;
      bool blank = j >= s_.size() || s_[j] == '\n' || (s_[j] == '\r' && (j + 1 >= s_.size() || s_[j + 1] == '\n'));
      if (!blank && j - next <= owner) return;  // at the '\n' before the next structure line
      newline();
      i_ = next;
      skip_to_line_end();
    }
  }

  std::string_view s_;
  int max_;
  size_t i_ = 0;
  int depth_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::optional<DeepFlow> find_deep_flow(std::string_view text, int max_depth) {
  return Scanner(text, max_depth).run();
}

}  // namespace qpo::scenario
