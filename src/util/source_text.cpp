#include "util/source_text.h"

namespace qpo::util {

SourceText::SourceText(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::string_view SourceText::line(int one_based) const {
  if (one_based < 1 || one_based > line_count()) return {};
  size_t start = line_starts_[static_cast<size_t>(one_based - 1)];
  size_t end = text_.find('\n', start);
  if (end == std::string::npos) end = text_.size();
  std::string_view l(text_.data() + start, end - start);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

}  // namespace qpo::util
