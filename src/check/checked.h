#pragma once
// The model the planner and the executor consume: a copy of the loaded scenario, elaborated by
// the validator (each transition's from-state, mask, verdict and the defaults it needs; a
// recovery path's inherited attributes). Only validate() makes one (from a copy, or from a
// scenario handed over with std::move), and it is immutable: what runs is what was checked.
#include "scenario/model.h"

namespace qpo::diag {
class DiagSink;
}

namespace qpo::check {

class Checked {
 public:
  const scenario::Scenario& model() const { return model_; }

 private:
  friend Checked validate(scenario::Scenario&& s, diag::DiagSink& sink);
  explicit Checked(scenario::Scenario s) : model_(std::move(s)) {}
  scenario::Scenario model_;
};

}  // namespace qpo::check
