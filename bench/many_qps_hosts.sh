#!/bin/sh
# Many QPs per host, one host against two (issue 34 item 3), side by side in one lab run:
# for each QPS in the list, guest a first brings QPS QPs up on its own (QPS/2 loopback pairs,
# bench/many_qps_hosts.py one), then QPS QPs on each of two hosts, a in guest a and b in guest b
# behind a `qpo agent` (QPS pairs across the lab's link, bench/many_qps_hosts.py two). Both
# guests get the same vCPUs and memory, and both shapes a QP and an MR per QP on each host, so
# a host's bring-up per QP compares one for one.
# Prints per run the bring-up line (first create to the last QP at RTS; across hosts the slower
# host's, its wait for the other host and the exchange included), each host's wait in the
# exchange and, for two hosts, the control plane's tally (messages and bytes per type); then
# per QPS the ratio two hosts / one host of the time per QP, round by round and the median.
# Not a ctest: 10,000 QPs per host take a minute or two under TCG.
#
#   [ROUNDS=N] bench/many_qps_hosts.sh [QPS_LIST] [SMP] [MEM_MB] [QPO_BINARY]
#       defaults: ROUNDS=1, "1000 10000", 1, 3072, build/qpo
# The binary is copied first, so a build beside it cannot relink it under the guests. OUT is the
# lab's results share: a guest writes its logs to its own /tmp (RAM) and copies them there after
# a run, so the share's writes (9p under TCG) are not timed.
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
while [ "$r" -le "$ROUNDS" ]; do
  runs=""
  for n in $QPS_LIST; do
    for shape in one two; do
      args=""
      [ "$shape" = two ] && args="--token-file $OUT/token --set hosts.a.address=localhost --set 'hosts.b.address=\"$AGENT\"'"
      runs="$runs $OUT/qpo run --no-lab --no-smoke --verbose --phase-timeout $PHASE --timeout-ms 60000 $args \
--results /tmp/$shape-$n.json $OUT/$shape-$n.yaml >/tmp/$shape-$n.log 2>&1; echo $shape $n exit \$?; \
cp /tmp/$shape-$n.log $OUT/$shape-$n.r$r.log; cp /tmp/$shape-$n.json $OUT/$shape-$n.r$r.json;"
    done
  done
  start=$(date +%s)
  scripts/lab/lab.sh run2 --timeout 7200 --smp "$SMP" --mem "$MEM" --grace-b 2 --out "$OUT" --status-file "$OUT/status" \
    --cmd-a "$runs" --cmd-b "exec $OUT/qpo agent --listen '[::]:$PORT' --token-file $OUT/token" >"$OUT/lab.r$r.log" 2>&1
  # Guest b's agent serves until it is stopped (--grace-b): guest a's status is the round's.
  rc=$(sed -n 's/^a \([0-9]*\) .*/\1/p' "$OUT/status" 2>/dev/null)
  rc=${rc:-125}
  echo "round $r: guest a exit $rc, $(($(date +%s) - start)) s wall, $SMP vCPU and $MEM MB per guest"
  [ "$rc" -eq 0 ] || fails=$((fails + 1))
  for n in $QPS_LIST; do
    for shape in one two; do
      echo "  $shape host(s), $n QPs per host:"
      grep -E '^(bring-up: |qpo: control plane: |PASS|FAIL|ERROR)' "$OUT/$shape-$n.r$r.log" | sed 's/^/    /'
      grep -E '^ *[0-9]+ exchange +resolve ' "$OUT/$shape-$n.r$r.log" |
        awk '{printf "    host %s waited %.3f s in the exchange\n", $4, $(NF-1) / 1e6}'
    done
    # "bring-up: N QPs to RTS in S s": per host, S over the QPs one host brought up.
    one=$(sed -n 's/^bring-up: \([0-9]*\) QPs to RTS in \([0-9.]*\) s.*/\2 \1/p' "$OUT/one-$n.r$r.log")
    two=$(sed -n 's/^bring-up: \([0-9]*\) QPs to RTS in \([0-9.]*\) s.*/\2 \1/p' "$OUT/two-$n.r$r.log")
    echo "$one|$two" | awk -F'|' -v n="$n" -v r="$r" '{
      split($1, o, " "); split($2, t, " ");
      if (o[1] == "" || t[1] == "") { print "  no ratio (a run did not reach RTS)"; next }
      po = o[1] * 1000 / o[2]; pt = t[1] * 1000 / (t[2] / 2);
      printf "  %d QPs per host: one host %.3f ms per QP, two hosts %.3f ms per QP of a host; two / one = %.2f\n", n, po, pt, pt / po
      printf "%d %.4f\n", n, pt / po >> "'"$OUT/ratios"'" }'
  done
  r=$((r + 1))
done
for n in $QPS_LIST; do
  [ -f "$OUT/ratios" ] || break
  awk -v n="$n" '$1 == n { print $2 }' "$OUT/ratios" | sort -n | awk -v n="$n" '{ v[++c] = $1 } END {
    if (!c) exit; m = c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2;
    printf "median over %d rounds, %d QPs per host: two / one = %.2f\n", c, n, m }'
done
echo "$fails of $ROUNDS rounds failed; logs and JSON results in $OUT"
[ "$fails" -eq 0 ]
