#pragma once
// Move-only owners of ibv_* objects. Each release() is idempotent and returns the errno of
// the destroy verb (0 on success); destructors call it, so an exception anywhere unwinds
// every object. The executor keeps them in creation order and releases in reverse, which is
// the order the verbs require (QPs before CQs/SRQs, MRs before PDs, everything before the
// context).
#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

#include "verbs/device.h"

namespace qpo::verbs {

class Resource {
 public:
  explicit Resource(std::string name) : name_(std::move(name)) {}
  virtual ~Resource() = default;
  Resource(const Resource&) = delete;
  Resource& operator=(const Resource&) = delete;

  const std::string& name() const { return name_; }
  // False for an owner made ahead of its object that never got one (teardown skips it).
  virtual bool holds() const { return true; }
  virtual const char* destroy_verb() const = 0;
  // Destroys the object; 0 or errno. Safe to call twice.
  virtual int release() = 0;

 private:
  std::string name_;
};

class ContextResource : public Resource {
 public:
  ContextResource(std::string name, const std::string& wanted, uint8_t port)
      : Resource(name), ctx_(std::make_unique<Context>(wanted, port, name)) {}
  ~ContextResource() override { release(); }
  const char* destroy_verb() const override { return "ibv_close_device"; }
  int release() override {
    ctx_.reset();
    return 0;
  }
  Context& ctx() { return *ctx_; }

 private:
  std::unique_ptr<Context> ctx_;
};

class Pd : public Resource {
 public:
  Pd(std::string name, ibv_context* ctx);
  ~Pd() override { release(); }
  const char* destroy_verb() const override { return "ibv_dealloc_pd"; }
  int release() override;
  ibv_pd* get() const { return pd_; }

 private:
  ibv_pd* pd_ = nullptr;
};

// Owns both the registration and its page-aligned buffer. With IBV_ACCESS_HUGETLB in `access`
// the buffer is an mmap(MAP_HUGETLB) of whole huge pages; when the host has too few huge
// pages free the constructor throws VerbsError("mmap(MAP_HUGETLB)", ENOMEM) saying how many
// it needs and how to reserve them (/proc/sys/vm/nr_hugepages).
class Mr : public Resource {
 public:
  Mr(std::string name, ibv_pd* pd, size_t length, int access);
  ~Mr() override;
  const char* destroy_verb() const override { return "ibv_dereg_mr"; }
  int release() override;
  ibv_mr* get() const { return mr_; }
  uint8_t* data() const { return buf_; }
  size_t length() const { return length_; }

 private:
  ibv_mr* mr_ = nullptr;
  uint8_t* buf_ = nullptr;
  size_t length_;
  size_t mapped_ = 0;  // bytes of huge pages mapped (0: posix_memalign)
};

class CompChannel : public Resource {
 public:
  CompChannel(std::string name, ibv_context* ctx);
  ~CompChannel() override { release(); }
  const char* destroy_verb() const override { return "ibv_destroy_comp_channel"; }
  int release() override;
  ibv_comp_channel* get() const { return ch_; }

 private:
  ibv_comp_channel* ch_ = nullptr;
};

class Cq : public Resource {
 public:
  // `timestamps`: ibv_create_cq_ex with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP. Such a CQ is
  // polled with ibv_poll_cq (ibv_cq_ex_to_cq) like any other, except by a latency run on the
  // device's clock, which reads each completion's timestamp through ibv_start_poll.
  Cq(std::string name, ibv_context* ctx, int cqe, ibv_comp_channel* channel, bool timestamps = false);
  // ibv_create_cq_ex with these wc_flags (`flags_text` names them in errors).
  struct Extended {
    uint64_t wc_flags;
    const char* flags_text;
  };
  Cq(std::string name, ibv_context* ctx, int cqe, ibv_comp_channel* channel, Extended ex);
  ~Cq() override { release(); }
  const char* destroy_verb() const override { return "ibv_destroy_cq"; }
  int release() override;
  ibv_cq* get() const { return cq_; }
  // The extended CQ of a `timestamps` CQ; null for the others.
  ibv_cq_ex* extended() const { return ex_; }

 private:
  ibv_cq* cq_ = nullptr;
  ibv_cq_ex* ex_ = nullptr;
};

class Srq : public Resource {
 public:
  Srq(std::string name, ibv_pd* pd, uint32_t max_wr, uint32_t max_sge);
  ~Srq() override { release(); }
  const char* destroy_verb() const override { return "ibv_destroy_srq"; }
  int release() override;
  ibv_srq* get() const { return srq_; }
  // ibv_modify_srq(IBV_SRQ_LIMIT): arms IBV_EVENT_SRQ_LIMIT_REACHED (0 disarms). 0 or the errno.
  int set_limit(uint32_t limit);

 private:
  ibv_srq* srq_ = nullptr;
};

class Xrcd : public Resource {
 public:
  Xrcd(std::string name, ibv_context* ctx);
  ~Xrcd() override { release(); }
  const char* destroy_verb() const override { return "ibv_close_xrcd"; }
  int release() override;
  ibv_xrcd* get() const { return xrcd_; }

 private:
  ibv_xrcd* xrcd_ = nullptr;
};

class Qp : public Resource {
 public:
  // RC, UC and UD: ibv_create_qp_ex with send ops, for the extended post API (ibv_wr_*, what
  // perftest posts with), or plain ibv_create_qp where the provider has no such thing.
  // RAW_PACKET: ibv_create_qp. XRC: ibv_create_qp_ex (needs ctx, xrcd). `init` is updated with
  // what the device granted.
  Qp(std::string name, ibv_context* ctx, ibv_pd* pd, ibv_xrcd* xrcd, ibv_qp_init_attr& init);
  // An owner with no QP yet, made before a timed window so that the window holds only the
  // verb (create below). Until then it holds() nothing and release() does nothing.
  explicit Qp(std::string name) : Resource(std::move(name)) {}
  ~Qp() override { release(); }
  // The verb of the constructor above, without throwing: 0, or the errno (once per owner).
  int create(ibv_context* ctx, ibv_pd* pd, ibv_xrcd* xrcd, ibv_qp_init_attr& init);
  bool holds() const override { return qp_ != nullptr; }
  const char* destroy_verb() const override { return "ibv_destroy_qp"; }
  int release() override;
  ibv_qp* get() const { return qp_; }
  // The ibv_wr_* handle when the QP was created with send ops, else null (ibv_post_send only).
  ibv_qp_ex* extended() const { return ex_; }

 private:
  ibv_qp* qp_ = nullptr;
  ibv_qp_ex* ex_ = nullptr;
};

class Ah : public Resource {
 public:
  Ah(std::string name, ibv_pd* pd, ibv_ah_attr& attr);
  ~Ah() override { release(); }
  const char* destroy_verb() const override { return "ibv_destroy_ah"; }
  int release() override;
  ibv_ah* get() const { return ah_; }

 private:
  ibv_ah* ah_ = nullptr;
};

}  // namespace qpo::verbs
