#pragma once
// A few QPs on one device, connected by hand with raw verbs, filling Endpoints the way the
// executor will: for tests and benches of the data path and the Lua layer without a scenario.
// Objects are made in the current side: one device context and one PD. By default there is one
// side; new_side() opens another context on the same device, as a second process or host
// would have (perftest's two sides are two processes). Every MR is registered with local/remote
// write, remote read and atomic access, is local to the QPs of its side and remote to all.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/endpoint.h"

namespace qpo::verbs {
class Context;
class Resource;
}  // namespace qpo::verbs

namespace qpo::dataplane {

struct TestbedQp {
  std::string type = "RC";            // RC, UC, UD
  std::string send_cq, recv_cq;       // names given to add_cq
  std::string srq;                    // optional
  uint32_t max_send_wr = 512, max_recv_wr = 512, max_inline = 256;
};

class Testbed {
 public:
  // gid_index < 0: Context::auto_gid_index() (perftest -x style).
  explicit Testbed(const std::string& device = "rxe0", int gid_index = -1);
  ~Testbed();
  Testbed(const Testbed&) = delete;
  Testbed& operator=(const Testbed&) = delete;

  // Opens another device context and PD; later add_* calls make their objects there.
  void new_side();

  void add_mr(const std::string& name, size_t size);
  // extended: ibv_create_cq_ex with IBV_WC_STANDARD_FLAGS (extended_cq() returns it).
  void add_cq(const std::string& name, int depth, bool channel = false, bool extended = false);
  ibv_cq_ex* extended_cq(const std::string& name) const { return cq_exs_.at(name); }
  void add_srq(const std::string& name, uint32_t max_wr);
  void add_qp(const std::string& name, const TestbedQp& q);
  // QPs added after this post with ibv_post_send even where the extended API is there
  // (perftest --use_old_post_send).
  void use_old_post_send(bool on) { old_post_send_ = on; }
  // RC/UC: both QPs to RTS, each other's dest. UD: both to RTS, an AH each way. A QP connected
  // twice keeps the latest peer (a UD receiver in a fan-in).
  void connect(const std::string& a, const std::string& b);

  // Endpoints by QP name; an MR is local to the QPs of its side and remote to every QP.
  std::map<std::string, Endpoint>& endpoints() { return eps_; }
  Endpoint& operator[](const std::string& qp) { return eps_.at(qp); }
  const std::string& device_name() const;
  int gid_index() const { return gid_index_; }

 private:
  struct Side {
    std::unique_ptr<verbs::Context> ctx;
    ibv_pd* pd = nullptr;
  };
  struct NamedMr {
    LocalMr mr;
    size_t side = 0;
  };
  void to_rts(const std::string& name, uint32_t dest_qpn, uint32_t psn, uint32_t dest_psn);
  const verbs::Context& ctx() const { return *sides_.front().ctx; }  // every side: the same device and port
  ibv_context* current_ctx() const;
  ibv_pd* current_pd() const { return sides_.back().pd; }
  size_t current_side() const { return sides_.size() - 1; }
  std::string device_;
  // Declared before owned_: the contexts close after every object made in them.
  std::vector<Side> sides_;
  std::vector<std::unique_ptr<verbs::Resource>> owned_;  // creation order; destroyed in reverse
  int gid_index_ = 0;
  bool old_post_send_ = false;
  std::map<std::string, size_t> qp_side_;
  std::map<std::string, ibv_cq*> cqs_;
  std::map<std::string, ibv_cq_ex*> cq_exs_;
  std::map<std::string, ibv_comp_channel*> channels_;
  std::map<std::string, ibv_srq*> srqs_;
  std::map<std::string, NamedMr> mrs_;
  std::map<std::string, Endpoint> eps_;
};

}  // namespace qpo::dataplane
