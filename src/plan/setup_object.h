#pragma once
// What a setup step makes, lowered from the checked model, so that exec's setup
// (exec/setup.cpp) never looks the scenario up by name: Plan::setup_objects[Step::setup].
#include <cstdint>
#include <string>

namespace qpo::plan {

struct SetupObject {
  // What it is made on: the device (PD, XRCD, completion channel, CQ) or the PD (MR, SRQ, an
  // SRQ's slots).
  std::string on;
  // What it belongs to: CreateCompChannel: the CQ it serves; RegSlots of an SRQ: the SRQ.
  std::string owner;
  // CreateCq: the CQ whose completion channel it uses (its own name; "" none).
  std::string channel;
  // By id (plan/qp_id.h): what it makes (its `owner` when it has one: a completion channel is
  // kept by its CQ's id, an SRQ's slots by the SRQ's), and what it is made on (`on`: a
  // device's or a PD's id). kNoObject for kinds exec keeps by name (MRs).
  uint32_t id = ~0u, on_id = ~0u;
  uint64_t size = 0;       // RegMr: bytes
  int access = 0;          // RegMr: IBV_ACCESS_* bits
  uint32_t depth = 0;      // CreateCq: cqe
  bool timestamps = false; // CreateCq: ibv_create_cq_ex with completion timestamps
  uint32_t max_wr = 0, max_sge = 0;  // CreateSrq; an SRQ's slots (max_wr of them)
};

}  // namespace qpo::plan
