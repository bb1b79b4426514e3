#pragma once
// A command template, as a host's `launcher:` writes it ("srun -w {host} -N1 {command}"):
// words split at blanks, '...' and "..." group blanks into a word (the quotes are removed; no
// other shell syntax: no $, no globs, no escapes, nothing runs through a shell), and {name}
// placeholders inside words ({{ and }} are literal braces). A word that is exactly one
// placeholder whose value has several words becomes those words; inside a longer word the
// value's words are joined with single spaces.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace qpo::util {

struct CommandTemplate {
  std::vector<std::string> words;
  std::vector<std::string> placeholders;  // every {name} used, in order, once each
};

// nullopt with `error` ("unclosed ' quote", "'{' without '}'", "no command") when it cannot be one.
std::optional<CommandTemplate> parse_command_template(const std::string& text, std::string* error);

// The argv: each placeholder replaced by its value (a list of words). A placeholder without a
// value stays as written.
std::vector<std::string> expand_command_template(const CommandTemplate& t,
                                                 const std::map<std::string, std::vector<std::string>>& values);

}  // namespace qpo::util
