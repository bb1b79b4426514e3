#pragma once
// A list that copies share until one of them changes it (copy on write). The members of a
// counted QP group hold their template's transitions this way, and plan steps with the same
// arguments hold one argument list: 10,000 counted QPs cost one list each, not 10,000.
//
// Reading never copies. Changing goes through edit() (or push_back), which first makes the
// list this holder's own: a copy when another holder shares it. So a change is never seen
// through another holder, and the compiler finds every place that changes a list.
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

namespace qpo::util {

template <typename T>
class SharedList {
 public:
  using value_type = T;
  using const_iterator = typename std::vector<T>::const_iterator;
  using const_reverse_iterator = typename std::vector<T>::const_reverse_iterator;

  SharedList() = default;
  SharedList(std::initializer_list<T> items) : list_(std::make_shared<std::vector<T>>(items)) {}
  explicit SharedList(std::vector<T> items) : list_(std::make_shared<std::vector<T>>(std::move(items))) {}

  size_t size() const { return list_ ? list_->size() : 0; }
  bool empty() const { return size() == 0; }
  const T& operator[](size_t i) const { return (*list_)[i]; }
  const T& at(size_t i) const { return items().at(i); }
  const T& front() const { return list_->front(); }
  const T& back() const { return list_->back(); }
  const_iterator begin() const { return items().begin(); }
  const_iterator end() const { return items().end(); }
  const_reverse_iterator rbegin() const { return items().rbegin(); }
  const_reverse_iterator rend() const { return items().rend(); }
  const std::vector<T>& items() const { return list_ ? *list_ : empty_list(); }

  // The list to change, this holder's own (copied first if another holder shares it).
  std::vector<T>& edit() {
    if (!list_) list_ = std::make_shared<std::vector<T>>();
    else if (list_.use_count() > 1) list_ = std::make_shared<std::vector<T>>(*list_);
    return *list_;
  }
  void push_back(T item) { edit().push_back(std::move(item)); }

  // Whether two holders share one list (the same object, not merely equal items).
  bool shares_with(const SharedList& other) const { return list_ && list_ == other.list_; }
  // Identifies the shared list (nullptr when empty): a key for work done once per list.
  const void* identity() const { return list_.get(); }

 private:
  static const std::vector<T>& empty_list() {
    static const std::vector<T> none;
    return none;
  }
  std::shared_ptr<std::vector<T>> list_;
};

}  // namespace qpo::util
