#include "util/json_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>

namespace qpo::util::json {

namespace {

struct Failure {
  std::string why;
  size_t at;
};

class Reader {
 public:
  Reader(std::string_view text, const Limits& limits) : s_(text), limits_(limits) {}

  Value document() {
    skip_space();
    Value v = value(1);
    skip_space();
    if (i_ < s_.size()) fail("more text after the JSON value: " + what_is_here());
    return v;
  }

  // 1-based line and byte column of offset `at`.
  std::pair<int, int> position(size_t at) const {
    int line = 1;
    size_t line_start = 0;
    for (size_t k = 0; k < at && k < s_.size(); ++k)
      if (s_[k] == '\n') {
        ++line;
        line_start = k + 1;
      }
    return {line, static_cast<int>(at - line_start + 1)};
  }

 private:
  [[noreturn]] void fail(std::string why) const { throw Failure{std::move(why), i_}; }

  // The character at the cursor, as a message names it.
  std::string what_is_here() const {
    if (i_ >= s_.size()) return "the end of the text";
    unsigned char c = static_cast<unsigned char>(s_[i_]);
    if (c == '&' || c == '*') return std::string("'") + static_cast<char>(c) + "' (a YAML anchor or alias is not JSON)";
    if (c == '\'') return "''' (JSON strings are in double quotes)";
    if (c < 0x20 || c >= 0x7f) {
      static const char* hex = "0123456789ABCDEF";
      return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
    }
    return std::string("'") + static_cast<char>(c) + "'";
  }

  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  Value start(Kind k) {
    if (++values_ > limits_.max_values) fail("more than " + std::to_string(limits_.max_values) + " values");
    auto [line, column] = position_cached(i_);
    Value v;
    v.kind = k;
    v.line = line;
    v.column = column;
    return v;
  }

  // position() for offsets met in increasing order: the line count carries on from the last
  // call, so a document's values cost one pass over it in all.
  std::pair<int, int> position_cached(size_t at) {
    for (; scanned_ < at; ++scanned_)
      if (s_[scanned_] == '\n') {
        ++line_;
        line_start_ = scanned_ + 1;
      }
    return {line_, static_cast<int>(at - line_start_ + 1)};
  }

  Value value(int depth) {
    if (i_ >= s_.size()) fail("expected a value, found the end of the text");
    char c = s_[i_];
    if (c == '{' || c == '[') {
      if (depth > limits_.max_depth) fail("nests deeper than " + std::to_string(limits_.max_depth) + " levels");
      return c == '{' ? object(depth) : array(depth);
    }
    if (c == '"') {
      Value v = start(Kind::String);
      v.text = string();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    struct Literal {
      std::string_view word;
      Kind kind;
      bool truth;
    };
    for (const Literal& l : {Literal{"true", Kind::Bool, true}, Literal{"false", Kind::Bool, false}, Literal{"null", Kind::Null, false}})
      if (s_.substr(i_, l.word.size()) == l.word) {
        Value v = start(l.kind);
        v.boolean = l.truth;
        i_ += l.word.size();
        return v;
      }
    fail("expected a value, found " + what_is_here());
  }

  // An object's members (an array's items) gather on a stack kept for its depth, then move into
  // the value at once: one allocation of the right size, not a vector doubling as it grows
  // (10,000 directory entries of 11 members each: about a fifth of the reading time under TCG).
  // The stack of depth `depth` (a nested value uses the next one; siblings take turns).
  template <typename T>
  static std::vector<T>& stack_at(std::vector<std::vector<T>>& stacks, int depth) {
    if (static_cast<size_t>(depth) >= stacks.size()) stacks.resize(static_cast<size_t>(depth) + 1);
    return stacks[static_cast<size_t>(depth)];
  }

  Value object(int depth) {
    Value v = start(Kind::Object);
    ++i_;
    skip_space();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return v;
    }
    for (;;) {
      skip_space();
      if (i_ >= s_.size() || s_[i_] != '"') fail("expected a key in double quotes, found " + what_is_here());
      std::string key = string();
      skip_space();
      if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':' after the key, found " + what_is_here());
      ++i_;
      skip_space();
      Value member = value(depth + 1);
      stack_at(member_stacks_, depth).push_back(Member{std::move(key), std::move(member)});
      skip_space();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == '}') break;
      fail("expected ',' or '}' in the object, found " + what_is_here());
    }
    ++i_;
    auto& gathered = stack_at(member_stacks_, depth);
    v.members.assign(std::make_move_iterator(gathered.begin()), std::make_move_iterator(gathered.end()));
    gathered.clear();
    check_unique_keys(v);
    return v;
  }

