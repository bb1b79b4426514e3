#pragma once
// A host's records of one kind of object, by the plan's dense ids (RunState::qps: by QP id,
// plan/qp_id.h): a slot per object of the plan, a record for each one made on this host. A
// record keeps its address for the whole run (the bring-up threads, the CQ router and the
// workloads hold pointers to it), so records live in a deque and one whose create failed is
// only unlisted.
#include <cstddef>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "plan/qp_id.h"

namespace qpo::exec {

template <typename Record>
class IdTable {
 public:
  // Slots for the plan's ids [0, n), all empty.
  void size_for(size_t n) { slot_.assign(n, kEmpty); }
  // The record of `id` (replacing one it had).
  Record& put(plan::ObjectId id, Record r) {
    if (id >= slot_.size()) throw std::out_of_range("id " + std::to_string(id) + " is not in the plan");
    if (slot_[id] != kEmpty) {
      records_[slot_[id]] = std::move(r);
      return records_[slot_[id]];
    }
    slot_[id] = static_cast<uint32_t>(records_.size());
    ids_.push_back(id);
    records_.push_back(std::move(r));
    ++live_;
    return records_.back();
  }
  Record* find(plan::ObjectId id) { return id < slot_.size() && slot_[id] != kEmpty ? &records_[slot_[id]] : nullptr; }
  const Record* find(plan::ObjectId id) const {
    return id < slot_.size() && slot_[id] != kEmpty ? &records_[slot_[id]] : nullptr;
  }
  bool has(plan::ObjectId id) const { return find(id) != nullptr; }
  Record& at(plan::ObjectId id) {
    if (auto* r = find(id)) return *r;
    throw std::out_of_range(missing(id));
  }
  const Record& at(plan::ObjectId id) const {
    if (const auto* r = find(id)) return *r;
    throw std::out_of_range(missing(id));
  }
  // Unlists `id`'s record (its memory stays until the table goes: pointers to it stay valid).
  void erase(plan::ObjectId id) {
    if (id >= slot_.size() || slot_[id] == kEmpty) return;
    ids_[slot_[id]] = plan::kNoObject;
    slot_[id] = kEmpty;
    --live_;
  }
  void clear() {
    for (auto id : ids_)
      if (id != plan::kNoObject) erase(id);
  }
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  // Records ever put: a number for the next record that no other record of the run has.
  size_t made() const { return records_.size(); }
  // Every listed record in the order made: f(id, record).
  template <typename F>
  void for_each(F&& f) {
    for (size_t i = 0; i < records_.size(); ++i)
      if (ids_[i] != plan::kNoObject) f(ids_[i], records_[i]);
  }
  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < records_.size(); ++i)
      if (ids_[i] != plan::kNoObject) f(ids_[i], records_[i]);
  }
  // The listed records in the order made, for a loop that may return early (small tables:
  // devices); for_each walks a large one without the list.
  std::vector<Record*> listed() {
    std::vector<Record*> out;
    for_each([&out](plan::ObjectId, Record& r) { out.push_back(&r); });
    return out;
  }
  std::vector<const Record*> listed() const {
    std::vector<const Record*> out;
    for_each([&out](plan::ObjectId, const Record& r) { out.push_back(&r); });
    return out;
  }
  // The first listed record, in the order made, that pred(record) accepts; nullptr if none.
  template <typename P>
  const Record* find_if(P&& pred) const {
    for (size_t i = 0; i < records_.size(); ++i)
      if (ids_[i] != plan::kNoObject && pred(records_[i])) return &records_[i];
    return nullptr;
  }

 private:
  static constexpr uint32_t kEmpty = ~0u;
  static std::string missing(plan::ObjectId id) {
    return id == plan::kNoObject ? "not an object of the plan" : "id " + std::to_string(id) + " has no record on this host";
  }
  std::vector<uint32_t> slot_;   // by id: index into records_, or kEmpty
  std::deque<Record> records_;   // in the order made
  std::vector<plan::ObjectId> ids_;  // by record: its id, kNoObject once unlisted
  size_t live_ = 0;
};

}  // namespace qpo::exec
