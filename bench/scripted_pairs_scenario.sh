#!/bin/sh
# A scale scenario for the planner on standard output: PAIRS RC pairs (cli.I <-> srv.I) on one
# device and a Lua write_bw workload over the group, so scripts own every QP's receive queue
# (scenario/script_qps.h). `qpo plan` of it timed at growing PAIRS shows whether bring-up's
# per-QP facts (receive counts, slot sizes) cost a scan per QP.
#   bench/scripted_pairs_scenario.sh PAIRS > FILE; /usr/bin/time qpo plan FILE > /dev/null
set -eu
N=${1:?usage: scripted_pairs_scenario.sh PAIRS}
cat <<YAML
version: 1
name: scripted-pairs
hosts:   { a: {} }
devices: { da: { host: a, name: auto, port: 1, gid_index: auto } }
pds:     { pa: { device: da } }
mrs:
  src: { pd: pa, size: 64KiB, access: [local_write] }
  dst: { pd: pa, size: 64KiB, access: [local_write, remote_write] }
cqs:
  cqa: { device: da, depth: $((N * 16)) }
qps:
  cli: { count: $N, pd: pa, type: RC, send_cq: cqa, recv_cq: cqa, connect: srv, cap: { max_send_wr: 4, max_recv_wr: 4 },
         states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }
  srv: { count: $N, pd: pa, type: RC, send_cq: cqa, recv_cq: cqa, connect: cli, cap: { max_send_wr: 4, max_recv_wr: 4 },
         states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: {} } }
workloads:
  w: { qp: cli, script: "builtin:write_bw", local_mr: src, remote_mr: dst, size: 64 }
YAML
