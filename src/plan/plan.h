#pragma once
// A Plan is the ordered list of verbs calls each host will make for a validated scenario.
// `qpo plan` prints it; the executor runs it. Values that only exist after the out-of-band
// exchange (peer QPN, GID, PSN, rkey) are marked runtime and shown as such.
#include <string>
#include <vector>

#include "scenario/model.h"
#include "spec/rules.h"
#include "util/json_writer.h"

namespace qpo::plan {

struct Arg {
  std::string name;         // "path_mtu", "ah_attr.grh.dgid", "cqe"
  std::string value;        // "IBV_MTU_1024", "0x11111111", "peer"
  bool runtime = false;     // known only at run time (after exchange, or from the device)
  bool from_default = false;
  std::string note;         // "known after exchange", "min of both ports' active_mtu"
};

enum class Phase { Setup, BringUp, Exchange, Traffic, Transitions, Teardown };
const char* phase_name(Phase p);

struct Step {
  int index = 0;            // 1-based within the host
  Phase phase = Phase::Setup;
  std::string verb;         // ibv_open_device, ibv_modify_qp, ..., or qpo's own (exchange, barrier)
  std::string object;       // scenario name of the object it creates or acts on
  std::vector<Arg> args;
  // ibv_modify_qp only:
  bool has_mask = false;
  spec::Mask mask = 0;
  std::string from_state, to_state;
  std::string prediction;   // "ok", "EINVAL (expected)", "EINVAL"
  std::string expect;       // expected errno name, empty for success
  int transition_index = -1;  // index into the QP's transitions
};

struct HostPlan {
  std::string host, address;
  std::vector<Step> steps;
};

struct Plan {
  std::string scenario, file;
  std::vector<HostPlan> hosts;
  size_t step_count() const;
};

Plan build_plan(const scenario::Scenario& s);

// Human-readable, one line per call; masks as IBV_QP_* names and hex.
std::string render_text(const Plan& p);
void render_json(util::JsonWriter& w, const Plan& p);

// How a value is spelled in plans: enum names, flag lists, hex PSNs and qkeys.
Arg describe_attr(const scenario::Attr& a, const std::string& prefix = "");
std::vector<Arg> describe_attr_tree(const scenario::Attr& a);

}  // namespace qpo::plan
