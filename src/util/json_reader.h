#pragma once
// A small strict JSON reader (RFC 8259) for the files and messages qpo writes itself: results
// read back by qpo compare and qpo report. yaml-cpp read them before, and took YAML for JSON:
// anchors and aliases made 24 KB expand to millions of values. Here anything that is not JSON
// is an error with its line and column; nesting, size and the number of values are capped.
// Strings are bytes: JsonWriter passes non-ASCII bytes through as they are (a hostile name may
// hold invalid UTF-8), so they are read back as they are; only \u escapes are decoded.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qpo::util::json {

enum class Kind { Null, Bool, Number, String, Array, Object };
// "null", "true or false", "a number", "a string", "an array", "an object": for messages.
const char* kind_name(Kind k);

struct Member;

struct Value {
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;   // Number: the value (always finite)
  std::string text;    // String: the decoded text; Number: the literal as written (exact integers)
  std::vector<Value> items;                            // Array
  std::vector<Member> members;  // Object, in file order, keys unique
  int line = 0, column = 0;  // where the value starts (1-based; column in bytes)

  bool is(Kind k) const { return kind == k; }
  // The member `key` of an object; nullptr when absent or when this is not an object.
  const Value* find(std::string_view key) const;
};

// A key of an object and its value. Not a std::pair: clang 14 wants pair's types complete
// where Value is not yet (a pair's traits are instantiated inside Value's own definition).
struct Member {
  std::string key;
  Value value;
};

struct Limits {
  size_t max_bytes = size_t{64} << 20;  // qpo's largest results are a few MB
  int max_depth = 64;                   // qpo's results nest 8 deep
  size_t max_values = size_t{1} << 22;  // about 100 bytes each in memory
};

// The value `text` holds; nullopt with `error` = "line L, column C: why" when it is not one
// JSON value (or breaks a limit).
std::optional<Value> parse(std::string_view text, std::string* error, const Limits& limits = {});

}  // namespace qpo::util::json
