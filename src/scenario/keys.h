#pragma once
// The keys each scenario object accepts. The loader rejects anything else (with a
// did-you-mean), and tests/golden/scenarios_test.cpp checks schemas/scenario.schema.json
// lists exactly these, so editors and qpo agree. QP attribute names come from the rule
// tables (schemas/verbs-rules.yaml), not from here.
#include <string>
#include <vector>

namespace qpo::scenario::keys {

const std::vector<std::string>& top_level();
const std::vector<std::string>& host();
const std::vector<std::string>& device();
const std::vector<std::string>& pd();
const std::vector<std::string>& mr();
const std::vector<std::string>& cq();
const std::vector<std::string>& srq();
const std::vector<std::string>& xrcd();
const std::vector<std::string>& qp();
const std::vector<std::string>& cap();
const std::vector<std::string>& workload();
const std::vector<std::string>& fault();
const std::vector<std::string>& wire();          // events
const std::vector<std::string>& packet_event();  // qp, packets, psn, nth, transmission, action
const std::vector<std::string>& threshold();  // threshold names (scenario/thresholds.h)
// Keys a transition accepts besides ibv_qp_attr fields.
const std::vector<std::string>& transition_control();  // expect, defaults (+ to in lists)
const std::vector<std::string>& expect();
const std::vector<std::string>& workload_ops();
const std::vector<std::string>& capability_names();
const std::vector<std::string>& mw();  // a memory window
const std::vector<std::string>& external();  // a peer outside the scenario
const std::vector<std::string>& given_values();  // an external's `values:` (exchange values)
const std::vector<std::string>& given_mr();      // ... and its `mr:`
const std::vector<std::string>& mcast_group();  // a multicast group
const std::vector<std::string>& launcher_placeholders();  // {host} ... in a host's launcher:

}  // namespace qpo::scenario::keys
