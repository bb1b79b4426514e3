#include "exec/script_receives.h"

#include "exec/steps.h"

namespace qpo::exec {

void post_srq_receives(RunState& st, const std::string& srq, uint32_t count) {
  const auto& ss = st.srqs.at(srq);
  for (uint32_t slot = 0; slot < count && slot < ss.slot_count; ++slot) post_srq_slot(st, srq, slot);
}

}  // namespace qpo::exec
