#pragma once
// Shared between the loader's translation units; not part of the public API.
#include "scenario/model.h"
#include "scenario/yaml_reader.h"

namespace qpo::scenario::detail {

void load_hosts(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_devices(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_pds(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_mrs(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_cqs(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_srqs(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_xrcds(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_qps(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_workloads(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_faults(YamlReader& r, const yaml::Node& n, Scenario& s);
// `wire:` (load_objects.cpp): its packet events and expectations.
void load_wire(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_mws(YamlReader& r, const yaml::Node& n, Scenario& s);
void load_externals(YamlReader& r, const yaml::Node& n, Scenario& s);
// After every section: a window without `pd:` takes its MR's, `length: 0` runs to the MR's end.
void finish_mws(Scenario& s);
// `mcast_groups:` (load_multicast.cpp); finish_mcast_groups after the QPs: members that name a
// counted QP group (or a slice) become its members.
void load_mcast_groups(YamlReader& r, const yaml::Node& n, Scenario& s);
void finish_mcast_groups(YamlReader& r, Scenario& s);
// `timeline:` (load_timeline.cpp), after the QPs: its transition steps join their QPs' lists.
void load_timeline(YamlReader& r, const yaml::Node& n, Scenario& s);

// Counted groups by name (groups.cpp), after load_qps: MRs with count:/per_qp: become their
// members; a workload on a QP group (or slice) becomes one per QP (op loops) or drives them
// all (scripts). expand_refs turns the group names and slices of a list into member names.
void expand_mr_groups(YamlReader& r, Scenario& s);
void expand_workload_groups(YamlReader& r, Scenario& s);
std::vector<Ref> expand_refs(YamlReader& r, const Scenario& s, const std::vector<Ref>& refs, Group::Kind kind,
                             const std::string& path);

// One transition's parts (load_qp.cpp), shared by `states:`, `transitions:` and the timeline.
void parse_expect(YamlReader& r, const yaml::Node& v, const std::string& path, Transition& t);
void load_transition_body(YamlReader& r, const yaml::Node& body, const std::string& path, Transition& t, bool in_list);
std::optional<spec::QpState> state_or_report(YamlReader& r, const yaml::Node& n, const std::string& path);
// A QP's `cm:` (load_cm.cpp), and the CM events an expected outcome may name.
void load_cm(YamlReader& r, const yaml::Node& n, const std::string& path, Qp& q);
const std::vector<std::string>& cm_expectable_events();
// A script workload's `args:` and `thresholds:` (load_script.cpp).
void load_script_args(YamlReader& r, const yaml::Node& n, const std::string& path, Workload& w);
void load_thresholds(YamlReader& r, const yaml::Node& n, const std::string& path, Workload& w);

// IBV_ACCESS_* flags from a list or "a|b" string; names with or without the prefix.
std::optional<uint32_t> parse_access(YamlReader& r, const yaml::Node& n, const std::string& path);
// Q108 unless `name` is 1-64 characters from [A-Za-z0-9_.-] (no spaces, escapes, format characters).
bool check_name(YamlReader& r, const std::string& name, const SourceLoc& loc, const std::string& path);
// 250us, 1ms, 2s (up to 60 s) in microseconds; reports Q103 otherwise.
std::optional<uint64_t> duration_us(YamlReader& r, const yaml::Node& n, const std::string& path);
// errno name -> value (EINVAL -> 22); 0 when unknown.
int errno_from_name(std::string_view name);
std::vector<std::string> known_errno_names();

}  // namespace qpo::scenario::detail
