#include "verbs/resources.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "verbs/verbs_error.h"

namespace qpo::verbs {

namespace {
int err_or(int fallback) { return errno ? errno : fallback; }
}  // namespace

Pd::Pd(std::string name, ibv_context* ctx) : Resource(std::move(name)) {
  errno = 0;
  pd_ = ibv_alloc_pd(ctx);
  if (!pd_) throw VerbsError("ibv_alloc_pd", this->name(), err_or(ENOMEM));
}

int Pd::release() {
  if (!pd_) return 0;
  int e = verb_errno(ibv_dealloc_pd(pd_));
  if (e == 0) pd_ = nullptr;
  return e;
}

namespace {

// A number from /proc/meminfo ("Hugepagesize:" in kB, "HugePages_Free:"), or `fallback`.
uint64_t meminfo(const std::string& key, uint64_t fallback) {
  std::ifstream in("/proc/meminfo");
  std::string k;
  uint64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
    in.ignore(256, '\n');
  }
  return fallback;
}

}  // namespace

Mr::Mr(std::string name, ibv_pd* pd, size_t length, int access) : Resource(std::move(name)), length_(length) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t alloc = length == 0 ? page : (length + page - 1) / page * page;
  if (access & IBV_ACCESS_HUGETLB) {
    size_t huge = meminfo("Hugepagesize:", 2048) * 1024;
    alloc = (std::max<size_t>(length, 1) + huge - 1) / huge * huge;
    void* p = mmap(nullptr, alloc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      throw VerbsError("mmap(MAP_HUGETLB)", this->name(), e,
                       "hugetlb needs " + std::to_string(alloc / huge) + " huge page(s) of " + std::to_string(huge >> 10) +
                           " KiB; " + std::to_string(meminfo("HugePages_Free:", 0)) +
                           " free (reserve them: echo N > /proc/sys/vm/nr_hugepages)");
    }
    buf_ = static_cast<uint8_t*>(p);  // anonymous pages come zeroed
    mapped_ = alloc;
  } else {
    void* p = nullptr;
    if (posix_memalign(&p, page, alloc) != 0) throw VerbsError("posix_memalign", this->name(), ENOMEM);
    buf_ = static_cast<uint8_t*>(p);
    std::memset(buf_, 0, alloc);
  }
  errno = 0;
  mr_ = ibv_reg_mr(pd, buf_, length, access);
  if (!mr_) {
    int e = err_or(EINVAL);
    if (mapped_) munmap(buf_, mapped_);
    else std::free(buf_);
    buf_ = nullptr;
    throw VerbsError("ibv_reg_mr", this->name(), e, "length " + std::to_string(length));
  }
}

Mr::~Mr() {
  release();
  // The buffer must outlive the registration: free it only once deregistered.
  if (mr_ || !buf_) return;
  if (mapped_) munmap(buf_, mapped_);
  else std::free(buf_);
}

int Mr::release() {
  if (!mr_) return 0;
  int e = verb_errno(ibv_dereg_mr(mr_));
  if (e == 0) mr_ = nullptr;
  return e;
}

CompChannel::CompChannel(std::string name, ibv_context* ctx) : Resource(std::move(name)) {
  errno = 0;
  ch_ = ibv_create_comp_channel(ctx);
  if (!ch_) throw VerbsError("ibv_create_comp_channel", this->name(), err_or(ENOMEM));
}

int CompChannel::release() {
  if (!ch_) return 0;
  int e = verb_errno(ibv_destroy_comp_channel(ch_));
  if (e == 0) ch_ = nullptr;
  return e;
}

Cq::Cq(std::string name, ibv_context* ctx, int cqe, ibv_comp_channel* channel, bool timestamps)
    : Cq(std::move(name), ctx, cqe, channel,
         timestamps ? Extended{static_cast<uint64_t>(IBV_WC_STANDARD_FLAGS) | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
                               "IBV_WC_STANDARD_FLAGS|IBV_WC_EX_WITH_COMPLETION_TIMESTAMP"}
                    : Extended{0, ""}) {}

Cq::Cq(std::string name, ibv_context* ctx, int cqe, ibv_comp_channel* channel, Extended ex)
    : Resource(std::move(name)) {
  errno = 0;
  if (ex.wc_flags == 0) {
    cq_ = ibv_create_cq(ctx, cqe, nullptr, channel, 0);
    if (!cq_) throw VerbsError("ibv_create_cq", this->name(), err_or(ENOMEM), "cqe " + std::to_string(cqe));
    return;
  }
  ibv_cq_init_attr_ex attr{};
  attr.cqe = static_cast<uint32_t>(cqe);
  attr.channel = channel;
  attr.wc_flags = ex.wc_flags;
  ex_ = ibv_create_cq_ex(ctx, &attr);
  if (!ex_)
    throw VerbsError("ibv_create_cq_ex", this->name(), err_or(EOPNOTSUPP),
                     "cqe " + std::to_string(cqe) + ", wc_flags " + ex.flags_text);
  cq_ = ibv_cq_ex_to_cq(ex_);
}

