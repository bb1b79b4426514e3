#!/bin/sh
# 1,000 RC QPs brought to RTS: qpo's bring-up on several threads against the sequential C loop
# of qp_rate.sh (bench/rts_loop_core.c, the same verbs), alternating, in one Soft-RoCE lab
# guest with two vCPUs. Target (issue 31): qpo/C >= 1.5 with --bringup-threads 2.
#   bench/parallel_bringup.sh [PAIRS] [ROUNDS] [THREADS]   (default 500 9 2; boots the guest)
#   QPO_BENCH_SMP=N   the guest's vCPUs (default 2)
# Each round runs the C loop, qpo with one thread and qpo with THREADS threads, the first of
# them rotating, so a burst of host load hits all three alike. Printed: every round, then the
# median of the per-round ratios (the headline: a round's windows are measured close
# together) and the medians of the rates. The ratio's resolution under TCG is ~3% over 9
# rounds (bench/README.md).
set -eu
cd "$(dirname "$0")/.."
PAIRS=${1:-500}
ROUNDS=${2:-9}
THREADS=${3:-2}
if [ -z "${QPO_IN_LAB:-}" ]; then
  exec scripts/lab/lab.sh run --timeout 1800 --smp "${QPO_BENCH_SMP:-2}" --env QPO_IN_LAB=1 \
    -- bench/parallel_bringup.sh "$PAIRS" "$ROUNDS" "$THREADS"
fi
scenario=/tmp/parallel-bringup-$PAIRS.yaml
bench/rc_pairs_scenario.sh "$PAIRS" "parallel-bringup-$PAIRS-pairs" > "$scenario"  # qp_rate.sh's pairs
build/qpo validate -q "$scenario" 2>/dev/null || { build/qpo validate "$scenario"; exit 2; }

c_rate() { build/bench/qpo_bench_rts_loop rxe0 1 "$PAIRS" | sed 's/.*rate=//'; }
# QPs at RTS over the window's seconds; a run that does not pass prints FAIL (and stops the bench).
qpo_rate() {
  build/qpo run --no-lab --no-smoke --bringup-threads "$1" --format json "$scenario" |
    sed -n 's/.*"verdict": "\([A-Z]*\)".*/\1/p;s/.*"qps_at_rts": \([0-9]*\).*/\1/p;s/.*"bringup_seconds": \([0-9.e-]*\).*/\1/p' |
    paste -sd' ' | awk '$1 != "PASS" { print "FAIL"; exit } { printf "%.1f", $2 / $3 }'
}
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v q="$1" -v c="$2" 'BEGIN { printf "%.3f", q / c }'; }

cs="" ones="" ns="" r1s="" rns=""
r=0
while [ $r -lt "$ROUNDS" ]; do
  case $((r % 3)) in
    0) c=$(c_rate); one=$(qpo_rate 1); n=$(qpo_rate "$THREADS") ;;
    1) one=$(qpo_rate 1); n=$(qpo_rate "$THREADS"); c=$(c_rate) ;;
    *) n=$(qpo_rate "$THREADS"); c=$(c_rate); one=$(qpo_rate 1) ;;
  esac
  if [ "$one" = FAIL ] || [ "$n" = FAIL ]; then echo "parallel_bringup: a qpo run did not pass" >&2; exit 1; fi
  r1=$(ratio "$one" "$c") rn=$(ratio "$n" "$c")
  echo "round $((r + 1)): C loop $c QPs/s, qpo 1 thread $one ($r1), qpo $THREADS threads $n ($rn)"
  cs="$cs $c" ones="$ones $one" ns="$ns $n" r1s="$r1s $r1" rns="$rns $rn"
  r=$((r + 1))
done
echo "median QPs to RTS per second ($((PAIRS * 2)) QPs, $ROUNDS rounds, $(nproc) vCPUs): C loop $(median $cs), qpo 1 thread $(median $ones), qpo $THREADS threads $(median $ns)"
echo "median of the per-round ratios: qpo 1 thread / C $(median $r1s), qpo $THREADS threads / C $(median $rns)"
