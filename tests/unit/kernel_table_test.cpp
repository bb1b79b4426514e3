// An independent transcription of Linux 6.1 drivers/infiniband/core/verbs.c qp_state_table[][]
// and ib_modify_qp_is_ok(), written from the kernel source with the IBV_QP_* bits of
// <infiniband/verbs.h> (libibverbs uses the kernel's IB_QP_* values). It is compared cell by
// cell with the compiled-in schemas/verbs-rules.yaml, so a slip in either shows up here.
#include <doctest/doctest.h>
#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <ios>
#include <random>
#include <string>

#include "spec/rules.h"

namespace {

using qpo::spec::Mask;
using qpo::spec::QpState;
using qpo::spec::RuleTable;

// enum ib_qp_type values (include/rdma/ib_verbs.h); IB_QPT_MAX = 11 slots in the C arrays.
constexpr int SMI = 0, GSI = 1, RC = 2, UC = 3, UD = 4, RAW_PACKET = 8, XRC_INI = 9, XRC_TGT = 10;
constexpr int kKernelTypes = 11;
enum { RESET, INIT, RTR, RTS, SQD, SQE, ERR };

constexpr Mask STATE = IBV_QP_STATE, CUR_STATE = IBV_QP_CUR_STATE, EN_SQD_ASYNC_NOTIFY = IBV_QP_EN_SQD_ASYNC_NOTIFY,
               ACCESS_FLAGS = IBV_QP_ACCESS_FLAGS, PKEY_INDEX = IBV_QP_PKEY_INDEX, PORT = IBV_QP_PORT,
               QKEY = IBV_QP_QKEY, AV = IBV_QP_AV, PATH_MTU = IBV_QP_PATH_MTU, TIMEOUT = IBV_QP_TIMEOUT,
               RETRY_CNT = IBV_QP_RETRY_CNT, RNR_RETRY = IBV_QP_RNR_RETRY, RQ_PSN = IBV_QP_RQ_PSN,
               MAX_QP_RD_ATOMIC = IBV_QP_MAX_QP_RD_ATOMIC, ALT_PATH = IBV_QP_ALT_PATH,
               MIN_RNR_TIMER = IBV_QP_MIN_RNR_TIMER, SQ_PSN = IBV_QP_SQ_PSN,
               MAX_DEST_RD_ATOMIC = IBV_QP_MAX_DEST_RD_ATOMIC, PATH_MIG_STATE = IBV_QP_PATH_MIG_STATE,
               CAP = IBV_QP_CAP, DEST_QPN = IBV_QP_DEST_QPN, RATE_LIMIT = IBV_QP_RATE_LIMIT;

static_assert(STATE == 0x1 && MIN_RNR_TIMER == 0x8000 && DEST_QPN == 0x100000 && RATE_LIMIT == 0x2000000);

struct KCell {
  bool valid = false;
  std::array<Mask, kKernelTypes> req{}, opt{};
};
using KTable = std::array<std::array<KCell, 7>, 7>;

// qp_state_table, Linux 6.1, in source order.
KTable kernel_table() {
  KTable t{};
  t[RESET][RESET].valid = true;
  {
    auto& c = t[RESET][INIT];
    c.valid = true;
    c.req[UD] = PKEY_INDEX | PORT | QKEY;
    c.req[RAW_PACKET] = PORT;
    c.req[UC] = PKEY_INDEX | PORT | ACCESS_FLAGS;
    c.req[RC] = PKEY_INDEX | PORT | ACCESS_FLAGS;
    c.req[XRC_INI] = PKEY_INDEX | PORT | ACCESS_FLAGS;
    c.req[XRC_TGT] = PKEY_INDEX | PORT | ACCESS_FLAGS;
    c.req[SMI] = PKEY_INDEX | QKEY;
    c.req[GSI] = PKEY_INDEX | QKEY;
  }
  t[INIT][RESET].valid = true;
  t[INIT][ERR].valid = true;
  {
    auto& c = t[INIT][INIT];
    c.valid = true;
    c.opt[UD] = PKEY_INDEX | PORT | QKEY;
    c.opt[UC] = PKEY_INDEX | PORT | ACCESS_FLAGS;
    c.opt[RC] = PKEY_INDEX | PORT | ACCESS_FLAGS;
    c.opt[XRC_INI] = PKEY_INDEX | PORT | ACCESS_FLAGS;
    c.opt[XRC_TGT] = PKEY_INDEX | PORT | ACCESS_FLAGS;
    c.opt[SMI] = PKEY_INDEX | QKEY;
    c.opt[GSI] = PKEY_INDEX | QKEY;
  }
  {
    auto& c = t[INIT][RTR];
    c.valid = true;
    c.req[UC] = AV | PATH_MTU | DEST_QPN | RQ_PSN;
    c.req[RC] = AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
    c.req[XRC_INI] = AV | PATH_MTU | DEST_QPN | RQ_PSN;
    c.req[XRC_TGT] = AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
    c.opt[UD] = PKEY_INDEX | QKEY;
    c.opt[UC] = ALT_PATH | ACCESS_FLAGS | PKEY_INDEX;
    c.opt[RC] = ALT_PATH | ACCESS_FLAGS | PKEY_INDEX;
    c.opt[XRC_INI] = ALT_PATH | ACCESS_FLAGS | PKEY_INDEX;
    c.opt[XRC_TGT] = ALT_PATH | ACCESS_FLAGS | PKEY_INDEX;
    c.opt[SMI] = PKEY_INDEX | QKEY;
    c.opt[GSI] = PKEY_INDEX | QKEY;
  }
  t[RTR][RESET].valid = true;
  t[RTR][ERR].valid = true;
  {
    auto& c = t[RTR][RTS];
    c.valid = true;
    c.req[UD] = SQ_PSN;
    c.req[UC] = SQ_PSN;
    c.req[RC] = TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC;
    c.req[XRC_INI] = TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC;
    c.req[XRC_TGT] = TIMEOUT | SQ_PSN;
    c.req[SMI] = SQ_PSN;
    c.req[GSI] = SQ_PSN;
    c.opt[UD] = CUR_STATE | QKEY;
    c.opt[UC] = CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE;
    c.opt[RC] = CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE;
    c.opt[XRC_INI] = CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE;
    c.opt[XRC_TGT] = CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE;
    c.opt[SMI] = CUR_STATE | QKEY;
    c.opt[GSI] = CUR_STATE | QKEY;
    c.opt[RAW_PACKET] = RATE_LIMIT;
  }
  t[RTS][RESET].valid = true;
  t[RTS][ERR].valid = true;
  {
    auto& c = t[RTS][RTS];
    c.valid = true;
    c.opt[UD] = CUR_STATE | QKEY;
    c.opt[UC] = CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE;
    c.opt[RC] = CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER;
    c.opt[XRC_INI] = CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE;
    c.opt[XRC_TGT] = CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER;
    c.opt[SMI] = CUR_STATE | QKEY;
    c.opt[GSI] = CUR_STATE | QKEY;
    c.opt[RAW_PACKET] = RATE_LIMIT;
  }
  {
    auto& c = t[RTS][SQD];
    c.valid = true;
    for (int type : {UD, UC, RC, XRC_INI, XRC_TGT, SMI, GSI}) c.opt[type] = EN_SQD_ASYNC_NOTIFY;
  }
  t[SQD][RESET].valid = true;
  t[SQD][ERR].valid = true;
  {
    auto& c = t[SQD][RTS];
    c.valid = true;
    c.opt[UD] = CUR_STATE | QKEY;
    c.opt[UC] = CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE;
    c.opt[RC] = CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE;
    c.opt[XRC_INI] = CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE;
    c.opt[XRC_TGT] = CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE;
    c.opt[SMI] = CUR_STATE | QKEY;
    c.opt[GSI] = CUR_STATE | QKEY;
  }
  {
    auto& c = t[SQD][SQD];
    c.valid = true;
    c.opt[UD] = PKEY_INDEX | QKEY;
    c.opt[UC] = AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE;
    c.opt[RC] = PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | MAX_DEST_RD_ATOMIC | ALT_PATH |
                ACCESS_FLAGS | PKEY_INDEX | MIN_RNR_TIMER | PATH_MIG_STATE;
    c.opt[XRC_INI] = PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS |
                     PKEY_INDEX | PATH_MIG_STATE;
    c.opt[XRC_TGT] = PORT | AV | TIMEOUT | MAX_DEST_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX |
                     MIN_RNR_TIMER | PATH_MIG_STATE;
    c.opt[SMI] = PKEY_INDEX | QKEY;
    c.opt[GSI] = PKEY_INDEX | QKEY;
  }
  t[SQE][RESET].valid = true;
  t[SQE][ERR].valid = true;
  {
    auto& c = t[SQE][RTS];
    c.valid = true;
    c.opt[UD] = CUR_STATE | QKEY;
    c.opt[UC] = CUR_STATE | ACCESS_FLAGS;
    c.opt[SMI] = CUR_STATE | QKEY;
    c.opt[GSI] = CUR_STATE | QKEY;
  }
  t[ERR][RESET].valid = true;
  t[ERR][ERR].valid = true;
  return t;
}

const KTable& K() {
  static const KTable t = kernel_table();
  return t;
}

// ib_modify_qp_is_ok(), with the uverbs convention that next = cur without IB_QP_STATE.
bool kernel_is_ok(int ktype, int cur, int wanted_next, Mask mask) {
  int next = (mask & STATE) ? wanted_next : cur;
  if ((mask & CUR_STATE) && cur != RTR && cur != RTS && cur != SQD && cur != SQE) return false;
  const KCell& c = K()[cur][next];
  if (!c.valid) return false;
  Mask req = c.req[ktype], opt = c.opt[ktype];
  if ((mask & req) != req) return false;
  if (mask & ~(req | opt | STATE)) return false;
  return true;
}

const RuleTable& T() { return RuleTable::builtin(); }

QpState S(int s) { return static_cast<QpState>(s); }

// The rule table's index for a kernel type number, via the kernel name (IB_QPT_XRC_INI ...).
int idx(int ktype) {
  const char* names[kKernelTypes] = {"IB_QPT_SMI", "IB_QPT_GSI", "IB_QPT_RC", "IB_QPT_UC", "IB_QPT_UD", "", "", "",
                                     "IB_QPT_RAW_PACKET", "IB_QPT_XRC_INI", "IB_QPT_XRC_TGT"};
  return T().type_index(names[ktype]);
}

constexpr int kTypes[] = {SMI, GSI, RC, UC, UD, RAW_PACKET, XRC_INI, XRC_TGT};

}  // namespace

