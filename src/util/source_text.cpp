#include "util/source_text.h"

#include <mutex>
#include <set>

namespace qpo::util {

namespace {
const std::string kNoFile;
}  // namespace

FileName::FileName(std::string_view name) {
  if (name.empty()) return;
  // Never freed: the names live as long as the locations that point at them may.
  static std::mutex m;
  static auto* names = new std::set<std::string, std::less<>>();
  std::lock_guard lock(m);
  auto it = names->find(name);
  if (it == names->end()) it = names->emplace(name).first;
  name_ = &*it;
}

const std::string& FileName::str() const { return name_ ? *name_ : kNoFile; }

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
