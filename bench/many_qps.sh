#!/bin/sh
# Many QPs (issue 20): aggregate RDMA WRITE bandwidth over N QPs driven by W worker threads
# (`workers: W`, builtin:write_bw on a counted group of N RC pairs) against `ib_write_bw -q N`
# (perftest: one thread for all N QPs), alternating, in one Soft-RoCE lab guest. Prints per
# point the medians (MB/sec, MB = 2^20, both tools' unit) and the ratio qpo/perftest.
# Everything is CPU-bound emulation in the lab: compare ratios, never absolute numbers.
# Both tools run in iterations mode (perftest -n, qpo iterations:, both per QP): perftest's
# duration mode (-D) with -q N reported 0.00 MB/sec here (bench/results/2026-11-27-many-qps.md).
#
#   bench/many_qps.sh [ROUNDS] [WRITES] [QP_COUNTS] [WORKER_COUNTS]
#   defaults: 3 rounds, 2000 writes per point (WRITES/N per QP, at least 128),
#   "1 2 8 64", "1 2"                                          (boots the lab guest itself)
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
WRITES=${2:-2000}
COUNTS=${3:-"1 2 8 64"}
WORKERS=${4:-"1 2"}
if [ -z "${QPO_IN_LAB:-}" ]; then
  exec scripts/lab/lab.sh run --timeout 3600 --env QPO_IN_LAB=1 --env QPO_BENCH_RUN="${QPO_BENCH_RUN:-build/qpo}" -- bench/many_qps.sh "$ROUNDS" "$WRITES" "$COUNTS" "$WORKERS"
fi

DEV=rxe0
GID=${QPO_BENCH_GID:-1}
QPO=${QPO_BENCH_RUN:-build/qpo}
SIZE=65536
OUT=$(mktemp -d /tmp/many-qps.XXXXXX)
PORT=19515

# Writes per QP at N QPs: WRITES in all, at least one send queue's depth (128) per QP.
per_qp() { n=$(($WRITES / $1)); [ $n -ge 128 ] || n=128; echo $n; }

# ib_write_bw -q N -n per_qp: server in the background, client in the foreground (retried
# while the server is not listening yet). Prints BW average (MB/sec), 0 on failure.
perftest() {
  PORT=$((PORT + 1))
  set -- -d $DEV -x "$GID" -F -p $PORT -q "$1" -s $SIZE -n "$(per_qp "$1")"
  timeout 300 ib_write_bw "$@" >"$OUT/server" 2>&1 &
  server=$!
  tries=0
  while :; do
    sleep 1
    timeout 300 ib_write_bw "$@" 127.0.0.1 >"$OUT/client" 2>&1 && break
    tries=$((tries + 1))
    if [ $tries -ge 5 ] || ! grep -q "Couldn't connect\|Unable to open file descriptor" "$OUT/client"; then
      echo "ib_write_bw $* failed:" >&2
      cat "$OUT/client" >&2
      echo 0 >"$OUT/client.bw"
      wait $server || true
      return
    fi
  done
  wait $server || true
  column 4 "$OUT/client"
}

# Column N of the first row of numbers after a "#bytes" header (perftest's table, and the
# same table in qpo's report).
column() { awk -v n="$1" '/#bytes/ { h = 1; next } h && /^ *[0-9]+ +[0-9]/ { print $n; exit }' "$2"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'; }

# N RC pairs on rxe0 (cli.I -> srv.I), write_bw on the group with W workers, perftest's
# defaults (tx_depth 128), per_qp writes on each QP.
scenario() {
  n=$1 w=$2
  cat <<YAML
version: 1
name: many-qps-bench-$n-$w
hosts:   { a: {} }
devices: { da: { host: a, name: $DEV, port: 1, gid_index: $GID } }
pds:     { pa: { device: da } }
mrs:
  ma: { pd: pa, size: 256KiB, access: [local_write] }
  mb: { pd: pa, size: 256KiB, access: [local_write, remote_write] }
cqs:
  cqa: { device: da, depth: $((n * 136 + 64)) }
  cqb: { device: da, depth: $((n * 16 + 64)) }
qps:
  cli:
    count: $n
    pd: pa
    type: RC
    send_cq: cqa
    recv_cq: cqa
    cap: { max_send_wr: 128, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1 }
    connect: srv
    states: &rc
      INIT: { pkey_index: 0, port_num: 1, qp_access_flags: [remote_write] }
      RTR:  { path_mtu: auto, dest_qp_num: peer, rq_psn: peer, max_dest_rd_atomic: 1, min_rnr_timer: 12 }
      RTS:  { sq_psn: random, timeout: 14, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 1 }
  srv:
    count: $n
    pd: pa
    type: RC
    send_cq: cqb
    recv_cq: cqb
    cap: { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1 }
    connect: cli
    states: *rc
workloads:
  bw:
    qp: cli
    script: builtin:write_bw
    local_mr: ma
    remote_mr: mb
    workers: $w
    args: { size: $SIZE, iterations: $(per_qp "$n"), check: false }
YAML
}

qpo() {
  scenario "$1" "$2" >"$OUT/s.yaml"
  if ! $QPO run --no-smoke --no-lab "$OUT/s.yaml" >"$OUT/qpo" 2>&1; then
    echo "qpo run ($1 QPs, $2 workers) failed:" >&2
    tail -20 "$OUT/qpo" >&2
    echo 0
    return
  fi
  column 4 "$OUT/qpo"
}

echo "# many QPs: $SIZE-byte RDMA WRITE, $WRITES writes per point, $ROUNDS rounds, $(date -u +%FT%TZ), $(nproc) vCPUs"
printf "%-6s %-12s %-14s %-14s %-8s %s\n" QPs perftest "qpo w=1" "qpo w=2" ratio1 ratio2
for n in $COUNTS; do
  p="" q1="" q2=""
  for r in $(seq "$ROUNDS"); do
    p="$p $(perftest "$n")"
    for w in $WORKERS; do
      v=$(qpo "$n" "$w")
      if [ "$w" = 1 ]; then q1="$q1 $v"; else q2="$q2 $v"; fi
    done
  done
  mp=$(echo "$p" | median) m1=$(echo "$q1" | median) m2=$(echo "$q2" | median)
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
  printf "%-6s %-12s %-14s %-14s %-8s %s\n" "$n" "$mp" "$m1" "$m2" "$(ratio "$m1" "$mp")" "$(ratio "$m2" "$mp")"
  echo "  raw: perftest [$p ] w=1 [$q1 ] w=2 [$q2 ]"
done
rm -rf "$OUT"
