#pragma once
// A plain value: nil, boolean, integer, number, string, or a table of them (a sequence part and
// string keys). The only thing that crosses between Lua states (wrk's rule: one state per
// thread, plain values between them) and out to C++: workload args, worker results, summaries.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace qpo::lua {

class Value {
 public:
  struct Table {
    std::vector<Value> array;             // Lua indices 1..n
    std::map<std::string, Value> fields;  // string keys
  };
  enum class Kind { Nil, Bool, Int, Number, String, Table };

  Value() = default;
  Value(bool b) : v_(b) {}
  Value(int v) : v_(static_cast<int64_t>(v)) {}
  Value(int64_t v) : v_(v) {}
  Value(uint64_t v) : v_(static_cast<int64_t>(v)) {}
  Value(double v) : v_(v) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  static Value table() { Value v; v.v_ = std::make_unique<Table>(); return v; }
  Value(const Value& o) { *this = o; }
  Value(Value&&) noexcept = default;
  Value& operator=(const Value& o);
  Value& operator=(Value&&) noexcept = default;

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_nil() const { return kind() == Kind::Nil; }
  bool is_table() const { return kind() == Kind::Table; }
  bool is_number() const { return kind() == Kind::Int || kind() == Kind::Number; }
  bool is_string() const { return kind() == Kind::String; }
  bool as_bool() const { return kind() == Kind::Bool ? std::get<bool>(v_) : !is_nil(); }
  int64_t as_int() const;          // numbers truncated; others 0
  double as_number() const;        // integers widened; others 0
  const std::string& as_string() const;  // "" unless a string

  // Tables. On a non-table these find nothing; the mutating ones turn a nil into a table.
  const Value* find(const std::string& key) const;
  Value& operator[](const std::string& key);
  void push_back(Value v);
  const std::vector<Value>& array() const;
  const std::map<std::string, Value>& fields() const;
  double number_or(const std::string& key, double dflt) const;
  std::string string_or(const std::string& key, const std::string& dflt) const;

  // Compact JSON (tables with only a sequence part become arrays; an empty table is {}).
  std::string to_json() const;

 private:
  Table& tab();
  std::variant<std::monostate, bool, int64_t, double, std::string, std::unique_ptr<Table>> v_;
};

}  // namespace qpo::lua
