// util/json_reader.h: the strict JSON reader qpo compare and qpo report read results with.
#include <doctest/doctest.h>

#include <string>

#include "util/json_reader.h"

namespace json = qpo::util::json;

namespace {

std::string error_of(const std::string& text, const json::Limits& limits = {}) {
  std::string error;
  auto v = json::parse(text, &error, limits);
  CHECK_FALSE(v);
  return error;
}

}  // namespace

TEST_CASE("json reader: objects, arrays, strings with escapes, numbers, true/false/null") {
  std::string error;
  auto v = json::parse(R"({"a": [1, -2.5e3, true, false, null], "s": "q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "e": {}})", &error);
  REQUIRE_MESSAGE(v, error);
  REQUIRE(v->is(json::Kind::Object));
  const auto* a = v->find("a");
  REQUIRE(a);
  REQUIRE(a->items.size() == 5);
  CHECK(a->items[0].number == 1);
  CHECK(a->items[0].text == "1");
  CHECK(a->items[1].number == -2500);
  CHECK(a->items[2].boolean);
  CHECK(a->items[3].is(json::Kind::Bool));
  CHECK(a->items[4].is(json::Kind::Null));
  CHECK(v->find("s")->text == "q\"\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(v->find("e")->members.empty());
  CHECK(v->find("absent") == nullptr);
  CHECK(a->items[1].line == 1);
  CHECK(a->items[1].column == 11);
}

TEST_CASE("json reader: a YAML anchor or alias is not JSON, with its line and column") {
  CHECK(error_of("{\"a\": &x [1],\n \"b\": *x}") == "line 1, column 7: expected a value, found '&' (a YAML anchor or alias is not JSON)");
  CHECK(error_of("{\"a\": 1,\n \"b\": *x}") == "line 2, column 7: expected a value, found '*' (a YAML anchor or alias is not JSON)");
}

TEST_CASE("json reader: YAML that JSON is not (flow without quotes, single quotes, comments, trailing commas)") {
  CHECK(error_of("{a: 1}") == "line 1, column 2: expected a key in double quotes, found 'a'");
  CHECK(error_of("['x']") == "line 1, column 2: expected a value, found ''' (JSON strings are in double quotes)");
  CHECK(error_of("[1] # c") == "line 1, column 5: more text after the JSON value: '#'");
  CHECK(error_of("[1,]") == "line 1, column 4: expected a value, found ']'");
  CHECK(error_of("") == "line 1, column 1: expected a value, found the end of the text");
}

TEST_CASE("json reader: numbers as JSON writes them, finite") {
  CHECK(error_of("[01]") == "line 1, column 3: a number does not start with 0 in JSON");
  CHECK(error_of("[1.]") == "line 1, column 4: expected a digit after '.', found ']'");
  CHECK(error_of("[1e999]") == "line 1, column 2: number 1e999 is out of range");
  CHECK(error_of("[.5]") == "line 1, column 2: expected a value, found '.'");
  std::string error;
  auto v = json::parse("18446744073709551615", &error);
  REQUIRE(v);
  CHECK(v->text == "18446744073709551615");  // an exact counter, whatever a double makes of it
}

TEST_CASE("json reader: strings: raw control bytes, bad escapes and lone surrogates are errors; other bytes pass") {
  CHECK(error_of("\"a\nb\"") == "line 1, column 3: a control character (byte 0x0A) in a string must be escaped");
  CHECK(error_of("\"\\x\"") == "line 1, column 3: unknown escape '\\x'");
  CHECK(error_of("\"\\ud800\"") == "line 1, column 8: \\u escape: a high surrogate without a low one");
  CHECK(error_of("\"abc") == "line 1, column 5: a string is not closed");
  std::string error;
  auto v = json::parse("\"\xff\xfe\"", &error);  // JsonWriter writes bytes as they are
  REQUIRE(v);
  CHECK(v->text == "\xff\xfe");
}

TEST_CASE("json reader: a key twice in an object is an error") {
  CHECK(error_of("{\"steps\": [],\n \"steps\": 1}") == "line 2, column 11: key \"steps\" appears twice in an object");
}

TEST_CASE("json reader: nesting, size and the number of values are capped") {
  json::Limits limits;
  limits.max_depth = 3;
  CHECK(error_of("[[[[1]]]]", limits) == "line 1, column 4: nests deeper than 3 levels");
  std::string error;
  CHECK(json::parse("[[[1]]]", &error, limits));
  limits = {};
  limits.max_values = 3;
  CHECK(error_of("[1, 2, 3]", limits) == "line 1, column 8: more than 3 values");
  limits = {};
  limits.max_bytes = 4;
  CHECK(error_of("[1, 2]", limits) == "6 bytes is more than 4 bytes");
  std::string deep(100000, '[');  // recursion stops at the cap, not at the end of the stack
  CHECK(error_of(deep) == "line 1, column 65: nests deeper than 64 levels");
}

TEST_CASE("json reader: containers nested beside each other at the same depth keep their own members") {
  std::string error;
  auto v = json::parse(R"({"a":{"x":[1,{"y":2}]},"b":{"z":[[1],[2,3]],"w":[]}})", &error);
  REQUIRE_MESSAGE(v, error);
  const auto& a = *v->find("a");
  REQUIRE(a.members.size() == 1);
  const auto& x = *a.find("x");
  REQUIRE(x.items.size() == 2);
  CHECK(x.items[1].find("y")->number == 2);
  const auto& b = *v->find("b");
  REQUIRE(b.members.size() == 2);
  const auto& z = *b.find("z");
  REQUIRE(z.items.size() == 2);
  CHECK(z.items[0].items.size() == 1);
  CHECK(z.items[1].items.size() == 2);
  CHECK(z.items[1].items[1].number == 3);
  CHECK(b.find("w")->items.empty());
}

TEST_CASE("json reader: a key twice in an object of more than 16 members is refused too") {
  std::string text = "{";
  for (int i = 0; i < 20; ++i) text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  text += "\"k7\":0}";
  std::string error;
  CHECK_FALSE(json::parse(text, &error));
  CHECK(error.find("key \"k7\" appears twice in an object") != std::string::npos);
}