TEST_CASE("the compiled-in rule table names its kernel source") {
  CHECK(T().source() == "Linux 6.1 drivers/infiniband/core/verbs.c qp_state_table, ib_modify_qp_is_ok()");
}

TEST_CASE("the rule table knows exactly the eight kernel QP types, with their libibverbs enum values") {
  REQUIRE(T().types().size() == 8);
  for (int k : kTypes) {
    CAPTURE(k);
    int i = idx(k);
    REQUIRE(i >= 0);
    CHECK(T().types()[static_cast<size_t>(i)].ibv == k);
    CHECK(T().types()[static_cast<size_t>(i)].user == (k != SMI && k != GSI));
  }
  CHECK(T().type_index("RC") == idx(RC));
  CHECK(T().type_index("XRC_SEND") == idx(XRC_INI));
  CHECK(T().type_index("XRC_RECV") == idx(XRC_TGT));
  CHECK(T().type_index("IBV_QPT_RAW_PACKET") == idx(RAW_PACKET));
}

TEST_CASE("every attribute bit in the rule table is the IBV_QP_* value of <infiniband/verbs.h>") {
  const std::pair<const char*, Mask> expected[] = {
      {"IBV_QP_STATE", STATE}, {"IBV_QP_CUR_STATE", CUR_STATE}, {"IBV_QP_EN_SQD_ASYNC_NOTIFY", EN_SQD_ASYNC_NOTIFY},
      {"IBV_QP_ACCESS_FLAGS", ACCESS_FLAGS}, {"IBV_QP_PKEY_INDEX", PKEY_INDEX}, {"IBV_QP_PORT", PORT},
      {"IBV_QP_QKEY", QKEY}, {"IBV_QP_AV", AV}, {"IBV_QP_PATH_MTU", PATH_MTU}, {"IBV_QP_TIMEOUT", TIMEOUT},
      {"IBV_QP_RETRY_CNT", RETRY_CNT}, {"IBV_QP_RNR_RETRY", RNR_RETRY}, {"IBV_QP_RQ_PSN", RQ_PSN},
      {"IBV_QP_MAX_QP_RD_ATOMIC", MAX_QP_RD_ATOMIC}, {"IBV_QP_ALT_PATH", ALT_PATH},
      {"IBV_QP_MIN_RNR_TIMER", MIN_RNR_TIMER}, {"IBV_QP_SQ_PSN", SQ_PSN},
      {"IBV_QP_MAX_DEST_RD_ATOMIC", MAX_DEST_RD_ATOMIC}, {"IBV_QP_PATH_MIG_STATE", PATH_MIG_STATE},
      {"IBV_QP_CAP", CAP}, {"IBV_QP_DEST_QPN", DEST_QPN}, {"IBV_QP_RATE_LIMIT", RATE_LIMIT}};
  REQUIRE(T().attributes().size() == std::size(expected));
  Mask all = 0;
  for (const auto& entry : expected) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const char* name = entry.first;
    const Mask bit = entry.second;
    CAPTURE(name);
    std::string err;
    auto m = T().parse_mask(name, &err);
    REQUIRE(m.has_value());
    CHECK(*m == bit);
    CHECK(T().mask_names(bit) == name);
    all |= bit;
  }
  CHECK(T().known_bits() == all);
}

