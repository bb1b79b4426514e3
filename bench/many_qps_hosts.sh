#!/bin/sh
# Many QPs per host, one host against two (issue 34 item 3), side by side in one lab run:
# for each QPS in the list, per round,
#   alone: guest a brings QPS QPs up on its own (QPS/2 loopback pairs, bench/many_qps_hosts.py
#          one) while guest b idles;
#   busy:  guests a and b each run that same one-host scenario at the same time, so each host's
#          own work meets the CPU contention the two-host run has (two TCG guests on the
#          host's cores, each guest's emulation thread and I/O thread);
#   two:   QPS QPs on each of two hosts, a in guest a and b in guest b behind a `qpo agent`
#          (QPS pairs across the lab's link, bench/many_qps_hosts.py two).
# Both guests get the same vCPUs and memory, and every shape puts a QP and an MR per QP on each
# host, so a host's bring-up per QP compares one for one.
# Prints per run the bring-up line (first create to the last QP at RTS; across hosts the slower
# host's, its wait for the other host and the exchange included), each host's wait in the
# exchange and, for two hosts, the control plane's tally (messages and bytes per type); then
# per QPS the ratios of the time per QP of a host: two / alone, and two / busy (busy: the
# slower of the two guests, which is the least a two-host window can take: each host's RTR
# needs the other's QPs made); round by round and the medians.
# Not a ctest: 10,000 QPs per host take a minute or two under TCG.
#
#   [ROUNDS=N] bench/many_qps_hosts.sh [QPS_LIST] [SMP] [MEM_MB] [QPO_BINARY]
#       defaults: ROUNDS=1, "1000 10000", 1, 3072, build/qpo
# The binary is copied first, so a build beside it cannot relink it under the guests. OUT is the
# lab's results share: a guest writes its logs to its own /tmp (RAM) and copies them there after
# a run, so the share's writes (9p under TCG) are not timed. The guests keep in step through
# marker files in OUT.
set -u
cd "$(dirname "$0")/.."
QPS_LIST=${1:-1000 10000}
SMP=${2:-1}
MEM=${3:-3072}
SRC=${4:-build/qpo}
ROUNDS=${ROUNDS:-1}
OUT=$(mktemp -d /tmp/many-qps-hosts.XXXXXX)
cp "$SRC" "$OUT/qpo" || exit 2
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$OUT/token" && chmod 600 "$OUT/token"
PORT=7000
AGENT="tcp://[fd00:1::2]:$PORT"
PHASE=1800  # seconds any host may take to the next meeting
for n in $QPS_LIST; do
  python3 bench/many_qps_hosts.py one "$n" >"$OUT/one-$n.yaml" || exit 2
  python3 bench/many_qps_hosts.py two "$n" >"$OUT/two-$n.yaml" || exit 2
