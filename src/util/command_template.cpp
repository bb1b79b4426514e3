#include "util/command_template.h"

#include <algorithm>

namespace qpo::util {

namespace {

// Walks `word`'s literal text and placeholders; `on_text(literal)`, `on_name(name)`.
template <typename Text, typename Name>
bool walk(const std::string& word, std::string* error, Text on_text, Name on_name) {
  for (size_t i = 0; i < word.size();) {
    char c = word[i];
    if ((c == '{' || c == '}') && i + 1 < word.size() && word[i + 1] == c) {
      on_text(std::string(1, c));
      i += 2;
    } else if (c == '{') {
      size_t end = word.find('}', i);
      if (end == std::string::npos) {
        *error = "'{' without '}' in '" + word + "' (write {{ for a literal brace)";
        return false;
      }
      on_name(word.substr(i + 1, end - i - 1));
      i = end + 1;
    } else if (c == '}') {
      *error = "'}' without '{' in '" + word + "' (write }} for a literal brace)";
      return false;
    } else {
      on_text(std::string(1, c));
      ++i;
    }
  }
  return true;
}

}  // namespace

std::optional<CommandTemplate> parse_command_template(const std::string& text, std::string* error) {
  CommandTemplate t;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) t.words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) {
    *error = std::string("unclosed ") + quote + " quote";
    return std::nullopt;
  }
  if (in_word) t.words.push_back(word);
  if (t.words.empty()) {
    *error = "no command";
    return std::nullopt;
  }
  for (const auto& w : t.words) {
    bool ok = walk(w, error, [](const std::string&) {}, [&](const std::string& name) {
      if (std::find(t.placeholders.begin(), t.placeholders.end(), name) == t.placeholders.end())
        t.placeholders.push_back(name);
    });
    if (!ok) return std::nullopt;
  }
  return t;
}

std::vector<std::string> expand_command_template(const CommandTemplate& t,
                                                 const std::map<std::string, std::vector<std::string>>& values) {
  std::vector<std::string> argv;
  for (const auto& w : t.words) {
    // Exactly one placeholder: its words, each an argument of its own.
    if (w.size() > 2 && w.front() == '{' && w.back() == '}' && w[1] != '{' && w.find('}') == w.size() - 1) {
      auto it = values.find(w.substr(1, w.size() - 2));
      if (it != values.end()) {
        argv.insert(argv.end(), it->second.begin(), it->second.end());
        continue;
      }
    }
    std::string out, ignored;
    walk(w, &ignored, [&](const std::string& s) { out += s; }, [&](const std::string& name) {
      auto it = values.find(name);
      if (it == values.end()) {
        out += "{" + name + "}";
        return;
      }
      for (size_t i = 0; i < it->second.size(); ++i) out += (i ? " " : "") + it->second[i];
    });
    argv.push_back(out);
  }
  return argv;
}

}  // namespace qpo::util
