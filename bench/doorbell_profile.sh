#!/bin/sh
# Where a work request's time goes, perftest against qpo, on rxe: the kernel's time inside each
# doorbell write() and each tool's own time between two of them (bench/doorbell_shim.c).
#   bench/doorbell_profile.sh [ROUNDS] [send|write|read]     (default: 5 rounds of send)
# Runs in one lab guest (2 vCPUs), the tools alternating; prints each run's bandwidth and the
# sender thread's figures. On rxe the doorbell runs the whole WR in the kernel, so a gap in
# bandwidth that the "between" column cannot explain is the kernel's, not the tool's.
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
TEST=${2:-send}
if [ -z "${QPO_IN_LAB:-}" ]; then
  exec scripts/lab/lab.sh run --smp 2 --timeout 1800 --env QPO_IN_LAB=1 -- bench/doorbell_profile.sh "$ROUNDS" "$TEST"
fi
SHIM=$PWD/build/bench/libqpo_doorbell_shim.so
[ -f "$SHIM" ] || { echo "no $SHIM: build first (cmake --build build)" >&2; exit 2; }
# perftest's queue shapes for 64 KiB (tx depth 128, CQ moderation off above 8 KiB, no inline).
shape="--cq-depth 128 --max-send-wr 128 --max-inline 0"
case $TEST in
  send) tool=ib_send_bw; workload=send_bw; shape="$shape --max-recv-wr 512 --recv-cq-depth 512" ;;
  write) tool=ib_write_bw; workload=write_bw; shape="$shape --max-recv-wr 1" ;;
  read) tool=ib_read_bw; workload=read_bw; shape="$shape --max-recv-wr 1" ;;
  *) echo "unknown test $TEST (send, write or read)" >&2; exit 2 ;;
esac
out=$(mktemp -d /tmp/doorbell.XXXXXX)
port=19100
r=1
while [ "$r" -le "$ROUNDS" ]; do
  port=$((port + 1))
  LD_PRELOAD=$SHIM $tool -d rxe0 -x 1 -F -p $port -s 65536 -n 2000 >"$out/server" 2>"$out/server.err" &
  sleep 1
  LD_PRELOAD=$SHIM $tool -d rxe0 -x 1 -F -p $port -s 65536 -n 2000 127.0.0.1 >"$out/client" 2>"$out/client.err"
  wait
  bw=$(awk '/^ *65536 / { print $4; exit }' "$out/client")
  echo "round $r perftest $bw MB/s"
  cat "$out/server.err" "$out/client.err" | grep '^doorbell:' | sed 's/^/  /'
  LD_PRELOAD=$SHIM build/bench/qpo_bench_lua $shape $workload size=65536 iterations=2000 check=false \
    inline=0 tx_depth=128 cq_mod=1 >"$out/qpo" 2>"$out/qpo.err"
  echo "round $r qpo $(sed -n 's/.* bw_avg=\([0-9.]*\).*/\1/p' "$out/qpo" | head -1) MB/s"
  grep -h '^doorbell:' "$out/qpo.err" "$out/qpo" | sed 's/^/  /'
  r=$((r + 1))
done
rm -rf "$out"
