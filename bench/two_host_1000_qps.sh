#!/bin/sh
# 1,000 QPs across two hosts (issue 20): runs bench/two-host-1000-qps.yaml through `qpo run`
# (two lab guests, one host each, an agent in guest b; src/cli/lab_hosts.*) ROUNDS times and
# prints per round the verdict, the bring-up line (first create to the last QP at RTS, per
# host, the slower host's), the control plane's tally (messages and bytes per type: one
# exchange per host whatever the QP count) and the wall time per round of the hosts' meetings.
# Not a ctest: one round takes 2-11 minutes under TCG on this machine (CI has no room for it).
#
#   bench/two_host_1000_qps.sh [ROUNDS] [QPO_BINARY]        defaults: 1, build/qpo
# The binary is copied first, so a build running beside it cannot relink it under the guests.
set -u
cd "$(dirname "$0")/.."
ROUNDS=${1:-1}
SRC=${2:-build/qpo}
OUT=$(mktemp -d /tmp/two-host-1000.XXXXXX)
cp "$SRC" "$OUT/qpo" || exit 2
fails=0
i=1
while [ "$i" -le "$ROUNDS" ]; do
  start=$(date +%s)
  "$OUT/qpo" run --verbose --phase-timeout 600 --results "$OUT/round-$i.json" bench/two-host-1000-qps.yaml \
    >"$OUT/round-$i.log" 2>&1
  rc=$?
  end=$(date +%s)
  echo "round $i: exit $rc, $((end - start)) s wall (boots included), log $OUT/round-$i.log"
  grep -E '^(bring-up: |qpo: control plane: |qpo: wall time per round: |PASS |FAIL |ERROR )' "$OUT/round-$i.log" | sed 's/^/  /'
  [ "$rc" -eq 0 ] || fails=$((fails + 1))
  i=$((i + 1))
done
echo "$fails of $ROUNDS rounds failed; logs and JSON results in $OUT"
[ "$fails" -eq 0 ]
