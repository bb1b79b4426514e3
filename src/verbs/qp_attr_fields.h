#pragma once
// The scalar members of struct ibv_qp_attr, as one table: the scenario's field name (the
// struct member's), the attr_mask bit that sets it, where it lives and how wide it is, and
// whether ibv_query_qp reads it back as set. The attribute templates write through it and
// the post-modify check reads through it; a unit test holds the mask bits equal to the rule
// tables' (schemas/verbs-rules.yaml), which own which transition takes which bit.
// ah_attr/alt_ah_attr and cap are structs of their own, not in here.
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace qpo::verbs {

struct QpAttrField {
  const char* name;
  int mask;         // IBV_QP_*
  uint16_t offset;  // into ibv_qp_attr
  uint8_t size;     // 1, 2 or 4 bytes
  bool read_back;   // ibv_query_qp returns it as set (qpo checks it after each modify)
};

#define QPO_ATTR(mask, field, read_back) \
  QpAttrField { #field, mask, offsetof(ibv_qp_attr, field), sizeof(ibv_qp_attr::field), read_back }
inline constexpr QpAttrField kQpAttrFields[] = {
    QPO_ATTR(IBV_QP_CUR_STATE, cur_qp_state, false),
    QPO_ATTR(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify, false),
    QPO_ATTR(IBV_QP_ACCESS_FLAGS, qp_access_flags, true),
    QPO_ATTR(IBV_QP_PKEY_INDEX, pkey_index, true),
    QPO_ATTR(IBV_QP_PORT, port_num, false),
    QPO_ATTR(IBV_QP_QKEY, qkey, true),
    QPO_ATTR(IBV_QP_PATH_MTU, path_mtu, true),
    QPO_ATTR(IBV_QP_TIMEOUT, timeout, true),
    QPO_ATTR(IBV_QP_RETRY_CNT, retry_cnt, true),
    QPO_ATTR(IBV_QP_RNR_RETRY, rnr_retry, true),
    QPO_ATTR(IBV_QP_RQ_PSN, rq_psn, true),
    QPO_ATTR(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic, true),
    QPO_ATTR(IBV_QP_ALT_PATH, alt_pkey_index, false),
    QPO_ATTR(IBV_QP_ALT_PATH, alt_port_num, false),
    QPO_ATTR(IBV_QP_ALT_PATH, alt_timeout, false),
    QPO_ATTR(IBV_QP_MIN_RNR_TIMER, min_rnr_timer, true),
    QPO_ATTR(IBV_QP_SQ_PSN, sq_psn, true),
    QPO_ATTR(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic, true),
    QPO_ATTR(IBV_QP_PATH_MIG_STATE, path_mig_state, false),
    QPO_ATTR(IBV_QP_DEST_QPN, dest_qp_num, true),
    QPO_ATTR(IBV_QP_RATE_LIMIT, rate_limit, false),
};
#undef QPO_ATTR

// The entry for a field name, or nullptr (ah_attr, cap and names that are no member).
inline const QpAttrField* qp_attr_field(std::string_view name) {
  for (const auto& f : kQpAttrFields)
    if (name == f.name) return &f;
  return nullptr;
}

inline uint32_t load(const ibv_qp_attr& a, const QpAttrField& f) {
  const auto* p = reinterpret_cast<const unsigned char*>(&a) + f.offset;
  if (f.size == 1) return *p;
  if (f.size == 2) {
    uint16_t w;
    std::memcpy(&w, p, 2);
    return w;
  }
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// `size` (1, 2 or 4) bytes of `v` at `offset` into `a`: a field of the table, or one inside
// ah_attr/alt_ah_attr (the planner's attr templates).
inline void store_at(ibv_qp_attr& a, uint16_t offset, uint8_t size, uint32_t v) {
  auto* p = reinterpret_cast<unsigned char*>(&a) + offset;
  if (size == 1) *p = static_cast<uint8_t>(v);
  else if (size == 2) {
    auto w = static_cast<uint16_t>(v);
    std::memcpy(p, &w, 2);
  } else {
    std::memcpy(p, &v, 4);
  }
}

inline void store(ibv_qp_attr& a, const QpAttrField& f, uint32_t v) { store_at(a, f.offset, f.size, v); }

}  // namespace qpo::verbs
