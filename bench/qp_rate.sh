#!/bin/sh
# QPs brought to RTS per second: qpo vs a hand-written C loop making the same verbs
# (bench/rts_loop.c), alternating, in one Soft-RoCE lab guest. Prints the medians and the
# ratio qpo/C (target >= 0.95).
#   bench/qp_rate.sh [PAIRS] [ROUNDS]          (boots the lab guest itself)
# The guest gets one vCPU by default (QPO_BENCH_SMP=2 for two): INIT->RTR waits for a kernel
# worker to resolve the peer's address, and with two TCG vCPUs on a busy host that wake-up
# swings 10x from round to round; on one vCPU it is steady and both sides pay it alike.
set -eu
cd "$(dirname "$0")/.."
PAIRS=${1:-100}
ROUNDS=${2:-5}
if [ -z "${QPO_IN_LAB:-}" ]; then
  exec scripts/lab/lab.sh run --timeout 1200 --smp ${QPO_BENCH_SMP:-1} --env QPO_IN_LAB=1 -- bench/qp_rate.sh "$PAIRS" "$ROUNDS"
fi
scenario=/tmp/qp-rate-$PAIRS.yaml
# The same verbs as rts_loop.c: PAIRS RC pairs on rxe0, GID 1, no receives, no traffic.
cat > "$scenario" <<YAML
version: 1
name: qp-rate-$PAIRS-pairs
devices: { d: { name: rxe0, port: 1, gid_index: 1 } }
cqs: { c: { device: d, depth: 4096 } }
qps:
  qa: { count: $PAIRS, pd: d, type: RC, send_cq: c, recv_cq: c, connect: qb, cap: { max_send_wr: 16, max_recv_wr: 0 },
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
  qb: { count: $PAIRS, pd: d, type: RC, send_cq: c, recv_cq: c, connect: qa, cap: { max_send_wr: 16, max_recv_wr: 0 },
        states: { INIT: { qp_access_flags: [remote_write] }, RTR: {}, RTS: { sq_psn: 0x1234 } } }
YAML
build/qpo validate -q "$scenario" 2>/dev/null || { build/qpo validate "$scenario"; exit 2; }

c_rates=""
q_rates=""
ratios=""
r=0
while [ $r -lt "$ROUNDS" ]; do
  c=$(build/bench/qpo_bench_rts_loop rxe0 1 "$PAIRS" | sed 's/.*rate=//')
  q=$(build/qpo run --no-lab --no-smoke --format json "$scenario" |
      sed -n 's/.*"qps_at_rts": \([0-9]*\).*/\1/p;s/.*"bringup_seconds": \([0-9.e-]*\).*/\1/p' | paste -sd' ' |
      awk '{ printf "%.1f", $1 / $2 }')
  ratio=$(awk -v q="$q" -v c="$c" 'BEGIN { printf "%.3f", q / c }')
  echo "round $((r + 1)): C loop $c QPs/s, qpo $q QPs/s, qpo/C $ratio"
  c_rates="$c_rates $c"
  q_rates="$q_rates $q"
  ratios="$ratios $ratio"
  r=$((r + 1))
done
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cm=$(median $c_rates)
qm=$(median $q_rates)
echo "median QPs to RTS per second ($((PAIRS * 2)) QPs, $ROUNDS rounds): C loop $cm, qpo $qm, ratio qpo/C $(awk -v q="$qm" -v c="$cm" 'BEGIN { printf "%.3f", q / c }')"
# Each round runs both back to back, so a burst of host load hits both: the median of the
# per-round ratios is steadier than the ratio of the medians on a busy machine.
echo "median of the per-round ratios qpo/C: $(median $ratios)"
