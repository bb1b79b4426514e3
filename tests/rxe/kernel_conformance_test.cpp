// Runs inside the Soft-RoCE lab: for RC, UC and UD, drives fresh QPs into each reachable
// state and calls ibv_modify_qp with masks chosen from the rule tables (the minimal valid
// mask, each required bit removed, each forbidden bit added, every allowed bit), then checks
// the real kernel answers exactly as schemas/verbs-rules.yaml predicts.
#include <doctest/doctest.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "spec/providers.h"
#include "spec/rules.h"
#include "verbs/device.h"
#include "verbs/resources.h"

namespace {

using qpo::spec::Mask;
using qpo::spec::QpState;
const qpo::spec::RuleTable& rules() { return qpo::spec::RuleTable::builtin(); }

struct Lab {
  qpo::verbs::Context ctx{"rxe0", 1, "conformance"};
  qpo::verbs::Pd pd{"pd", ctx.get()};
  qpo::verbs::Cq cq{"cq", ctx.get(), 64, nullptr};
  int gid_index = ctx.auto_gid_index();
};

// Valid values for every attribute bit, so only the mask decides the outcome.
ibv_qp_attr attrs_for(const Lab& lab, ibv_qp* qp, QpState cur, QpState next) {
  ibv_qp_attr a{};
  a.qp_state = static_cast<ibv_qp_state>(next);
  a.cur_qp_state = static_cast<ibv_qp_state>(cur);
  a.pkey_index = 0;
  a.port_num = 1;
  a.qkey = 0x11111111;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  a.path_mtu = IBV_MTU_1024;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.min_rnr_timer = 12;
  a.max_rd_atomic = 1;
  a.max_dest_rd_atomic = 1;
  a.path_mig_state = IBV_MIG_MIGRATED;
  a.en_sqd_async_notify = 1;
  a.dest_qp_num = qp->qp_num;  // loop back to itself: a valid peer as far as modify cares
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = 1;
  a.ah_attr.grh.dgid = lab.ctx.gid(lab.gid_index);
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(lab.gid_index);
  a.ah_attr.grh.hop_limit = 1;
  a.alt_ah_attr = a.ah_attr;
  a.alt_port_num = 1;
  a.alt_timeout = 14;
  a.cap.max_send_wr = 4;
  a.cap.max_recv_wr = 4;
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  return a;
}

ibv_qp_type ibv_type(const std::string& t) {
  if (t == "RC") return IBV_QPT_RC;
  if (t == "UC") return IBV_QPT_UC;
  return IBV_QPT_UD;
}

struct QpDeleter {
  void operator()(ibv_qp* qp) const { ibv_destroy_qp(qp); }
};
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;

// A fresh QP walked to `target` along the bring-up path with minimal valid masks.
QpPtr qp_in_state(Lab& lab, int type, QpState target) {
  ibv_qp_init_attr init{};
  init.qp_type = ibv_type(rules().types()[static_cast<size_t>(type)].name);
  init.send_cq = init.recv_cq = lab.cq.get();
  init.cap = {4, 4, 1, 1, 0};
  QpPtr qp(ibv_create_qp(lab.pd.get(), &init));
  REQUIRE(qp);
  std::vector<QpState> path;
  if (target == QpState::ERR) path = {QpState::INIT, QpState::ERR};
  else
    for (QpState s : {QpState::INIT, QpState::RTR, QpState::RTS, QpState::SQD}) {
      if (static_cast<int>(target) < static_cast<int>(s)) break;
      path.push_back(s);
    }
  QpState cur = QpState::RESET;
  for (QpState s : path) {
    Mask m = rules().required(type, cur, s) | 1u;
    auto a = attrs_for(lab, qp.get(), cur, s);
    int e = ibv_modify_qp(qp.get(), &a, static_cast<int>(m));
    REQUIRE_MESSAGE(e == 0, "walking to ", qpo::spec::state_name(target), ": ", qpo::spec::state_name(cur), "->",
                    qpo::spec::state_name(s), " failed with ", e);
    cur = s;
  }
  return qp;
}

struct Tally {
  int agree = 0;
  int known_deviation = 0;
  int roce_alt_path = 0;
  std::vector<std::string> disagreements;
};

void try_mask(Lab& lab, int type, QpState cur, QpState next, Mask mask, Tally& tally, const std::set<std::string>& known) {
  auto qp = qp_in_state(lab, type, cur);
  auto a = attrs_for(lab, qp.get(), cur, next);
  int e = ibv_modify_qp(qp.get(), &a, static_cast<int>(mask));
  bool predicted = rules().check(type, cur, next, mask).ok;
  bool kernel_ok = e == 0;
  std::string what = rules().types()[static_cast<size_t>(type)].name + " " + qpo::spec::state_name(cur) + "->" +
                     qpo::spec::state_name(next) + " " + rules().mask_names(mask, "|");
  if (predicted == kernel_ok) {
    ++tally.agree;
    return;
  }
  // Provider deviations are data (schemas/providers.yaml), and must match the errno exactly.
  const auto* dev = qpo::spec::ProviderTable::builtin().transition_deviation(
      lab.ctx.provider(), rules().types()[static_cast<size_t>(type)].name, qpo::spec::state_name(cur),
      qpo::spec::state_name(next));
  if (dev && predicted && !kernel_ok && dev->errno_name == (e == EINVAL ? "EINVAL" : "other")) {
    ++tally.known_deviation;
    return;
  }
  for (const auto& k : known)
    if (!kernel_ok && e == EINVAL && what.find(k) != std::string::npos) {
      ++tally.roce_alt_path;
      return;
    }
  tally.disagreements.push_back(what + ": table says " + (predicted ? "ok" : "EINVAL") + ", kernel returned " +
                                (kernel_ok ? "0" : std::to_string(e)));
}

}  // namespace

