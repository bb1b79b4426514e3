#include "plan/arg_lists.h"

#include <functional>
#include <string>

namespace qpo::plan {

namespace {

constexpr const char* kBringUpPsn = "the random 24-bit PSN drawn at bring-up, kept for the run (the peer's rq_psn: peer holds it)";

size_t hash_of(const std::vector<Arg>& args) {
  size_t h = args.size();
  std::hash<std::string> text;
  for (const auto& a : args)
    h = h * 1000003u ^ (text(a.name) * 31 + text(a.value) * 7 + text(a.note) + (a.runtime ? 2u : 0u) + (a.from_default ? 1u : 0u));
  return h;
}

}  // namespace

const util::SharedList<Arg>& ArgLists::modify(const scenario::Qp& q, size_t index) {
  TransitionKey key{q.transitions.identity(), index};
  auto it = modify_.find(key);
  if (it != modify_.end()) return it->second;
  const auto& t = q.transitions[index];
  std::vector<Arg> args;
  args.push_back(Arg{"qp_state", std::string("IBV_QPS_") + spec::state_name(t.to), false, false, ""});
  for (const auto& a : t.attrs)
    for (auto& d : describe_attr_tree(a)) {
      // exec draws a QP's sq_psn once, at bring-up, and keeps it for the run (run_state.h):
      // the peer's rq_psn: peer holds that value, so a later `random` is not drawn afresh.
      if (!t.bring_up && a.field == "sq_psn" && a.symbol == scenario::Symbol::Random) d.note = kBringUpPsn;
      args.push_back(std::move(d));
    }
  return modify_.emplace(key, intern(std::move(args))).first->second;
}

uint32_t ArgLists::lowered_modify(const scenario::Qp& q, size_t index) {
  TransitionKey key{q.transitions.identity(), index};
  auto it = lowered_.find(key);
  if (it != lowered_.end()) return it->second;
  auto id = static_cast<uint32_t>(modifies_->size());
  modifies_->push_back(lower_modify(q.transitions[index]));
  return lowered_.emplace(key, id).first->second;
}

util::SharedList<Arg> ArgLists::intern(std::vector<Arg> args) {
  auto& bucket = interned_[hash_of(args)];
  for (const auto& list : bucket)
    if (list.items() == args) return list;
  bucket.emplace_back(std::move(args));
  return bucket.back();
}

}  // namespace qpo::plan
