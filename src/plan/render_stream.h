#pragma once
// `qpo plan`'s text written out as it is rendered: a 10,000-QP plan is 25 MB of text, not
// worth holding (and growing) as one string. The same text as plan::render_text.
#include <iosfwd>

#include "plan/plan.h"

namespace qpo::plan {

void render_text(std::ostream& os, const Plan& p);

}  // namespace qpo::plan