TEST_CASE("the Linux kernel (rxe) accepts and rejects ibv_modify_qp masks exactly as the rule tables predict") {
  Lab lab;
  // Outside the table: the core rejects alternate paths on RoCE (verbs.c _ib_modify_qp,
  // "Ban them in roce mode"), so masks with IBV_QP_ALT_PATH fail on rxe though the table allows them.
  const std::set<std::string> roce_alt_path_ban{"IBV_QP_ALT_PATH"};
  Tally tally;
  const std::vector<QpState> reachable{QpState::RESET, QpState::INIT, QpState::RTR, QpState::RTS, QpState::SQD,
                                       QpState::ERR};
  for (const char* type_name : {"RC", "UC", "UD"}) {
    int type = rules().type_index(type_name);
    for (QpState cur : reachable) {
      for (int n = 0; n < qpo::spec::kStateCount; ++n) {
        QpState next = static_cast<QpState>(n);
        if (next == QpState::SQE) continue;  // no user-driven way into or meaningful test of SQE
        const auto& cell = rules().cell(cur, next);
        if (!cell.valid) {
          try_mask(lab, type, cur, next, 1u, tally, {});
          continue;
        }
        Mask req = rules().required(type, cur, next) | 1u;
        Mask opt = rules().optional(type, cur, next);
        try_mask(lab, type, cur, next, req, tally, {});
        try_mask(lab, type, cur, next, req | opt, tally, roce_alt_path_ban);
        for (const auto& attr : rules().attributes()) {
          Mask bit = attr.mask();
          if (bit == 1u) continue;
          if (req & bit) try_mask(lab, type, cur, next, req & ~bit, tally, {});
          else if (!(opt & bit)) try_mask(lab, type, cur, next, req | bit, tally, {});
        }
      }
    }
  }
  MESSAGE(tally.agree, " masks behaved as predicted; ", tally.known_deviation,
          " refused as schemas/providers.yaml records for this provider; ", tally.roce_alt_path,
          " refused because they set IBV_QP_ALT_PATH on RoCE");
  for (const auto& d : tally.disagreements) MESSAGE("DISAGREEMENT: ", d);
  CHECK(tally.disagreements.empty());
  CHECK(tally.agree > 500);
}