int Cq::release() {
  if (!cq_) return 0;
  int e = verb_errno(ibv_destroy_cq(cq_));
  if (e == 0) {
    cq_ = nullptr;
    ex_ = nullptr;
  }
  return e;
}

Srq::Srq(std::string name, ibv_pd* pd, uint32_t max_wr, uint32_t max_sge) : Resource(std::move(name)) {
  ibv_srq_init_attr init{};
  init.attr.max_wr = max_wr;
  init.attr.max_sge = max_sge;
  errno = 0;
  srq_ = ibv_create_srq(pd, &init);
  if (!srq_) throw VerbsError("ibv_create_srq", this->name(), err_or(ENOMEM));
}

int Srq::set_limit(uint32_t limit) {
  ibv_srq_attr attr{};
  attr.srq_limit = limit;
  errno = 0;
  return verb_errno(ibv_modify_srq(srq_, &attr, IBV_SRQ_LIMIT));
}

int Srq::release() {
  if (!srq_) return 0;
  int e = verb_errno(ibv_destroy_srq(srq_));
  if (e == 0) srq_ = nullptr;
  return e;
}

Xrcd::Xrcd(std::string name, ibv_context* ctx) : Resource(std::move(name)) {
  ibv_xrcd_init_attr init{};
  init.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
  init.fd = -1;
  init.oflags = O_CREAT;
  errno = 0;
  xrcd_ = ibv_open_xrcd(ctx, &init);
  if (!xrcd_) throw VerbsError("ibv_open_xrcd", this->name(), err_or(EOPNOTSUPP));
}

int Xrcd::release() {
  if (!xrcd_) return 0;
  int e = verb_errno(ibv_close_xrcd(xrcd_));
  if (e == 0) xrcd_ = nullptr;
  return e;
}

Qp::Qp(std::string name, ibv_context* ctx, ibv_pd* pd, ibv_xrcd* xrcd, ibv_qp_init_attr& init)
    : Resource(std::move(name)) {
  if (int e = create(ctx, pd, xrcd, init)) throw VerbsError("ibv_create_qp", this->name(), e);
}

namespace {

// The ibv_wr_* builders each QP type can use (what rxe and mlx5 accept for it).
uint64_t send_ops_for(ibv_qp_type type) {
  uint64_t two_sided = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
  uint64_t writes = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
  switch (type) {
    case IBV_QPT_RC:
      return two_sided | writes | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
             IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
    case IBV_QPT_UC:
      return two_sided | writes;
    case IBV_QPT_UD:
      return two_sided;
    default:
      return 0;
  }
}

ibv_qp_init_attr_ex extended_attr(const ibv_qp_init_attr& init) {
  ibv_qp_init_attr_ex ex{};
  ex.qp_context = init.qp_context;
  ex.qp_type = init.qp_type;
  ex.send_cq = init.send_cq;
  ex.recv_cq = init.recv_cq;
  ex.srq = init.srq;
  ex.cap = init.cap;
  ex.sq_sig_all = init.sq_sig_all;
  return ex;
}

}  // namespace

int Qp::create(ibv_context* ctx, ibv_pd* pd, ibv_xrcd* xrcd, ibv_qp_init_attr& init) {
  if (qp_) return EEXIST;
  ibv_qp_init_attr_ex ex = extended_attr(init);
  if (init.qp_type == IBV_QPT_XRC_SEND) {
    ex.comp_mask = IBV_QP_INIT_ATTR_PD;
    ex.pd = pd;
  } else if (init.qp_type == IBV_QPT_XRC_RECV) {
    ex.comp_mask = IBV_QP_INIT_ATTR_XRCD;
    ex.xrcd = xrcd;
  } else if (uint64_t ops = send_ops_for(init.qp_type)) {
    ex.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    ex.pd = pd;
    ex.send_ops_flags = ops;
    // A provider without the extended API fails this (EOPNOTSUPP); the plain verb below is
    // then the one whose answer counts.
    if ((qp_ = ibv_create_qp_ex(ctx, &ex))) {
      init.cap = ex.cap;
      ex_ = ibv_qp_to_qp_ex(qp_);
      return 0;
    }
    ex.comp_mask = 0;
  }
  errno = 0;
  if (ex.comp_mask) {
    qp_ = ibv_create_qp_ex(ctx, &ex);
    if (qp_) init.cap = ex.cap;
  } else {
    qp_ = ibv_create_qp(pd, &init);
  }
  return qp_ ? 0 : err_or(EINVAL);
}

int Qp::release() {
  if (!qp_) return 0;
  int e = verb_errno(ibv_destroy_qp(qp_));
  if (e == 0) {
    qp_ = nullptr;
    ex_ = nullptr;
  }
  return e;
}

Ah::Ah(std::string name, ibv_pd* pd, ibv_ah_attr& attr) : Resource(std::move(name)) {
  errno = 0;
  ah_ = ibv_create_ah(pd, &attr);
  if (!ah_) throw VerbsError("ibv_create_ah", this->name(), err_or(EINVAL));
}

int Ah::release() {
  if (!ah_) return 0;
  int e = verb_errno(ibv_destroy_ah(ah_));
  if (e == 0) ah_ = nullptr;
  return e;
}

}  // namespace qpo::verbs
