#include "plan/text.h"

#include <mutex>
#include <unordered_set>

namespace qpo::plan {

Text Text::intern(std::string_view text) {
  if (text.empty()) return Text();
  static std::mutex mutex;
  // Never freed: a Text may be read until the process ends. A node set keeps each string
  // (its characters too, short ones live in the node) where it was put.
  static auto* pool = new std::unordered_set<std::string>();
  std::lock_guard lock(mutex);
  return Text(std::string_view(*pool->emplace(text).first));
}

}  // namespace qpo::plan
