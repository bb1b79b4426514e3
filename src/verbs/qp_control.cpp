#include "verbs/qp_control.h"

#include "util/strings.h"
#include "verbs/verbs_error.h"

namespace qpo::verbs {

int modify_qp(ibv_qp* qp, ibv_qp_attr& attr, int mask) { return verb_errno(ibv_modify_qp(qp, &attr, mask)); }

void modify_qp_or_throw(ibv_qp* qp, ibv_qp_attr& attr, int mask, const std::string& object,
                        const std::string& detail) {
  if (int e = modify_qp(qp, attr, mask)) throw VerbsError("ibv_modify_qp", object, e, detail);
}

int query_qp(ibv_qp* qp, ibv_qp_attr& attr, int mask) {
  ibv_qp_init_attr init;  // written by the verb, not read: the caller asked for attributes only
  return verb_errno(ibv_query_qp(qp, &attr, mask, &init));
}

int query_state(ibv_qp* qp, ibv_qp_state* state) {
  ibv_qp_attr attr{};
  int e = query_qp(qp, attr, IBV_QP_STATE);
  if (e == 0) *state = attr.qp_state;
  return e;
}

int query_device_ex(ibv_context* ctx, ibv_device_attr_ex& ex) {
  return verb_errno(ibv_query_device_ex(ctx, nullptr, &ex));
}

std::string transition_text(spec::QpState from, spec::QpState to, spec::Mask mask) {
  return std::string(spec::state_name(from)) + "->" + spec::state_name(to) + " mask=" + util::hex(mask) + " (" +
         spec::RuleTable::builtin().mask_names(mask, "|") + ")";
}

}  // namespace qpo::verbs
