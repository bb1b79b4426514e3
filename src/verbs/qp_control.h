#pragma once
// The control verbs qpo calls on a live QP or device outside the RAII owners (resources.h):
// modify, query, and the extended device query. Only src/verbs calls them; each returns 0
// or a positive errno (verb_errno: rdma-core returns a positive errno, or -1 with errno set),
// so no caller interprets a raw return. The data path (post, poll, req_notify_cq) stays inline
// where it runs. tests/layering/control_verbs.cmake holds the other libraries to this.
#include <infiniband/verbs.h>

#include <string>

#include "spec/rules.h"

namespace qpo::verbs {

// ibv_modify_qp with exactly `mask`.
int modify_qp(ibv_qp* qp, ibv_qp_attr& attr, int mask);

// ibv_modify_qp; on failure throws VerbsError("ibv_modify_qp", object, errno, detail).
void modify_qp_or_throw(ibv_qp* qp, ibv_qp_attr& attr, int mask, const std::string& object,
                        const std::string& detail);

// ibv_query_qp for the attributes in `mask` (the caller includes IBV_QP_STATE when it wants
// the state). `attr` is not cleared first: ibv_query_qp writes all of it, and the check after
// every modify runs this for thousands of QPs.
int query_qp(ibv_qp* qp, ibv_qp_attr& attr, int mask);

// The QP's current state (ibv_query_qp with IBV_QP_STATE) into *state; 0 or the errno.
int query_state(ibv_qp* qp, ibv_qp_state* state);

// ibv_query_device_ex without input options.
int query_device_ex(ibv_context* ctx, ibv_device_attr_ex& ex);

// A transition with its attribute mask in words, the detail of an ibv_modify_qp's
// call_text (verbs_error.h): "INIT->RTR mask=0x1 (IBV_QP_STATE)".
std::string transition_text(spec::QpState from, spec::QpState to, spec::Mask mask);

}  // namespace qpo::verbs
