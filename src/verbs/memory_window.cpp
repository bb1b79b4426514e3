#include "verbs/memory_window.h"

#include <cerrno>

#include "verbs/verbs_error.h"

namespace qpo::verbs {

Mw::Mw(std::string name, ibv_pd* pd, int type) : Resource(std::move(name)), type_(type) {
  errno = 0;
  mw_ = ibv_alloc_mw(pd, type == 1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
  if (!mw_)
    throw VerbsError("ibv_alloc_mw", this->name(), errno ? errno : EOPNOTSUPP, type == 1 ? "IBV_MW_TYPE_1" : "IBV_MW_TYPE_2");
}

int Mw::release() {
  if (!mw_) return 0;
  int e = verb_errno(ibv_dealloc_mw(mw_));
  if (e == 0) mw_ = nullptr;
  return e;
}

namespace {
ibv_mw_bind_info info_of(const WindowBind& b) {
  ibv_mw_bind_info i{};
  i.mr = b.mr;
  i.addr = b.addr;
  i.length = b.length;
  i.mw_access_flags = b.access;
  return i;
}
}  // namespace

int bind_type1(ibv_qp* qp, Mw& mw, const WindowBind& b, uint64_t wr_id, uint32_t* rkey) {
  if (!b.mr) return EINVAL;  // never reaches librxe, which would dereference it (unbind_type1)
  ibv_mw_bind bind{};
  bind.wr_id = wr_id;
  bind.send_flags = IBV_SEND_SIGNALED;
  bind.bind_info = info_of(b);
  errno = 0;
  int e = verb_errno(ibv_bind_mw(qp, mw.get(), &bind));
  if (e == 0 && rkey) *rkey = mw.get()->rkey;
  return e;
}

int unbind_type1(ibv_qp* qp, Mw& mw, ibv_mr* mr, uint64_t wr_id, uint32_t* rkey) {
  return bind_type1(qp, mw, WindowBind{mr, 0, 0, 0}, wr_id, rkey);
}

int post_bind_type2(ibv_qp* qp, Mw& mw, const WindowBind& b, uint32_t new_rkey, uint64_t wr_id) {
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.bind_mw.mw = mw.get();
  wr.bind_mw.rkey = new_rkey;
  wr.bind_mw.bind_info = info_of(b);
  errno = 0;
  int e = verb_errno(ibv_post_send(qp, &wr, &bad));
  if (e == 0) mw.get()->rkey = new_rkey;
  return e;
}

int post_local_invalidate(ibv_qp* qp, uint32_t rkey, uint64_t wr_id) {
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.opcode = IBV_WR_LOCAL_INV;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.invalidate_rkey = rkey;
  errno = 0;
  return verb_errno(ibv_post_send(qp, &wr, &bad));
}

uint32_t next_rkey(uint32_t rkey) { return ibv_inc_rkey(rkey); }

}  // namespace qpo::verbs