TEST_CASE("every QP type x every (cur, next) pair matches the Linux 6.1 qp_state_table") {
  int compared = 0;
  for (int k : kTypes) {
    int i = idx(k);
    REQUIRE(i >= 0);
    for (int cur = 0; cur < 7; ++cur)
      for (int next = 0; next < 7; ++next) {
        CAPTURE(T().types()[static_cast<size_t>(i)].name);
        CAPTURE(qpo::spec::state_name(S(cur)));
        CAPTURE(qpo::spec::state_name(S(next)));
        const KCell& kc = K()[cur][next];
        CHECK(T().cell(S(cur), S(next)).valid == kc.valid);
        CHECK(T().required(i, S(cur), S(next)) == kc.req[k]);
        CHECK(T().optional(i, S(cur), S(next)) == kc.opt[k]);
        ++compared;
      }
  }
  CHECK(compared == 8 * 49);
}

TEST_CASE("RuleTable::check agrees with ib_modify_qp_is_ok on required, optional, single-bit and random masks") {
  std::mt19937 rng(61);  // fixed seed: the same masks every run
  std::uniform_int_distribution<uint32_t> any;
  for (int k : kTypes) {
    int i = idx(k);
    for (int cur = 0; cur < 7; ++cur)
      for (int next = 0; next < 7; ++next) {
        const KCell& kc = K()[cur][next];
        std::vector<Mask> masks = {0, STATE, STATE | kc.req[k], STATE | kc.req[k] | kc.opt[k], kc.req[k],
                                   kc.req[k] | kc.opt[k]};
        for (int bit = 0; bit < 32; ++bit) {
          masks.push_back(STATE | (Mask{1} << bit));
          masks.push_back(STATE | kc.req[k] | (Mask{1} << bit));
          masks.push_back((STATE | kc.req[k]) & ~(Mask{1} << bit));
        }
        for (int r = 0; r < 16; ++r) {
          masks.push_back(any(rng) & T().known_bits());
          masks.push_back((any(rng) & (kc.req[k] | kc.opt[k])) | kc.req[k] | STATE);
        }
        for (Mask m : masks) {
          auto r = T().check(i, S(cur), S(next), m);
          bool want = kernel_is_ok(k, cur, next, m);
          if (r.ok != want) {
            FAIL_CHECK("type " << T().types()[static_cast<size_t>(i)].name << " " << qpo::spec::state_name(S(cur))
                                << "->" << qpo::spec::state_name(S(next)) << " mask 0x" << std::hex << m
                                << ": check() says " << r.ok << ", kernel says " << want);
          }
        }
      }
  }
}

