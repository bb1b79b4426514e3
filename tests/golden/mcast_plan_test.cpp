// The multicast example scenarios' plans: with `join: rdma_cm` each host makes its channel,
// the sender joins send-only and each member joins before its attach (the event's GID/MLID);
// teardown detaches, leaves, destroys the ids, then the channel; with the verbs join no CM step.
#include <doctest/doctest.h>

#include <string>

#include "golden/plan_of_file.h"

namespace {

// "kind verb object" of one host's steps: its timeline (stage >= 0) or its multicast/CM teardown.
std::string steps(const qpo::plan::Plan& p, const std::string& host, bool teardown) {
  std::string out;
  for (const auto& h : p.hosts)
    if (h.host == host)
      for (const auto& st : h.steps) {
        bool cm_or_mcast = st.verb.rfind("rdma_", 0) == 0 || st.verb == "ibv_detach_mcast";
        if (teardown ? st.phase == qpo::plan::Phase::Teardown && cm_or_mcast : st.stage >= 0)
          out += std::string(qpo::plan::step_kind_name(st.kind)) + " " + st.verb + " " + st.object + "\n";
      }
  return out;
}

}  // namespace

TEST_CASE("two-host-cm-ud-multicast: CM joins before the attaches, leaves after the detaches, the channel last") {
  auto p = qpo::test::plan_of_file("scenarios/two-host-cm-ud-multicast.yaml");
  CHECK(steps(p, "a", false) ==
        "cm_mcast_channel rdma_create_event_channel qpo.cm.a.mcast\n"
        "cm_join_mcast rdma_join_multicast g:tx\n"
        "cm_join_mcast rdma_join_multicast g:ma\n"
        "attach_mcast ibv_attach_mcast g:ma\n"
        "create_mcast_ah ibv_create_ah qpo.ah.tx->g\n"
        "workload workload to_group\n");
  CHECK(steps(p, "b", true) ==
        "destroy ibv_detach_mcast g:mb2\n"
        "destroy ibv_detach_mcast g:mb1\n"
        "destroy rdma_leave_multicast g:mb2\n"
        "destroy rdma_destroy_id g:mb2\n"
        "destroy rdma_leave_multicast g:mb1\n"
        "destroy rdma_destroy_id g:mb1\n"
        "destroy rdma_destroy_event_channel qpo.cm.b.mcast\n");
}

TEST_CASE("two-host-ud-multicast (verbs join): each host attaches its own members, no rdma_cm step") {
  auto p = qpo::test::plan_of_file("scenarios/two-host-ud-multicast.yaml");
  CHECK(steps(p, "b", false) ==
        "attach_mcast ibv_attach_mcast g:mb1\n"
        "attach_mcast ibv_attach_mcast g:mb2\n"
        "workload workload to_group\n");
  CHECK(steps(p, "b", true) ==
        "destroy ibv_detach_mcast g:mb2\n"
        "destroy ibv_detach_mcast g:mb1\n");
}
