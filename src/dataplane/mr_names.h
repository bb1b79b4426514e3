#pragma once
// The MRs an endpoint names: a table shared by every endpoint that sees the same MRs (its PD's,
// the exchange's), plus the few of its own (its slot buffer, an external peer's buffer). Shared
// because each of 10,000 QPs holding its own copy of 10,000 MR names is 10^8 entries: the lab
// guest ran out of memory that way.
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace qpo::dataplane {

template <typename Mr>
class MrNames {
 public:
  using Table = std::map<std::string, Mr>;

  MrNames() = default;
  explicit MrNames(std::shared_ptr<const Table> shared) : shared_(std::move(shared)) {}

  // An MR of this endpoint alone; it hides a shared one of the same name.
  void add(const std::string& name, Mr mr) { own_.insert_or_assign(name, std::move(mr)); }

  // This endpoint's own entry for `name`, to change: copied from the shared one the first time
  // (as std::map's operator[], a new default one when there is none).
  Mr& operator[](const std::string& name) {
    if (auto it = own_.find(name); it != own_.end()) return it->second;
    const Mr* shared = find(name);
    return own_.emplace(name, shared ? *shared : Mr{}).first->second;
  }

  size_t count(const std::string& name) const { return find(name) ? 1 : 0; }

  const Mr* find(const std::string& name) const {
    if (auto it = own_.find(name); it != own_.end()) return &it->second;
    if (shared_)
      if (auto it = shared_->find(name); it != shared_->end()) return &it->second;
    return nullptr;
  }

  bool empty() const { return own_.empty() && (!shared_ || shared_->empty()); }

  // Each name with its MR, in name order (an own MR in place of a shared one of its name).
  template <typename F>
  void for_each(F&& f) const {
    auto o = own_.begin();
    if (shared_)
      for (const auto& [name, mr] : *shared_) {
        for (; o != own_.end() && o->first < name; ++o) f(o->first, o->second);
        if (o != own_.end() && o->first == name) {
          f(o->first, o->second);
          ++o;
        } else {
          f(name, mr);
        }
      }
    for (; o != own_.end(); ++o) f(o->first, o->second);
  }

  // The MR `name` with its name as the table holds it (a string that lives as long as the
  // table: a Lua Buffer keeps it); {nullptr, nullptr} when there is none.
  std::pair<const std::string*, const Mr*> entry(const std::string& name) const {
    if (auto it = own_.find(name); it != own_.end()) return {&it->first, &it->second};
    if (shared_)
      if (auto it = shared_->find(name); it != shared_->end()) return {&it->first, &it->second};
    return {nullptr, nullptr};
  }

  // The first by name (the default MR); {nullptr, nullptr} when there is none.
  std::pair<const std::string*, const Mr*> first() const {
    const auto* s = shared_ && !shared_->empty() ? &*shared_->begin() : nullptr;
    const auto* o = own_.empty() ? nullptr : &*own_.begin();
    if (o && (!s || o->first <= s->first)) return {&o->first, &o->second};
    if (s) return {&s->first, &s->second};
    return {nullptr, nullptr};
  }

 private:
  std::shared_ptr<const Table> shared_;
  Table own_;
};

}  // namespace qpo::dataplane
