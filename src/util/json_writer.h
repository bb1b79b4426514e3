#pragma once
// A minimal streaming JSON writer: enough for --format json output, no dependency.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::util {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
  JsonWriter& value(double v);
  JsonWriter& value(bool v);
  JsonWriter& null();

  // key + value in one call
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  const std::string& str() const { return out_; }

  static std::string escape(std::string_view s);
  // `s` quoted and escaped, onto the end of `out`.
  static void append_escaped(std::string& out, std::string_view s);

 private:
  void before_value();
  void newline();

  std::string out_;
  bool pretty_;
  struct Level {
    bool array;
    bool first;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace qpo::util
