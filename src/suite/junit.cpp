#include <cstdint>
#include <cstdio>

#include "suite/suite.h"

namespace qpo::suite {

namespace {
// The length of the well-formed UTF-8 sequence at s[i] whose code point XML 1.0 allows as a
// Char, else 0 (a stray byte, overlong form, surrogate, > U+10FFFF, U+FFFE/U+FFFF).
size_t xml_char_length(const std::string& s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (len == 0 || c > 0xF4 || i + len > s.size()) return 0;
  uint32_t cp = c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
  return len;
}

// Scenario output is arbitrary bytes (a hostile file's name or text ends up in the diagnostics),
// and the file is declared UTF-8: every byte that is not part of an allowed character becomes
// U+FFFD, so the document stays well-formed XML.
std::string xml_escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even escaped; drop them.
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') continue;
        if (c < 0x80) {
          out += static_cast<char>(c);
        } else if (size_t len = xml_char_length(s, i)) {
          out.append(s, i, len);
          i += len - 1;
        } else {
          out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        }
    }
  }
  return out;
}
}  // namespace

std::string junit_xml(const std::vector<Case>& cases, const std::string& suite_name) {
  int failures = 0, errors = 0, skipped = 0;
  double total = 0;
  for (const auto& c : cases) {
    failures += c.outcome == "fail";
    errors += c.outcome == "error";
    skipped += c.outcome == "skip";
    total += c.seconds;
  }
  char head[512];
  std::snprintf(head, sizeof head,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"%s\" tests=\"%zu\" "
                "failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                xml_escape(suite_name).c_str(), cases.size(), failures, errors, skipped, total);
  std::string out = head;
  for (const auto& c : cases) {
    char line[128];
    std::snprintf(line, sizeof line, "\" time=\"%.3f\"", c.seconds);
    out += "    <testcase classname=\"" + xml_escape(c.file) + "\" name=\"" + xml_escape(c.name) + line;
    if (c.outcome == "pass" && c.properties.empty()) {
      out += "/>\n";
      continue;
    }
    out += ">\n";
    if (!c.properties.empty()) {
      out += "      <properties>\n";
      for (const auto& [name, value] : c.properties)
        out += "        <property name=\"" + xml_escape(name) + "\" value=\"" + xml_escape(value) + "\"/>\n";
      out += "      </properties>\n";
    }
    if (c.outcome == "pass") {
      out += "    </testcase>\n";
      continue;
    }
    if (c.outcome == "skip") out += "      <skipped message=\"" + xml_escape(c.reason) + "\"/>\n";
    else if (c.outcome == "fail")
      out += "      <failure message=\"" + xml_escape(c.reason) + "\">" + xml_escape(c.output) + "</failure>\n";
    else out += "      <error message=\"" + xml_escape(c.reason) + "\">" + xml_escape(c.output) + "</error>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace qpo::suite
