#!/bin/sh
# QPs brought to RTS per second: qpo vs a hand-written C loop making the same verbs
# (bench/rts_loop_core.c), alternating, in one Soft-RoCE lab guest. Target: qpo/C >= 0.95.
#   bench/qp_rate.sh [PAIRS] [ROUNDS]          (boots the lab guest itself)
#   QPO_BENCH_ASLR=on|off|both (default both)  address-space randomisation for both programs
# Three series: whole processes (`qpo run` against rts_loop) with ASLR on, the same with ASLR
# off, and both in one process (qp_rate_inproc.cpp, 5 x ROUNDS rounds: they are short).
# Each prints the median of the per-round ratios (the headline: a round's two windows are
# measured close together), the ratio of the medians and the ratio of the best rounds.
# The guest gets one vCPU by default (QPO_BENCH_SMP=2 for two): INIT->RTR waits for a kernel
# worker to resolve the peer's address, and with two TCG vCPUs on a busy host that wake-up
# swings 10x from round to round; on one vCPU it is steady and both sides pay it alike.
#
# Why two ASLR modes. The lab guest is emulated (TCG): QEMU translates guest code before it
# runs it and keeps the translation keyed by virtual and physical address. With ASLR every
# process maps its code at new addresses, so each run translates afresh every piece of code
# it executes - tens of microseconds per function the first time it runs in that process,
# about a thousand times what a cold instruction cache costs on real hardware. That bills
# each program for the volume of its code run once inside the window (qpo's is larger than
# a 100-line loop's), a cost no RDMA machine has. With ASLR off (setarch -R, per process,
# both programs) the translations of earlier rounds are reused and the window measures the
# verbs and the work around them. Both are printed; see bench/README.md for the figures.
set -eu
cd "$(dirname "$0")/.."
PAIRS=${1:-100}
ROUNDS=${2:-21}
ASLR=${QPO_BENCH_ASLR:-both}
case $ASLR in on|off|both) ;; *) echo "qp_rate: QPO_BENCH_ASLR must be on, off or both" >&2; exit 2 ;; esac
if [ -z "${QPO_IN_LAB:-}" ]; then
  exec scripts/lab/lab.sh run --timeout 1800 --smp ${QPO_BENCH_SMP:-1} --env QPO_IN_LAB=1 --env QPO_BENCH_ASLR="$ASLR" \
    -- bench/qp_rate.sh "$PAIRS" "$ROUNDS"
fi
scenario=/tmp/qp-rate-$PAIRS.yaml
bench/rc_pairs_scenario.sh "$PAIRS" "qp-rate-$PAIRS-pairs" > "$scenario"  # the verbs of rts_loop_core.c
build/qpo validate -q "$scenario" 2>/dev/null || { build/qpo validate "$scenario"; exit 2; }

c_rate() { $wrap build/bench/qpo_bench_rts_loop rxe0 1 "$PAIRS" | sed 's/.*rate=//'; }
qpo_rate() {
  $wrap build/qpo run --no-lab --no-smoke --format json "$scenario" |
    sed -n 's/.*"qps_at_rts": \([0-9]*\).*/\1/p;s/.*"bringup_seconds": \([0-9.e-]*\).*/\1/p' | paste -sd' ' |
    awk '{ printf "%.1f", $1 / $2 }'
}
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
best() { echo "$@" | tr ' ' '\n' | grep . | sort -g | tail -1; }
ratio() { awk -v q="$1" -v c="$2" 'BEGIN { printf "%.3f", q / c }'; }

# One series of ROUNDS rounds; each round runs both programs back to back, the first one
# alternating, so a burst of host load hits both.
series() {
  mode=$1
  if [ "$mode" = off ]; then wrap="setarch $(uname -m) -R"; else wrap=""; fi
  c_rates="" q_rates="" ratios=""
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    if [ $((r % 2)) -eq 0 ]; then c=$(c_rate); q=$(qpo_rate); else q=$(qpo_rate); c=$(c_rate); fi
    rr=$(ratio "$q" "$c")
    echo "aslr $mode round $((r + 1)): C loop $c QPs/s, qpo $q QPs/s, qpo/C $rr"
    c_rates="$c_rates $c" q_rates="$q_rates $q" ratios="$ratios $rr"
    r=$((r + 1))
  done
  cm=$(median $c_rates) qm=$(median $q_rates)
  echo "aslr $mode: median QPs to RTS per second ($((PAIRS * 2)) QPs, $ROUNDS rounds): C loop $cm, qpo $qm, ratio qpo/C $(ratio "$qm" "$cm")"
  # The median of the per-round ratios is steadier than the ratio of the medians on a busy
  # host; the best round of each is the one least disturbed by anything else.
  echo "aslr $mode: median of the per-round ratios qpo/C $(median $ratios); best rounds: C $(best $c_rates), qpo $(best $q_rates), ratio $(ratio "$(best $q_rates)" "$(best $c_rates)")"
}

build/bench/qpo_bench_qp_rate_inproc rxe0 1 "$PAIRS" $((ROUNDS * 5)) | grep '^inproc:'
if [ "$ASLR" = both ] || [ "$ASLR" = on ]; then series on; fi
if [ "$ASLR" = both ] || [ "$ASLR" = off ]; then
  # The first round of each program fills the translation cache: not counted.
  wrap="setarch $(uname -m) -R"; c_rate >/dev/null; qpo_rate >/dev/null
  series off
fi
