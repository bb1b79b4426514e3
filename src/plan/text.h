#pragma once
// Text a plan step holds by reference: a string literal, a name from a table that lives as
// long as the process (spec::state_name), or text interned once for the process (errno and
// event names, predictions). 16 bytes where a std::string is 32, and copying one never
// allocates: a plan of 100,000 QPs has a million steps, each naming its verb (and a modify its
// states and prediction), out of a few dozen distinct words.
//
// It reads as a std::string_view (==, empty(), rfind(), printing) and converts to std::string
// where one is wanted ("(" + step.verb + ")", a std::string parameter). It is made only from a
// literal, from static text named as such, or by intern(): never from a string that may die.
#include <cstddef>
#include <string>
#include <string_view>

namespace qpo::plan {

class Text : public std::string_view {
 public:
  constexpr Text() = default;
  // A string literal. Meant for literals only; not consteval, which would enforce it, because
  // clang 14 (Debian 12's, the sanitizer build) crashes in codegen on consteval constructors
  // of temporaries.
  template <size_t N>
  constexpr Text(const char (&literal)[N]) : std::string_view(literal) {}  // NOLINT: implicit, as a literal reads
  // Text that outlives every plan: a table's entry.
  static Text of_static(const char* text) { return Text(std::string_view(text)); }
  // A copy kept for the process, one per distinct text (thread-safe).
  static Text intern(std::string_view text);

  operator std::string() const { return std::string(data(), size()); }  // NOLINT: implicit, as a std::string converts
  std::string str() const { return std::string(data(), size()); }

  friend std::string operator+(const Text& a, const Text& b) { return join(a, b); }
  friend std::string operator+(const Text& a, const char* b) { return join(a, b); }
  friend std::string operator+(const Text& a, const std::string& b) { return join(a, b); }
  friend std::string operator+(const char* a, const Text& b) { return join(a, b); }
  friend std::string operator+(const std::string& a, const Text& b) { return join(a, b); }
  friend std::string operator+(std::string&& a, const Text& b) { return std::move(a.append(b)); }

 private:
  explicit constexpr Text(std::string_view text) : std::string_view(text) {}
  static std::string join(std::string_view a, std::string_view b) {
    std::string out;
    out.reserve(a.size() + b.size());
    out.append(a).append(b);
    return out;
  }
};

}  // namespace qpo::plan
