#pragma once
// Argument lists that plan steps share. The members of a counted group make the same calls
// with the same arguments (only the object's name differs), so their steps hold one list:
// 10,000 counted QPs plan 30,000 modify steps over three lists.
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "plan/plan.h"

namespace qpo::plan {

class ArgLists {
 public:
  // Transition `index` of q's transitions as modify arguments; built once per shared list.
  const util::SharedList<Arg>& modify(const scenario::Qp& q, size_t index);
  // Transition `index` of q's transitions lowered (plan/modify_plan.h): its index in the
  // list this was given (set_modifies), made once per shared transition list.
  uint32_t lowered_modify(const scenario::Qp& q, size_t index);
  void set_modifies(std::vector<ModifyPlan>* modifies) { modifies_ = modifies; }
  // A list equal to `args`: an earlier one when there is one, else `args` itself.
  util::SharedList<Arg> intern(std::vector<Arg> args);

 private:
  struct TransitionKey {
    const void* list;
    size_t index;
    bool operator==(const TransitionKey&) const = default;
  };
  struct TransitionKeyHash {
    size_t operator()(const TransitionKey& k) const { return std::hash<const void*>()(k.list) * 31 + k.index; }
  };
  std::unordered_map<TransitionKey, util::SharedList<Arg>, TransitionKeyHash> modify_;
  std::unordered_map<size_t, std::vector<util::SharedList<Arg>>> interned_;  // by hash of the items
  std::unordered_map<TransitionKey, uint32_t, TransitionKeyHash> lowered_;
  std::vector<ModifyPlan>* modifies_ = nullptr;  // the plan's
};

}  // namespace qpo::plan
