// The ibv_modify_qp(3) man page (rdma-core) lists the "minimum list of attributes that must be
// changed upon transitioning QP state from: Reset --> Init --> RTR --> RTS" for UD, UC, RC and
// RAW_PACKET. Transcribed here; every one must be covered by the rule table's required set
// (plus IBV_QP_STATE), and calling ibv_modify_qp with exactly that minimum must be accepted.
#include <doctest/doctest.h>
#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "spec/rules.h"

namespace {

using qpo::spec::Mask;
using qpo::spec::QpState;
using qpo::spec::RuleTable;

struct ManRow {
  const char* type;
  QpState from, to;
  Mask minimum;  // as printed in the man page, IBV_QP_STATE included
};

const std::vector<ManRow>& man_page() {
  static const std::vector<ManRow> rows = {
      // For QP Transport Service Type IBV_QPT_UD
      {"UD", QpState::RESET, QpState::INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY},
      {"UD", QpState::INIT, QpState::RTR, IBV_QP_STATE},
      {"UD", QpState::RTR, QpState::RTS, IBV_QP_STATE | IBV_QP_SQ_PSN},
      // IBV_QPT_UC
      {"UC", QpState::RESET, QpState::INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
      {"UC", QpState::INIT, QpState::RTR,
       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN},
      {"UC", QpState::RTR, QpState::RTS, IBV_QP_STATE | IBV_QP_SQ_PSN},
      // IBV_QPT_RC
      {"RC", QpState::RESET, QpState::INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
      {"RC", QpState::INIT, QpState::RTR,
       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
           IBV_QP_MIN_RNR_TIMER},
      {"RC", QpState::RTR, QpState::RTS,
       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT},
      // IBV_QPT_RAW_PACKET
      {"RAW_PACKET", QpState::RESET, QpState::INIT, IBV_QP_STATE | IBV_QP_PORT},
      {"RAW_PACKET", QpState::INIT, QpState::RTR, IBV_QP_STATE},
      {"RAW_PACKET", QpState::RTR, QpState::RTS, IBV_QP_STATE},
  };
  return rows;
}

std::string row_name(const ManRow& r) {
  return std::string(r.type) + " " + qpo::spec::state_name(r.from) + "->" + qpo::spec::state_name(r.to);
}

}  // namespace

TEST_CASE("the man page covers RC, UC, UD and RAW_PACKET bring-up: 4 types x 3 transitions") {
  CHECK(man_page().size() == 12);
  for (const auto& r : man_page()) CHECK(RuleTable::builtin().type_index(r.type) >= 0);
}

TEST_CASE("each man page minimum is a subset of the table's required attributes plus IBV_QP_STATE") {
  const auto& t = RuleTable::builtin();
  for (const auto& r : man_page()) {
    CAPTURE(row_name(r));
    int type = t.type_index(r.type);
    Mask req = t.required(type, r.from, r.to) | IBV_QP_STATE;
    CHECK_MESSAGE((r.minimum & ~req) == 0, "man page needs " << t.mask_names(r.minimum & ~req)
                                                             << " that the table does not require");
  }
}

TEST_CASE("passing exactly the man page minimum (with IBV_QP_STATE) is accepted") {
  const auto& t = RuleTable::builtin();
  for (const auto& r : man_page()) {
    CAPTURE(row_name(r));
    auto v = t.check(t.type_index(r.type), r.from, r.to, r.minimum | IBV_QP_STATE);
    CHECK_MESSAGE(v.ok, "missing " << t.mask_names(v.missing) << ", forbidden " << t.mask_names(v.forbidden));
  }
}

TEST_CASE("dropping any one attribute of the man page minimum (other than IBV_QP_STATE) is rejected as missing") {
  const auto& t = RuleTable::builtin();
  for (const auto& r : man_page()) {
    for (int bit = 1; bit < 32; ++bit) {
      Mask b = Mask{1} << bit;
      if (!(r.minimum & b)) continue;
      CAPTURE(row_name(r));
      CAPTURE(t.mask_names(b));
      auto v = t.check(t.type_index(r.type), r.from, r.to, r.minimum & ~b);
      CHECK_FALSE(v.ok);
      CHECK(v.missing == b);
    }
  }
}
