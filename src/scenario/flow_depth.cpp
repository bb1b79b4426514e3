#include "scenario/flow_depth.h"

#include <cstddef>

namespace qpo::scenario {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_flow_indicator(char c) { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'; }

// A small YAML tokenizer that knows only what decides whether a bracket opens a collection,
// following yaml-cpp's scanner:
// - a quote starts a quoted scalar only where a token starts, not inside a plain scalar
//   (`name: it's`, `name: a 'b` are plain), and '' / \" do not end one;
// - a plain scalar runs to ": ", " #", a flow indicator (inside flow), or a line break whose
//   next line is not indented past the scalar's owner (the key or dash it belongs to);
//   brackets inside it are text;
// - '#' after a space (or at a line start) comments out the rest of the line;
// - a block scalar (`key: |`, `- >-`) holds the lines indented deeper than its owner.
// Where it cannot tell, it errs towards counting a bracket (refusing a strange file) rather
// than towards skipping text that yaml-cpp would parse.
class Scanner {
 public:
  Scanner(std::string_view text, int max_depth) : s_(text), max_(max_depth) {}

  std::optional<DeepFlow> run() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        line_break();
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#' && after_space()) {
        in_plain_ = false;
        skip_to_line_end();
      } else if (in_plain_) {
        plain_char(c);
      } else if (auto deep = token_start(c)) {
        return deep;
      }
    }
    return std::nullopt;
  }

 private:
  bool after_space() const { return i_ == 0 || is_space(s_[i_ - 1]); }
  char at(size_t j) const { return j < s_.size() ? s_[j] : '\n'; }
  bool blank_or_end(size_t j) const { return j >= s_.size() || is_space(s_[j]); }

  // A value indicator: ": " always; inside flow also ":" before a flow indicator, or right
  // after a JSON-like key ("a":1, [x]:1).
  bool is_value_indicator() const {
    char next = at(i_ + 1);
    if (blank_or_end(i_ + 1)) return true;
    return depth_ > 0 && (is_flow_indicator(next) || json_key_);
  }

  void plain_char(char c) {
    if (c == ':' && is_value_indicator()) {
      in_plain_ = false;
      ++i_;
    } else if (depth_ > 0 && is_flow_indicator(c)) {
      in_plain_ = false;  // ends the scalar; the indicator itself is a token
    } else {
      ++i_;
    }
  }

  std::optional<DeepFlow> token_start(char c) {
    bool json_key = false;
    if (c == '\'' || c == '"') {
      skip_quoted(c);
      json_key = true;
    } else if (c == '[' || c == '{') {
      if (++depth_ > max_) return DeepFlow{line_, static_cast<int>(i_ - line_start_) + 1};
      ++i_;
    } else if (c == ']' || c == '}') {
      if (depth_ > 0) --depth_;
      ++i_;
      json_key = true;
    } else if (c == ',') {
      ++i_;
    } else if ((c == '-' || c == '?') && blank_or_end(i_ + 1)) {
      ++i_;
    } else if (c == ':' && is_value_indicator()) {
      ++i_;
    } else if ((c == '|' || c == '>') && depth_ == 0 && ends_block_header(i_ + 1)) {
      skip_block_scalar();
    } else if (c == '&' || c == '!' || c == '*') {
      // An anchor, a tag or an alias: a name up to a space (or a flow indicator inside flow).
      while (i_ < s_.size() && !is_space(s_[i_]) && !(depth_ > 0 && is_flow_indicator(s_[i_]) && s_[i_] != '!')) ++i_;
    } else if (c == '%' && i_ == line_start_) {
      skip_to_line_end();  // a directive
    } else {
      in_plain_ = true;
      plain_owner_ = owner_column();
      ++i_;
    }
    json_key_ = json_key;
    return std::nullopt;
  }

  void newline() {
    ++line_;
    line_start_ = i_ + 1;
  }

  // At a '\n': a plain scalar outside flow goes on only if the next line with text is
  // indented deeper than its owner (blank lines fold into it; a comment line ends it).
  void line_break() {
    newline();
    ++i_;
    json_key_ = false;
    if (!in_plain_ || depth_ > 0) return;
    size_t j = i_;
    while (true) {
      size_t start = j;
      while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t')) ++j;
      if (j < s_.size() && (s_[j] == '\n' || (s_[j] == '\r' && at(j + 1) == '\n'))) {
        j = s_.find('\n', j) + 1;
        continue;
      }
      if (j >= s_.size() || j - start <= plain_owner_ || s_[j] == '#') in_plain_ = false;
      return;
    }
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

  // The owner's column for a token at i_: the key (`a: x`, `- a: x`) or the dash (`- x`) it
  // belongs to; its continuation lines must be indented deeper.
  size_t owner_column() const {
    size_t j = line_start_;
    while (j < i_ && s_[j] == ' ') ++j;
    size_t owner = j - line_start_;
    while (j + 1 < i_ && s_[j] == '-' && (s_[j + 1] == ' ' || s_[j + 1] == '\t')) {
      owner = j - line_start_;
      ++j;
      while (j < i_ && (s_[j] == ' ' || s_[j] == '\t')) ++j;
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
  bool in_plain_ = false;     // inside a plain (unquoted) scalar
  size_t plain_owner_ = 0;    // its owner's column (block context)
  bool json_key_ = false;     // the last token was quoted or a closed collection
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::optional<DeepFlow> find_deep_flow(std::string_view text, int max_depth) {
  return Scanner(text, max_depth).run();
}

}  // namespace qpo::scenario
