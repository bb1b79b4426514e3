#pragma once
// Semantic validation of a loaded scenario. Passes run in order and all report into one sink:
//   references  - every name points at an object of the right kind on the right device
//   transitions - each ibv_modify_qp against the kernel's qp_state_table (elaborates the copy:
//                 from-states, masks, verdicts, defaults)
//   values      - attribute ranges, enum values, ibv_reg_mr access rules, expected WC statuses
//   cross_qp    - peers agree: types, PSNs, MTU, qkey; workloads have the access they need
//   caps        - queue sizes that will overflow or exceed usual device limits (lint)
//   scripts     - script workloads: thresholds fit the script, initiators have peers
// Running a script's setup(args) needs Lua: validate/validate.h adds it on top of these.
// Codes: Q1xx structure (loader), Q2xx references, Q3xx state machine, Q4xx values,
// Q5xx cross-QP, Q6xx capacity, Q7xx scripts. docs/diagnostics.md lists them all.
#include "check/checked.h"
#include "diag/diagnostic.h"
#include "scenario/model.h"

namespace qpo::check {

// Checks `s` and returns the elaborated copy (check/checked.h); `s` is not changed.
Checked validate(const scenario::Scenario& s, diag::DiagSink& sink);
// The same on a scenario the caller no longer needs: elaborated in place, not copied (a copy
// of 10,000 QPs' transitions was a quarter of validate's time).
Checked validate(scenario::Scenario&& s, diag::DiagSink& sink);

// rdma_cm connections (`cm:`): Q127, Q209, Q312/Q313, Q540-Q546 (cm.cpp). Fills in
// `connect:` from the cm: peer and drops a CM QP's states: (the CM makes those transitions).
void check_cm(scenario::Scenario& s, diag::DiagSink& sink);
void check_references(const scenario::Scenario& s, diag::DiagSink& sink);
void check_transitions(scenario::Scenario& s, diag::DiagSink& sink);
void check_timeline(const scenario::Scenario& s, diag::DiagSink& sink);
void check_values(const scenario::Scenario& s, diag::DiagSink& sink);
void check_cross_qp(const scenario::Scenario& s, diag::DiagSink& sink);
// `externals:`: one RC QP each, the workloads the tool's conversation allows (externals.cpp).
void check_externals(const scenario::Scenario& s, diag::DiagSink& sink);
// A CQ without `depth:` is made deep enough for every work request its QPs can have
// outstanding (at least the default 256): the tool's own defaults never overrun (Q601).
void size_unwritten_cqs(scenario::Scenario& s);
void check_caps(const scenario::Scenario& s, diag::DiagSink& sink);
void check_scripts(const scenario::Scenario& s, diag::DiagSink& sink);
// Memory windows: binds, workloads through them, bound-ness along the timeline (Q206/Q207, Q530-Q535).
void check_memory_windows(const scenario::Scenario& s, diag::DiagSink& sink);
// Multicast groups and the workloads that send to them (Q220-Q222, Q550, Q551, Q620).
void check_multicast(const scenario::Scenario& s, diag::DiagSink& sink);
// `workers:` against the QPs a workload drives (Q152).
void check_workers(const scenario::Scenario& s, diag::DiagSink& sink);
// Two faults on one netdev (Q625): one netem per device. `local`: only the pairs that
// `qpo run --local` puts on one device (two hosts' devices with one name, or auto), for
// check_local_faults.
void check_faults(const scenario::Scenario& s, diag::DiagSink& sink, bool local = false);
// Packet events (wire: events:): on an RC/UC QP with a peer on another device, 32 per receiving host (Q570-Q572); wire expectations: the same QPs.
void check_packet_events(const scenario::Scenario& s, diag::DiagSink& sink);
// `qpo run --local` only (not part of validate): a fault between hosts that --local puts on
// one device cannot work (Q511 as an error), nor can two faults there (Q625).
void check_local_faults(const scenario::Scenario& s, diag::DiagSink& sink);

}  // namespace qpo::check
