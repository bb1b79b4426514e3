#!/bin/sh
# Many QPs per host, one host against two (issue 34 item 3), side by side in one lab run:
# for each QPS in the list, guest a first brings QPS QPs up on its own (QPS/2 loopback pairs,
# bench/many_qps_hosts.py one), then QPS QPs on each of two hosts, a in guest a and b in guest b
# behind a `qpo agent` (QPS pairs across the lab's link, bench/many_qps_hosts.py two). Both
# guests get the same vCPUs and memory, so a host's bring-up per QP compares one for one.
# Prints per run the bring-up line (first create to the last QP at RTS; across hosts the slower
# host's, the exchange included) and, for two hosts, the control plane's tally (messages and
# bytes per type), then per QPS the ratio two hosts / one host of the time per QP.
# Not a ctest: 10,000 QPs per host take minutes under TCG.
#
#   bench/many_qps_hosts.sh [QPS_LIST] [SMP] [MEM_MB] [QPO_BINARY]
#       defaults: "1000 10000", 1, 3072, build/qpo
# The binary is copied first, so a build beside it cannot relink it under the guests; OUT is the
# lab's results share: a guest writes its logs to its own /tmp (RAM) and copies them there after
# a run, so the share's writes (9p under TCG) are not timed.
set -u
cd "$(dirname "$0")/.."
QPS_LIST=${1:-1000 10000}
SMP=${2:-1}
MEM=${3:-3072}
SRC=${4:-build/qpo}
OUT=$(mktemp -d /tmp/many-qps-hosts.XXXXXX)
cp "$SRC" "$OUT/qpo" || exit 2
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$OUT/token" && chmod 600 "$OUT/token"
PORT=7000
AGENT="tcp://[fd00:1::2]:$PORT"
# Seconds any host may take to the next meeting: the exchange waits for the slower host's creates.
PHASE=1800
runs=""
for n in $QPS_LIST; do
  python3 bench/many_qps_hosts.py one "$n" >"$OUT/one-$n.yaml" || exit 2
  python3 bench/many_qps_hosts.py two "$n" >"$OUT/two-$n.yaml" || exit 2
  runs="$runs $OUT/qpo run --no-lab --no-smoke --verbose --phase-timeout $PHASE --timeout-ms 60000 \
--results /tmp/one-$n.json $OUT/one-$n.yaml >/tmp/one-$n.log 2>&1; echo one $n exit \$?; \
cp /tmp/one-$n.log /tmp/one-$n.json $OUT/;"
  runs="$runs $OUT/qpo run --no-lab --no-smoke --verbose --phase-timeout $PHASE --timeout-ms 60000 \
--token-file $OUT/token --set hosts.a.address=localhost --set 'hosts.b.address=\"$AGENT\"' \
--results /tmp/two-$n.json $OUT/two-$n.yaml >/tmp/two-$n.log 2>&1; echo two $n exit \$?; \
cp /tmp/two-$n.log /tmp/two-$n.json $OUT/;"
done
start=$(date +%s)
scripts/lab/lab.sh run2 --timeout 7200 --smp "$SMP" --mem "$MEM" --grace-b 2 --out "$OUT" --status-file "$OUT/status" \
  --cmd-a "$runs" --cmd-b "exec $OUT/qpo agent --listen '[::]:$PORT' --token-file $OUT/token" >"$OUT/lab.log" 2>&1
# Guest b's agent serves until it is stopped (--grace-b): guest a's status is the run's.
rc=$(sed -n 's/^a \([0-9]*\) .*/\1/p' "$OUT/status" 2>/dev/null)
rc=${rc:-125}
echo "lab: guest a exit $rc, $(( $(date +%s) - start )) s wall, $SMP vCPU and $MEM MB per guest; logs in $OUT"
grep -E '^(one|two) [0-9]+ exit' "$OUT/lab.log"
for n in $QPS_LIST; do
  for shape in one two; do
    echo "$shape host(s), $n QPs per host:"
    grep -E '^(bring-up: |qpo: control plane: |PASS|FAIL|ERROR)' "$OUT/$shape-$n.log" | sed 's/^/  /'
  done
  # "bring-up: N QPs to RTS in S s": per host, S over the QPs one host brought up.
  one=$(sed -n 's/^bring-up: \([0-9]*\) QPs to RTS in \([0-9.]*\) s.*/\2 \1/p' "$OUT/one-$n.log")
  two=$(sed -n 's/^bring-up: \([0-9]*\) QPs to RTS in \([0-9.]*\) s.*/\2 \1/p' "$OUT/two-$n.log")
  echo "$one|$two" | awk -F'|' -v n="$n" '{
    split($1, o, " "); split($2, t, " ");
    if (o[1] == "" || t[1] == "") { print "  no ratio (a run did not reach RTS)"; next }
    po = o[1] * 1000 / o[2]; pt = t[1] * 1000 / (t[2] / 2);
    printf "  per QP of a host: one host %.3f ms, two hosts %.3f ms; two / one = %.2f\n", po, pt, pt / po }'
done
[ "$rc" -eq 0 ]
