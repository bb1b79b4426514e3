#pragma once
// Helpers for tests of the Lua layer without a device: endpoints with memory but no verbs
// objects (every binding must fail cleanly on them before touching verbs), and one-line runs
// of inline scripts.
#include <infiniband/verbs.h>

#include <map>
#include <string>
#include <vector>

#include "dataplane/endpoint.h"
#include "lua/workload.h"

namespace qpo::test {

struct FakeEndpoints {
  std::vector<uint8_t> mem_a = std::vector<uint8_t>(4096), mem_b = std::vector<uint8_t>(4096);
  ibv_mr mr_a{}, mr_b{};
  std::map<std::string, dataplane::Endpoint> eps;

  FakeEndpoints() {
    mr_a.lkey = 1;
    mr_b.lkey = 2;
    for (auto [name, peer] : {std::pair{"qa", "qb"}, std::pair{"qb", "qa"}}) {
      dataplane::Endpoint& e = eps[name];
      e.qp_name = name;
      e.qp_type = IBV_QPT_RC;
      e.type_name = "RC";
      e.peer_name = peer;
      e.max_inline_data = 64;
      e.local_mrs["ma"] = {&mr_a, mem_a.data(), mem_a.size()};
      e.local_mrs["mb"] = {&mr_b, mem_b.data(), mem_b.size()};
      e.remote_mrs["ma"] = {0x1000, 1, 4096};
      e.remote_mrs["mb"] = {0x2000, 2, 4096};
    }
  }
};

// Runs `source` with one worker per role ("initiator" on qa, "target" on qb when two).
inline lua::WorkloadResult run_inline(FakeEndpoints& f, const std::string& source, int workers = 1,
                                      bool sandbox = true, lua::Value args = lua::Value::table(),
                                      lua::Callbacks cb = {}) {
  lua::WorkloadSpec spec;
  spec.name = "t";
  spec.script = "inline.lua";
  spec.source = source;
  spec.sandbox = sandbox;
  spec.args = std::move(args);
  spec.timeout_ms = 2000;
  spec.workers.push_back({"qa", "initiator", {"qa"}});
  if (workers > 1) spec.workers.push_back({"qb", "target", {"qb"}});
  return lua::run_workload(spec, f.eps, cb);
}

}  // namespace qpo::test
