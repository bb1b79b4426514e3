#include "lua/value.h"

#include "util/json_writer.h"

#include <cmath>
#include <cstdio>

namespace qpo::lua {

namespace {
const std::string kEmpty;
const std::vector<Value> kNoArray;
const std::map<std::string, Value> kNoFields;

void json_string(std::string& out, const std::string& s) { out += util::JsonWriter::escape(s); }

void json(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Nil: out += "null"; break;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; break;
    case Value::Kind::Int: out += std::to_string(v.as_int()); break;
    case Value::Kind::Number: {
      double d = v.as_number();
      if (!std::isfinite(d)) {
        out += "null";
        break;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      out += buf;
      break;
    }
    case Value::Kind::String: json_string(out, v.as_string()); break;
    case Value::Kind::Table: {
      if (v.fields().empty() && !v.array().empty()) {
        out += '[';
        for (size_t i = 0; i < v.array().size(); ++i) {
          if (i) out += ',';
          json(out, v.array()[i]);
        }
        out += ']';
        break;
      }
      out += '{';
      bool first = true;
      for (size_t i = 0; i < v.array().size(); ++i) {  // mixed table: indices as keys
        if (!first) out += ',';
        first = false;
        json_string(out, std::to_string(i + 1));
        out += ':';
        json(out, v.array()[i]);
      }
      for (const auto& [k, f] : v.fields()) {
        if (!first) out += ',';
        first = false;
        json_string(out, k);
        out += ':';
        json(out, f);
      }
      out += '}';
      break;
    }
  }
}
}  // namespace

Value& Value::operator=(const Value& o) {
  if (this == &o) return *this;
  if (o.is_table()) {
    auto t = std::make_unique<Table>(*std::get<std::unique_ptr<Table>>(o.v_));
    v_ = std::move(t);
  } else {
    std::visit(
        [this](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (!std::is_same_v<T, std::unique_ptr<Table>>) v_ = x;
        },
        o.v_);
  }
  return *this;
}

int64_t Value::as_int() const {
  if (kind() == Kind::Int) return std::get<int64_t>(v_);
  if (kind() == Kind::Number) return static_cast<int64_t>(std::get<double>(v_));
  return 0;
}

double Value::as_number() const {
  if (kind() == Kind::Int) return static_cast<double>(std::get<int64_t>(v_));
  if (kind() == Kind::Number) return std::get<double>(v_);
  return 0;
}

const std::string& Value::as_string() const { return is_string() ? std::get<std::string>(v_) : kEmpty; }

Value::Table& Value::tab() {
  if (!is_table()) v_ = std::make_unique<Table>();
  return *std::get<std::unique_ptr<Table>>(v_);
}

const Value* Value::find(const std::string& key) const {
  if (!is_table()) return nullptr;
  const auto& f = std::get<std::unique_ptr<Table>>(v_)->fields;
  auto it = f.find(key);
  return it == f.end() ? nullptr : &it->second;
}

Value& Value::operator[](const std::string& key) { return tab().fields[key]; }
void Value::push_back(Value v) { tab().array.push_back(std::move(v)); }
const std::vector<Value>& Value::array() const {
  return is_table() ? std::get<std::unique_ptr<Table>>(v_)->array : kNoArray;
}
const std::map<std::string, Value>& Value::fields() const {
  return is_table() ? std::get<std::unique_ptr<Table>>(v_)->fields : kNoFields;
}

double Value::number_or(const std::string& key, double dflt) const {
  const Value* v = find(key);
  return v && v->is_number() ? v->as_number() : dflt;
}

std::string Value::string_or(const std::string& key, const std::string& dflt) const {
  const Value* v = find(key);
  return v && v->is_string() ? v->as_string() : dflt;
}

std::string Value::to_json() const {
  std::string out;
  json(out, *this);
  return out;
}

}  // namespace qpo::lua
