#!/bin/sh
# qpo against perftest's own server, beside perftest's own client: in the two-guest lab, guest b
# runs a stock `ib_write_bw` server once per client; guest a alternates, each round, the stock
# `ib_write_bw` client and qpo as ib_write_bw's client (scenarios/interop/ib-write-bw-client.yaml,
# exchange: perftest). Both clients write the same 64 KiB x N into the same kind of server over
# the same link, so the ratio qpo/perftest of BW average (and message rate) compares the data
# paths as the tool itself sees them. Prints each round and the median ratio.
#
#   bench/interop_perftest.sh [ROUNDS] [ITERATIONS]     (boots the two lab guests itself)
#   RDMA_CM=1 bench/interop_perftest.sh ...   the same with -R on both tools and qpo's
#                                             scenarios/interop/ib-write-bw-cm-client.yaml
# Everything is CPU-bound emulation under TCG: compare ratios, never absolute numbers; a
# 9-round series resolves about 3%.
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-9}
ITERS=${2:-400}
QPO=${QPO:-build/qpo}
PORT=18515
RDMA_CM=${RDMA_CM:-}
R=${RDMA_CM:+-R}
SCENARIO=scenarios/interop/ib-write-bw-client.yaml
[ -n "$RDMA_CM" ] && SCENARIO=scenarios/interop/ib-write-bw-cm-client.yaml
if [ -z "${QPO_IN_LAB:-}" ]; then
  serve="for i in \$(seq $((2 * ROUNDS))); do ib_write_bw -d rxe0 -x 1 $R -s 65536 -n $ITERS -p $PORT >/dev/null 2>&1 || exit 1; done"
  exec scripts/lab/lab.sh run2 --timeout 3600 --plain-a --env QPO_IN_LAB=1 --env QPO="$QPO" --env RDMA_CM="$RDMA_CM" \
    --cmd-a "bench/interop_perftest.sh $ROUNDS $ITERS" --cmd-b "$serve"
fi

OUT=$(mktemp -d /tmp/interop-perftest.XXXXXX)
# The stock client: retried while the server of this round is not listening yet.
tool_bw() {
  for _ in $(seq 30); do
    if ib_write_bw -d rxe0 -x 1 $R -s 65536 -n "$ITERS" -p $PORT 10.0.1.2 >"$OUT/tool" 2>&1; then
      # " 65536      400              21.93              15.90  		   0.000254"
      awk '$1 == 65536 && $2 == '"$ITERS"' { print $4, $5 }' "$OUT/tool"
      return 0
    fi
    sleep 0.5
  done
  echo "ib_write_bw client failed:" >&2
  cat "$OUT/tool" >&2
  return 1
}
# qpo as the client (it retries the dial itself).
qpo_bw() {
  "$QPO" run --format json --set "workloads.write_bw.iterations=$ITERS" --set "externals.tool.port=$PORT" \
    "$SCENARIO" >"$OUT/qpo" 2>"$OUT/qpo.err" || {
    echo "qpo failed:" >&2
    cat "$OUT/qpo.err" >&2
    return 1
  }
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
f = next(w for w in r["workloads"] if w["name"] == "write_bw")["summary"]
print(f["bw_avg"], f["msg_rate"])' "$OUT/qpo"
}

echo "round  perftest MB/s  qpo MB/s  ratio (qpo/perftest, BW average)"
ratios=""
for round in $(seq "$ROUNDS"); do
  # Alternate who goes first: the lab's slow and fast spells fall on both.
  if [ $((round % 2)) -eq 1 ]; then
    t=$(tool_bw) && q=$(qpo_bw)
  else
    q=$(qpo_bw) && t=$(tool_bw)
  fi
  tbw=${t% *}
  qbw=${q% *}
  ratio=$(python3 -c "print('%.3f' % ($qbw / $tbw))")
  ratios="$ratios $ratio"
  printf '%5d  %13s  %8s  %s\n' "$round" "$tbw" "$qbw" "$ratio"
done
python3 -c '
import statistics, sys
r = sorted(float(x) for x in sys.argv[1:])
print("median ratio %.3f (min %.3f, max %.3f, %d rounds)" % (statistics.median(r), r[0], r[-1], len(r)))' $ratios
rm -rf "$OUT"