done
fails=0
r=1
# run SHAPE N GUEST: one qpo run of SHAPE-N.yaml in GUEST, its log and results into OUT by round.
run() {
  args=""
  [ "$1" = two ] && args="--token-file $OUT/token --set hosts.a.address=localhost --set 'hosts.b.address=\"$AGENT\"'"
  yaml=$1; [ "$1" = two ] || yaml=one
  echo "$OUT/qpo run --no-lab --no-smoke --verbose --phase-timeout $PHASE --timeout-ms 60000 $args \
--results /tmp/$1-$2-$3.json $OUT/$yaml-$2.yaml >/tmp/$1-$2-$3.log 2>&1; echo $1 $2 $3 exit \$?; \
cp /tmp/$1-$2-$3.log $OUT/$1-$2-$3.r\$R.log; cp /tmp/$1-$2-$3.json $OUT/$1-$2-$3.r\$R.json;"
}
# Waits in a guest until marker file $1 of this round exists in OUT.
wait_for() { echo "while [ ! -e $OUT/$1.r\$R ]; do sleep 0.05; done;"; }
mark() { echo "touch $OUT/$1.r\$R;"; }
# "bring-up: N QPs to RTS in S s" of log $1: milliseconds per QP of a host ($2: hosts in the run).
per_qp() {
  sed -n 's/^bring-up: \([0-9]*\) QPs to RTS in \([0-9.]*\) s.*/\2 \1/p' "$1" 2>/dev/null |
    awk -v h="$2" '{ printf "%.4f", $1 * 1000 / ($2 / h) }'
}
while [ "$r" -le "$ROUNDS" ]; do
  cmd_a="R=$r;" cmd_b="R=$r;"
  for n in $QPS_LIST; do
    # busy: both start within a poll of each other (b says it is starting, a follows).
    cmd_a="$cmd_a $(run alone "$n" a) $(mark "alone-$n") $(wait_for "busy-go-$n") $(run busy "$n" a) $(wait_for "busy-b-$n")"
    cmd_b="$cmd_b $(wait_for "alone-$n") $(mark "busy-go-$n") $(run busy "$n" b) $(mark "busy-b-$n")"
  done
  # Then every two-host run, once guest b's agent listens.
  cmd_b="$cmd_b (sleep 1; $(mark agent)) & exec $OUT/qpo agent --listen '[::]:$PORT' --token-file $OUT/token"
  cmd_a="$cmd_a $(wait_for agent)"
  for n in $QPS_LIST; do cmd_a="$cmd_a $(run two "$n" a)"; done
  start=$(date +%s)
  scripts/lab/lab.sh run2 --timeout 7200 --smp "$SMP" --mem "$MEM" --grace-b 2 --out "$OUT" --status-file "$OUT/status" \
    --cmd-a "$cmd_a" --cmd-b "$cmd_b" >"$OUT/lab.r$r.log" 2>&1
  # Guest b's agent serves until it is stopped (--grace-b): guest a's status is the round's.
  rc=$(sed -n 's/^a \([0-9]*\) .*/\1/p' "$OUT/status" 2>/dev/null)
  rc=${rc:-125}
  echo "round $r: guest a exit $rc, $(($(date +%s) - start)) s wall, $SMP vCPU and $MEM MB per guest"
  [ "$rc" -eq 0 ] || fails=$((fails + 1))
  for n in $QPS_LIST; do
    for run in alone-$n-a busy-$n-a busy-$n-b two-$n-a; do
      echo "  $run ($n QPs per host):"
      grep -E '^(bring-up: |qpo: control plane: |PASS|FAIL|ERROR)' "$OUT/$run.r$r.log" 2>/dev/null | sed 's/^/    /'
      grep -E '^ *[0-9]+ exchange +resolve ' "$OUT/$run.r$r.log" 2>/dev/null |
        awk '{printf "    host %s waited %.3f s in the exchange\n", $4, $(NF-1) / 1e6}'
    done
    alone=$(per_qp "$OUT/alone-$n-a.r$r.log" 1)
    busy_a=$(per_qp "$OUT/busy-$n-a.r$r.log" 1)
    busy_b=$(per_qp "$OUT/busy-$n-b.r$r.log" 1)
    two=$(per_qp "$OUT/two-$n-a.r$r.log" 2)
    echo "$alone $busy_a $busy_b $two" | awk -v n="$n" '{
      if (NF < 4) { print "  no ratio (a run did not reach RTS)"; next }
      busy = $2 > $3 ? $2 : $3
      printf "  %d QPs per host, ms per QP of a host: alone %.3f, busy a %.3f b %.3f, two hosts %.3f; two / alone = %.2f, two / busy = %.2f\n", n, $1, $2, $3, $4, $4 / $1, $4 / busy
      printf "%d %.4f %.4f\n", n, $4 / $1, $4 / busy >> "'"$OUT/ratios"'" }'
  done
  r=$((r + 1))
done
for n in $QPS_LIST; do
  [ -f "$OUT/ratios" ] || break
  for col in 2 3; do
    what=$([ $col = 2 ] && echo "two / alone" || echo "two / busy")
    awk -v n="$n" -v c="$col" '$1 == n { print $c }' "$OUT/ratios" | sort -n | awk -v n="$n" -v w="$what" '{ v[++c] = $1 } END {
      if (!c) exit; m = c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2;
      printf "median over %d rounds, %d QPs per host: %s = %.2f\n", c, n, w, m }'
  done
done
echo "$fails of $ROUNDS rounds failed; logs and JSON results in $OUT"
[ "$fails" -eq 0 ]