  // One meaning per key: a second "steps" would be read by one reader and not another.
  void check_unique_keys(const Value& v) {
    if (v.members.size() <= 16) {  // most objects: pairwise, without allocating
      for (size_t b = 1; b < v.members.size(); ++b)
        for (size_t a = 0; a < b; ++a)
          if (v.members[a].key == v.members[b].key)
            throw Failure{"key \"" + v.members[b].key.substr(0, 64) + "\" appears twice in an object", offset_of(v.members[b].value)};
      return;
    }
    std::vector<size_t> order(v.members.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return v.members[a].key != v.members[b].key ? v.members[a].key < v.members[b].key : a < b;
    });
    for (size_t k = 1; k < order.size(); ++k)
      if (v.members[order[k]].key == v.members[order[k - 1]].key) {
        throw Failure{"key \"" + v.members[order[k]].key.substr(0, 64) + "\" appears twice in an object",
                      offset_of(v.members[order[k]].value)};
      }
  }

  // The offset of a value already read, from its line and column (for an error about it).
  size_t offset_of(const Value& v) const {
    size_t at = 0;
    for (int line = 1; line < v.line && at < s_.size(); ++at)
      if (s_[at] == '\n') ++line;
    return at + static_cast<size_t>(v.column - 1);
  }

  Value array(int depth) {
    Value v = start(Kind::Array);
    ++i_;
    skip_space();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return v;
    }
    for (;;) {
      skip_space();
      Value item = value(depth + 1);
      stack_at(item_stacks_, depth).push_back(std::move(item));
      skip_space();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == ']') break;
      fail("expected ',' or ']' in the array, found " + what_is_here());
    }
    ++i_;
    auto& gathered = stack_at(item_stacks_, depth);
    v.items.assign(std::make_move_iterator(gathered.begin()), std::make_move_iterator(gathered.end()));
    gathered.clear();
    return v;
  }

  Value number() {
    Value v = start(Kind::Number);
    size_t begin = i_;
    auto digits = [&] {
      size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - from;
    };
    if (s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
      if (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') fail("a number does not start with 0 in JSON");
    } else if (digits() == 0) {
      fail("expected a digit, found " + what_is_here());
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (digits() == 0) fail("expected a digit after '.', found " + what_is_here());
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) fail("expected a digit in the exponent, found " + what_is_here());
    }
    v.text = std::string(s_.substr(begin, i_ - begin));
    v.number = std::strtod(v.text.c_str(), nullptr);  // the grammar above is strtod's, in the C locale
    if (!std::isfinite(v.number)) {
      i_ = begin;
      fail("number " + v.text.substr(0, 32) + " is out of range");
    }
    return v;
  }

  unsigned hex4() {
    if (s_.size() - i_ < 4) fail("expected 4 hex digits after \\u");
    unsigned u = 0;
    for (int k = 0; k < 4; ++k, ++i_) {
      char c = s_[i_];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) fail("expected 4 hex digits after \\u, found " + what_is_here());
      u = u * 16 + static_cast<unsigned>(d);
    }
    return u;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // A string at the cursor (on its opening quote), decoded.
  std::string string() {
    std::string out;
    ++i_;
    for (;;) {
      if (i_ >= s_.size()) fail("a string is not closed");
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') break;
      if (c < 0x20) fail("a control character (" + what_is_here() + ") in a string must be escaped");
      if (c != '\\') {
        size_t run = i_;
        while (run < s_.size() && s_[run] != '"' && s_[run] != '\\' && static_cast<unsigned char>(s_[run]) >= 0x20) ++run;
        out.append(s_.substr(i_, run - i_));
        i_ = run;
        continue;
      }
      ++i_;
      if (i_ >= s_.size()) fail("a string is not closed");
      char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("\\u escape: a low surrogate without a high one");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(i_, 2) != "\\u") fail("\\u escape: a high surrogate without a low one");
            i_ += 2;
            uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("\\u escape: a high surrogate without a low one");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --i_;
          if (e > 0x20 && e < 0x7f) fail(std::string("unknown escape '\\") + e + "'");
          fail("unknown escape: " + what_is_here());
      }
    }
    ++i_;
    return out;
  }

  std::string_view s_;
  const Limits& limits_;
  std::vector<std::vector<Member>> member_stacks_;  // by depth
  std::vector<std::vector<Value>> item_stacks_;
  size_t i_ = 0;
  size_t values_ = 0;
  size_t scanned_ = 0, line_start_ = 0;
  int line_ = 1;
};

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Null: return "null";
    case Kind::Bool: return "true or false";
    case Kind::Number: return "a number";
    case Kind::String: return "a string";
    case Kind::Array: return "an array";
    case Kind::Object: return "an object";
  }
  return "?";
}

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

std::optional<Value> parse(std::string_view text, std::string* error, const Limits& limits) {
  if (text.size() > limits.max_bytes) {
    *error = std::to_string(text.size()) + " bytes is more than " + std::to_string(limits.max_bytes) + " bytes";
    return std::nullopt;
  }
  Reader reader(text, limits);
  try {
    return reader.document();
  } catch (const Failure& f) {
    auto [line, column] = reader.position(f.at);
    *error = "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + f.why;
    return std::nullopt;
  }
}

}  // namespace qpo::util::json
