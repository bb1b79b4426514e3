#include "lua/value_codec.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace qpo::lua {

namespace {

void encode(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Nil: out += 'n'; break;
    case Value::Kind::Bool: out += v.as_bool() ? "b1" : "b0"; break;
    case Value::Kind::Int: out += 'i' + std::to_string(v.as_int()) + ';'; break;
    case Value::Kind::Number: {
      char b[64];
      std::snprintf(b, sizeof b, "%a", v.as_number());  // hex float: exact
      out += 'd' + std::string(b) + ';';
      break;
    }
    case Value::Kind::String: out += 's' + std::to_string(v.as_string().size()) + ':' + v.as_string(); break;
    case Value::Kind::Table:
      out += 't' + std::to_string(v.array().size()) + ':' + std::to_string(v.fields().size()) + ':';
      for (const auto& e : v.array()) encode(out, e);
      for (const auto& [k, f] : v.fields()) {
        out += std::to_string(k.size()) + ':' + k;
        encode(out, f);
      }
      break;
  }
}

struct Reader {
  const std::string& s;
  size_t pos = 0;
  [[noreturn]] void bad() const { throw std::runtime_error("malformed value at byte " + std::to_string(pos)); }
  char next() {
    if (pos >= s.size()) bad();
    return s[pos++];
  }
  std::string until(char end) {
    size_t e = s.find(end, pos);
    if (e == std::string::npos) bad();
    std::string t = s.substr(pos, e - pos);
    pos = e + 1;
    return t;
  }
  size_t count() {
    std::string t = until(':');
    char* end = nullptr;
    unsigned long long n = std::strtoull(t.c_str(), &end, 10);
    if (t.empty() || *end || n > s.size()) bad();  // no count can exceed the text itself
    return static_cast<size_t>(n);
  }
  std::string bytes(size_t n) {
    if (s.size() - pos < n) bad();
    std::string t = s.substr(pos, n);
    pos += n;
    return t;
  }
  Value value(int depth) {
    if (depth > 200) bad();
    switch (next()) {
      case 'n': return Value();
      case 'b': return Value(next() == '1');
      case 'i': return Value(static_cast<int64_t>(std::strtoll(until(';').c_str(), nullptr, 10)));
      case 'd': return Value(std::strtod(until(';').c_str(), nullptr));
      case 's': return Value(bytes(count()));
      case 't': {
        Value t = Value::table();
        size_t n = count(), f = count();
        for (size_t i = 0; i < n; ++i) t.push_back(value(depth + 1));
        for (size_t i = 0; i < f; ++i) {
          std::string k = bytes(count());
          t[k] = value(depth + 1);
        }
        return t;
      }
      default: bad();
    }
  }
};

}  // namespace

std::string encode_value(const Value& v) {
  std::string out;
  encode(out, v);
  return out;
}

Value decode_value(const std::string& text) {
  Reader r{text};
  Value v = r.value(0);
  if (r.pos != text.size()) r.bad();
  return v;
}

}  // namespace qpo::lua
