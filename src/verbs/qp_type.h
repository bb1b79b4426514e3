#pragma once
// spec::QpType and spec::QpState as libibverbs spells them. spec's values are enum ibv_qp_type's (the rule
// table's `ibv:`); the asserts hold them to <infiniband/verbs.h>.
#include <infiniband/verbs.h>

#include "spec/rules.h"

namespace qpo::verbs {

static_assert(static_cast<int>(spec::QpType::RC) == IBV_QPT_RC);
static_assert(static_cast<int>(spec::QpType::UC) == IBV_QPT_UC);
static_assert(static_cast<int>(spec::QpType::UD) == IBV_QPT_UD);
static_assert(static_cast<int>(spec::QpType::RAW_PACKET) == IBV_QPT_RAW_PACKET);
static_assert(static_cast<int>(spec::QpType::XRC_SEND) == IBV_QPT_XRC_SEND);
static_assert(static_cast<int>(spec::QpType::XRC_RECV) == IBV_QPT_XRC_RECV);

// A known type (the loader rejects the others before anything is created).
inline ibv_qp_type to_ibv(spec::QpType t) { return static_cast<ibv_qp_type>(t); }

static_assert(static_cast<int>(spec::QpState::RESET) == IBV_QPS_RESET);
static_assert(static_cast<int>(spec::QpState::RTS) == IBV_QPS_RTS);
static_assert(static_cast<int>(spec::QpState::SQE) == IBV_QPS_SQE);
static_assert(static_cast<int>(spec::QpState::ERR) == IBV_QPS_ERR);
inline ibv_qp_state to_ibv(spec::QpState s) { return static_cast<ibv_qp_state>(s); }

}  // namespace qpo::verbs
