#include "scenario/flow_depth.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <vector>

namespace qpo::scenario {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_flow_indicator(char c) { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'; }

// A small YAML tokenizer that knows only what decides whether a bracket opens a collection,
// following yaml-cpp's scanner (checked against its parser on random YAML-like text):
// - a quote starts a quoted scalar only where a token starts, not inside a plain scalar
//   (`name: it's`, `name: a 'b` are plain), and '' / \" do not end one;
// - a plain scalar runs to ": ", " #", a flow indicator (inside flow), or a line break whose
//   next line is not indented past the enclosing block collection; brackets inside it are
//   text. So the scanner keeps yaml-cpp's stack of block indents (a `- ` or a key opens one);
// - '#' after a space, or where a token starts (yaml-cpp: `''#x`), comments out the rest of
//   the line;
// - a block scalar (`key: |`, `- >-`) holds the lines indented at least as deep as its first
//   line of text, which must be deeper than the enclosing collection.
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
      } else if (c == '#' && (after_space() || !in_plain_)) {
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
  long column() const { return static_cast<long>(i_ - line_start_); }
  long top_indent() const { return indents_.back(); }

  // A block collection starting at `col` (a `- ` or `? `, or a key) deeper than the current one.
  void open_block(long col) {
    if (depth_ == 0 && col > top_indent()) indents_.push_back(col);
  }

  // A value indicator: ": " always; inside flow also ":" before a flow indicator, or right
  // after a JSON-like key ("a":1, [x]:1). Outside flow, the key before it opens a block map.
  // Without a key before it on this line (`: x`, `- : x`, `a: : x`) the map starts at the ':'.
  bool value_indicator() {
    bool is = blank_or_end(i_ + 1) || (depth_ > 0 && (is_flow_indicator(at(i_ + 1)) || json_key_));
    if (!is || depth_ > 0) return is;
    if (!key_pending_ || token_line_ != line_) mark_token();
    open_block(token_col_);
    key_pending_ = false;
    return is;
  }

  void plain_char(char c) {
    if (c == ':' && value_indicator()) {
      in_plain_ = false;
      ++i_;
    } else if (depth_ > 0 && is_flow_indicator(c)) {
      in_plain_ = false;  // ends the scalar; the indicator itself is a token
    } else {
      ++i_;
    }
  }

  std::optional<DeepFlow> token_start(char c) {
    if (depth_ == 0 && line_first_) {
      while (top_indent() > column()) indents_.pop_back();
    }
    line_first_ = false;
    bool json_key = false;
    if (c == '\'' || c == '"') {
      mark_token();
      skip_quoted(c);
      json_key = true;
    } else if (c == '[' || c == '{') {
      mark_token();
      if (++depth_ > max_) return DeepFlow{line_, static_cast<int>(column()) + 1};
      ++i_;
    } else if (c == ']' || c == '}') {
      if (depth_ > 0) --depth_;
      ++i_;
      json_key = true;
    } else if (c == ',') {
      ++i_;
    } else if ((c == '-' || c == '?') && blank_or_end(i_ + 1)) {
      open_block(column());
      key_pending_ = false;
      ++i_;
    } else if (c == ':' && value_indicator()) {
      ++i_;
    } else if ((c == '|' || c == '>') && depth_ == 0 && ends_block_header(i_ + 1)) {
      skip_block_scalar();
    } else if (c == '&' || c == '!' || c == '*') {
      // An anchor, a tag or an alias: a name up to a space or a flow indicator (a tag may hold
      // '[' for yaml-cpp; counting it as an opener errs on the side of refusing).
      if (c != '*') mark_token();
      while (i_ < s_.size() && !is_space(s_[i_]) && !is_flow_indicator(s_[i_])) ++i_;
      if (c != '*') {
        properties_ = true;  // the node they belong to starts at the first of them
        return std::nullopt;
      }
    } else if (c == '%' && i_ == line_start_) {
      skip_to_line_end();  // a directive
    } else {
      mark_token();
      in_plain_ = true;
      ++i_;
    }
    json_key_ = json_key;
    properties_ = false;
    return std::nullopt;
  }

  // Where the token that may turn out to be a block map's key starts (at its anchor or tag,
  // if any). Inside flow, keys open no block collection.
  void mark_token() {
    if (depth_ > 0 || (properties_ && token_line_ == line_)) return;
    token_col_ = column();
    token_line_ = line_;
    key_pending_ = true;
  }

  void newline() {
    ++line_;
    line_start_ = i_ + 1;
  }

  // Indentation of the line starting at `j` (spaces only), or -1 when it holds no text.
  long indent_at(size_t j) const {
    size_t k = j;
    while (k < s_.size() && s_[k] == ' ') ++k;
    if (k >= s_.size() || s_[k] == '\n' || (s_[k] == '\r' && at(k + 1) == '\n')) return -1;
    return static_cast<long>(k - j);
  }

  // At a '\n': a plain scalar outside flow goes on only if the next line with text is
  // indented deeper than the enclosing block collection. Blank lines fold into it: decided
  // at the next line with text (each line looked at once, so a million blank lines cost a
  // million steps).
  void line_break() {
    newline();
    ++i_;
    json_key_ = false;
    line_first_ = true;
    if (!in_plain_ || depth_ > 0) return;
    long indent = indent_at(i_);
    if (indent < 0) return;
    char first = at(i_ + static_cast<size_t>(indent));
    if (indent <= top_indent() || first == '#' || first == '\t') in_plain_ = false;
    else line_first_ = false;  // the scalar's next line, not a new token
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

  // The content: blank lines, and lines indented at least as deep as the first line of text
  // (when that is deeper than the enclosing collection). Stops at the '\n' before the next
  // structure line.
  void skip_block_scalar() {
    long content = -1;
    skip_to_line_end();
    while (i_ < s_.size()) {
      size_t next = i_ + 1;  // s_[i_] is '\n'
      long indent = indent_at(next);
      if (indent >= 0) {
        if (content < 0) content = indent > std::max(top_indent(), 0L) ? indent : LONG_MAX;
        if (indent < content) return;
      }
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
  bool line_first_ = true;          // no token yet on this line
  bool in_plain_ = false;           // inside a plain (unquoted) scalar
  bool json_key_ = false;           // the last token was quoted or a closed collection
  bool properties_ = false;         // an anchor or tag came first: the node starts there
  bool key_pending_ = false;        // a scalar or collection that a ':' may make a key
  long token_col_ = 0;              // where the last scalar or collection started,
  int token_line_ = 0;              //   in case a ':' makes it a key
  std::vector<long> indents_{-1};   // yaml-cpp's block indents (-1: the document)
};

}  // namespace

std::optional<DeepFlow> find_deep_flow(std::string_view text, int max_depth) {
  return Scanner(text, max_depth).run();
}

}  // namespace qpo::scenario
