#!/bin/sh
# The bring-up benchmarks' scenario on standard output: PAIRS RC pairs on rxe0, GID 1, one
# CQ of RTS_LOOP_CQ_DEPTH entries (the C loop's: a CQ's size changes what a create costs on
# rxe), no receives, no traffic - the verbs of bench/rts_loop_core.c.
#   bench/rc_pairs_scenario.sh PAIRS NAME > FILE
set -eu
PAIRS=${1:?usage: rc_pairs_scenario.sh PAIRS NAME}
NAME=${2:?usage: rc_pairs_scenario.sh PAIRS NAME}
DEPTH=$(sed -n 's/^#define RTS_LOOP_CQ_DEPTH \([0-9]*\).*/\1/p' "$(dirname "$0")/rts_loop_core.h")
cat <<YAML
version: 1
name: $NAME
devices: { d: { name: rxe0, port: 1, gid_index: 1 } }
cqs: { c: { device: d, depth: $DEPTH } }
qps:
  qa: { count: $PAIRS, pd: d, type: RC, send_cq: c, recv_cq: c, connect: qb, cap: { max_send_wr: 16, max_recv_wr: 0 },
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
  qb: { count: $PAIRS, pd: d, type: RC, send_cq: c, recv_cq: c, connect: qa, cap: { max_send_wr: 16, max_recv_wr: 0 },
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
YAML
