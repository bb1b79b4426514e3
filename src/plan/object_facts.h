#pragma once
// What exec knows of a device and of a QP, lowered from the checked model by the planner
// (Plan::devices, Plan::qps, by the object's id: plan/qp_id.h). exec makes, names and judges
// its objects from these and never reads the scenario's entries.
#include <cstdint>
#include <optional>
#include <string>

#include "plan/qp_id.h"
#include "plan/text.h"
#include "spec/rules.h"

namespace qpo::plan {

struct DeviceFacts {
  std::string name, host;
  std::string dev_name = "auto";  // rxe0, a GUID, or auto (the first active)
  uint32_t port = 1;
  bool gid_auto = true;    // gid_index: auto (the device's own choice)
  uint32_t gid_index = 0;  // else this index, unless gid_ip names one
  std::string gid_ip;      // the GID with this IP, found at run time
};

struct QpCaps {
  uint32_t max_send_wr = 0, max_recv_wr = 0, max_send_sge = 0, max_recv_sge = 0, max_inline_data = 0;
};

// ~100 bytes: a plan may hold 100,000 of them.
struct QpFacts {
  std::string name;
  Text type_name;                        // as the scenario spells it (messages, the exchange)
  spec::QpType type = spec::QpType::Unknown;
  // What it is made on and with, by id (kNoObject where it has none).
  ObjectId device = kNoObject, pd = kNoObject, send_cq = kNoObject, recv_cq = kNoObject, srq = kNoObject,
           xrcd = kNoObject;
  // Its `connect:` peer: a QP's id, or Plan::qp_count() + an external peer's index
  // (Plan::peer_name); kNoObject when it has none.
  ObjectId peer = kNoObject;
  QpCaps cap;
  bool sq_sig_all = false;
  std::optional<uint32_t> sq_psn;  // its transitions' literal sq_psn (else one at random, fixed for the run)
  uint32_t qkey = 0x11111111;      // its transitions' literal qkey (UD: what senders must use)
};

}  // namespace qpo::plan