TEST_CASE("IBV_QP_STATE is never forbidden: in every valid cell, required | STATE passes for every type") {
  for (int k : kTypes)
    for (int cur = 0; cur < 7; ++cur)
      for (int next = 0; next < 7; ++next) {
        if (!K()[cur][next].valid) continue;
        CAPTURE(k);
        CAPTURE(cur);
        CAPTURE(next);
        auto r = T().check(idx(k), S(cur), S(next), STATE | K()[cur][next].req[k]);
        CHECK(r.ok);
        CHECK(r.forbidden == 0);
        CHECK(r.missing == 0);
      }
}

TEST_CASE("without IBV_QP_STATE the kernel checks cur->cur: RTS->RTS with no state bit is ok") {
  auto r = T().check(idx(RC), QpState::RTS, QpState::RTS, 0);
  CHECK(r.ok);
  CHECK(r.to == QpState::RTS);
  // Asking for SQD without the state bit stays in RTS, and RTS->RTS accepts MIN_RNR_TIMER for RC.
  auto s = T().check(idx(RC), QpState::RTS, QpState::SQD, MIN_RNR_TIMER);
  CHECK(s.ok);
  CHECK(s.from == QpState::RTS);
  CHECK(s.to == QpState::RTS);
}

TEST_CASE("without IBV_QP_STATE, RTR '->RTS' is judged as RTR->RTR, which is not a valid cell") {
  Mask rts_required = TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC;
  auto r = T().check(idx(RC), QpState::RTR, QpState::RTS, rts_required);
  CHECK_FALSE(r.ok);
  CHECK(r.invalid_transition);
  CHECK(r.from == QpState::RTR);
  CHECK(r.to == QpState::RTR);
  // The same mask with the state bit is the normal bring-up call.
  CHECK(T().check(idx(RC), QpState::RTR, QpState::RTS, STATE | rts_required).ok);
}

