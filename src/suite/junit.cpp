#include <cstdio>

#include "suite/suite.h"

namespace qpo::suite {

namespace {
std::string xml_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even escaped; drop them.
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') continue;
        out += static_cast<char>(c);
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
    if (c.outcome == "pass") {
      out += "/>\n";
      continue;
    }
    out += ">\n";
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