TEST_CASE("IBV_QP_CUR_STATE is only accepted from RTR, RTS, SQD and SQE") {
  for (int s = 0; s < 7; ++s) {
    CAPTURE(qpo::spec::state_name(S(s)));
    bool allowed = s == RTR || s == RTS || s == SQD || s == SQE;
    CHECK(T().cur_state_allowed_from(S(s)) == allowed);
  }
  auto from_init = T().check(idx(RC), QpState::INIT, QpState::INIT, STATE | CUR_STATE);
  CHECK_FALSE(from_init.ok);
  CHECK(from_init.cur_state_illegal);
  auto from_rts = T().check(idx(RC), QpState::RTS, QpState::RTS, STATE | CUR_STATE);
  CHECK(from_rts.ok);
  CHECK_FALSE(from_rts.cur_state_illegal);
  auto from_sqe = T().check(idx(UD), QpState::SQE, QpState::RTS, STATE | CUR_STATE);
  CHECK(from_sqe.ok);
}

TEST_CASE("RESET->ERR is not a valid cell of the kernel table") {
  CHECK_FALSE(T().cell(QpState::RESET, QpState::ERR).valid);
  for (int k : kTypes) {
    auto r = T().check(idx(k), QpState::RESET, QpState::ERR, STATE);
    CHECK_FALSE(r.ok);
    CHECK(r.invalid_transition);
  }
  // Every other state may go to ERR.
  for (int s = INIT; s <= ERR; ++s) CHECK(T().cell(S(s), QpState::ERR).valid);
}

TEST_CASE("RAW_PACKET INIT->RTR accepts only IBV_QP_STATE") {
  int raw = idx(RAW_PACKET);
  CHECK(T().check(raw, QpState::INIT, QpState::RTR, STATE).ok);
  CHECK(T().required(raw, QpState::INIT, QpState::RTR) == 0);
  CHECK(T().optional(raw, QpState::INIT, QpState::RTR) == 0);
  for (const auto& a : T().attributes()) {
    if (a.mask() == STATE) continue;
    CAPTURE(a.mask_name);
    auto r = T().check(raw, QpState::INIT, QpState::RTR, STATE | a.mask());
    CHECK_FALSE(r.ok);
    CHECK(r.forbidden == a.mask());
  }
}

TEST_CASE("XRC_RECV RTR->RTS requires only IBV_QP_TIMEOUT | IBV_QP_SQ_PSN") {
  int xrc_recv = T().type_index("XRC_RECV");
  CHECK(T().required(xrc_recv, QpState::RTR, QpState::RTS) == (TIMEOUT | SQ_PSN));
  CHECK(T().check(xrc_recv, QpState::RTR, QpState::RTS, STATE | TIMEOUT | SQ_PSN).ok);
  auto no_timeout = T().check(xrc_recv, QpState::RTR, QpState::RTS, STATE | SQ_PSN);
  CHECK(no_timeout.missing == TIMEOUT);
  // The initiator-side attributes an XRC_SEND needs are forbidden on the target.
  auto extra = T().check(xrc_recv, QpState::RTR, QpState::RTS, STATE | TIMEOUT | SQ_PSN | RETRY_CNT | RNR_RETRY);
  CHECK(extra.forbidden == (RETRY_CNT | RNR_RETRY));
}

TEST_CASE("IBV_QP_CAP is never accepted by ib_modify_qp_is_ok") {
  for (int k : kTypes)
    for (int cur = 0; cur < 7; ++cur)
      for (int next = 0; next < 7; ++next) {
        CAPTURE(k);
        CAPTURE(cur);
        CAPTURE(next);
        CHECK(((T().required(idx(k), S(cur), S(next)) | T().optional(idx(k), S(cur), S(next))) & CAP) == 0);
        if (!T().cell(S(cur), S(next)).valid) continue;
        auto r = T().check(idx(k), S(cur), S(next), STATE | CAP | T().required(idx(k), S(cur), S(next)));
        CHECK_FALSE(r.ok);
        CHECK(r.forbidden == CAP);
      }
}

TEST_CASE("a bit outside every known attribute (1 << 30) is forbidden") {
  const Mask unknown = Mask{1} << 30;
  CHECK((T().known_bits() & unknown) == 0);
  auto r = T().check(idx(RC), QpState::RTS, QpState::RTS, STATE | unknown);
  CHECK_FALSE(r.ok);
  CHECK(r.forbidden == unknown);
  CHECK(T().mask_names(unknown) == "0x40000000");
}
