#!/bin/sh
# perftest vs qpo's Lua workloads on the same device, same sizes, same queue settings,
# alternating, in one Soft-RoCE lab guest. Prints the medians and the ratio qpo/perftest:
#   bandwidth and message rate: higher is better (target >= 1.00)
#   latency (t_typical, the median): lower is better (target <= 1.00)
#   per-WR Lua hook (examples/write_bw_hook) against ib_write_bw: target >= 0.90
# Everything is CPU-bound emulation in the lab: compare ratios, never absolute numbers.
#
#   bench/perftest_compare.sh [ROUNDS] [TESTS...]       (boots the lab guest itself)
#   TESTS: write64 write64k send read send_lat write_lat hook (default: all)
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
[ $# -gt 0 ] && shift
TESTS=${*:-"write64 write64k send read send_lat write_lat hook"}
if [ -z "${QPO_IN_LAB:-}" ]; then
  # QPO_* variables (QPO_BENCH_BIN, QPO_BENCH_CONTEXTS) reach the guest.
  exec scripts/lab/lab.sh run --timeout 3600 --env QPO_IN_LAB=1 -- bench/perftest_compare.sh "$ROUNDS" $TESTS
fi

DEV=rxe0
GID=${QPO_BENCH_GID:-1}
QPO=${QPO_BENCH_BIN:-build/bench/qpo_bench_lua}
# QPO_BENCH_CONTEXTS=2: qpo's two sides in a device context each, as perftest's two processes
# have (and qpo on two hosts); the default, one context, is what `qpo run` has for a loopback
# pair on one host.
[ "${QPO_BENCH_CONTEXTS:-1}" = 2 ] && QPO="$QPO --context-per-side"
# QPO_BENCH_PROCESSES=2: the latency tests run qpo as a two-host scenario on this one machine
# (`qpo run --agents`: an agent process per host, each with its own device context and worker),
# which is perftest's structure - a server and a client process - and qpo's own across two
# hosts. The default, one process with a thread per side, is what `qpo run` does for a
# loopback pair on one host. The bandwidth tests stay in one process either way.
PROCESSES=${QPO_BENCH_PROCESSES:-1}
QPO_RUN=${QPO_BENCH_RUN:-build/qpo}
OUT=$(mktemp -d /tmp/perftest-compare.XXXXXX)
PORT=18515

# perftest: server in the background, client in the foreground (retried while the server is
# not listening yet); both under a timeout so a lost peer cannot hang the run.
perftest() {
  tool=$1
  shift
  PORT=$((PORT + 1))
  timeout 300 "$tool" -d $DEV -x "$GID" -F -p $PORT "$@" >"$OUT/server" 2>&1 &
  server=$!
  tries=0
  while :; do
    sleep 1
    timeout 300 "$tool" -d $DEV -x "$GID" -F -p $PORT "$@" 127.0.0.1 >"$OUT/client" 2>&1 && break
    tries=$((tries + 1))
    if [ $tries -ge 5 ] || ! grep -q "Couldn't connect\|Unable to open file descriptor" "$OUT/client"; then
      echo "$tool $* failed:" >&2
      cat "$OUT/client" >&2
      break
    fi
  done
  wait $server || true
}

# A header value from perftest's output: "TX depth        : 128" -> 128.
header() { sed -n "s/^ *$1 *: *\([0-9]*\).*/\1/p" "$OUT/client" | head -1; }
# Column N of the result row: the first line of numbers after the "#bytes" header (-U puts
# its "#, usec" listing, "1, 10.7" lines, in between).
# `qpo run` prints the same table, indented, in its report.
column() { awk -v n="$1" '/#bytes/ { h = 1; next } h && /^ *[0-9]+ +[0-9]/ { print $n; exit }' "${2:-$OUT/client}"; }
# The first "#, usec" listing (perftest -U, qpo unsorted=true): one time per line.
iteration_times() { awk '/^ *#, usec/ { n++; next } n == 1 && /^ *[0-9]+, / { print $2 }'; }
qpo_value() { sed -n "s/.* $1=\([0-9.e+-]*\).*/\1/p" "$OUT/qpo" | head -1; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'; }

# qpo with perftest's settings (from $OUT/$name.settings); prints its metric, 0 on failure.
# The loopback pair gets perftest's queue shapes too: a CQ of tx_depth entries per QP, and for
# the send tests (which perftest gives a receive CQ of their own) a second CQ of rx_depth
# entries for the receives; QPs with max_send_wr = tx_depth, max_recv_wr = rx_depth and
# max_inline_data = perftest's inline size.
run_qpo() {
  set -- $(cat "$OUT/$name.settings")
  txd=${1#tx_depth=} inl=${3#inline=} rxd=${4#rx_depth=}
  extra=$3
  [ "$metric" = bw ] && extra="$extra $1 $2"
  extra=$(echo "$extra" | sed 's/inline= /inline=0 /; s/inline=$/inline=0/; s/cq_mod= /cq_mod=1 /; s/cq_mod=$/cq_mod=1/')
  shape="--cq-depth ${txd:-128} --max-send-wr ${txd:-128} --max-recv-wr ${rxd:-1} --max-inline ${inl:-0}"
  # The latency tests get perftest's memory too: a page per direction (its cycle buffer), not
  # qpo_bench_lua's 16 MiB (its default sizes the bandwidth tests).
  [ "$metric" = lat ] && shape="$shape --mr 8192"
  case $tool in ib_send_*) shape="$shape --recv-cq-depth ${rxd:-512}" ;; esac
  if [ "$metric" = lat ] && [ "$PROCESSES" = 2 ]; then
    two_host_scenario "${txd:-128}" "${rxd:-1}" "${inl:-0}" >"$OUT/two-host.yaml"
    if ! $QPO_RUN run --agents --no-smoke --no-lab "$OUT/two-host.yaml" >"$OUT/qpo" 2>&1; then
      echo "qpo run --agents $workload failed:" >&2
      cat "$OUT/qpo" >&2
      echo 0
    else
      column 5 "$OUT/qpo"
    fi
    return
  fi
  if ! $QPO $shape $workload $qargs $extra check=false >"$OUT/qpo" 2>&1; then
    echo "qpo $workload failed:" >&2
    cat "$OUT/qpo" >&2
    echo 0
  elif [ "$metric" = bw ]; then qpo_value bw_avg; else qpo_value t_typical; fi
}

# The latency test as a two-host scenario, both hosts this machine, with perftest's queue
# shapes (as run_qpo gives the in-process pair): TX_DEPTH RX_DEPTH INLINE. The send test gets a
# receive CQ of its own, as ib_send_lat has; the write test one CQ per side.
two_host_scenario() {
  txd=$1 rxd=$2 inl=$3
  case $workload in
    send_lat) access="[local_write]" qp_access="[]" ;;
    *) access="[local_write, remote_write]" qp_access="[remote_write]" ;;
  esac
  cat <<YAML
version: 1
name: bench-$workload-two-processes
hosts: { a: { address: localhost }, b: { address: localhost } }
devices:
  da: { host: a, name: $DEV, port: 1, gid_index: $GID }
  db: { host: b, name: $DEV, port: 1, gid_index: $GID }
mrs:
  ma: { pd: da, size: 8192, access: $access }
  mb: { pd: db, size: 8192, access: $access }
cqs:
  ca: { device: da, depth: $((txd + rxd)) }
  cb: { device: db, depth: $((txd + rxd)) }
  ra: { device: da, depth: $rxd }
  rb: { device: db, depth: $rxd }
qps:
YAML
  case $workload in send_lat) ra=ra rb=rb ;; *) ra=ca rb=cb ;; esac
  for q in a:b:$ra b:a:$rb; do
    me=${q%%:*} rest=${q#*:}
    peer=${rest%%:*} rcq=${rest#*:}
    echo "  q$me: { pd: d$me, type: RC, send_cq: c$me, recv_cq: $rcq, connect: q$peer,"
    echo "        cap: { max_send_wr: $txd, max_recv_wr: $rxd, max_inline_data: $inl },"
    echo "        states: { INIT: { qp_access_flags: $qp_access }, RTR: {}, RTS: {} } }"
  done
  echo "workloads:"
  echo "  $workload:"
  echo "    qp: qa"
  echo "    script: \"builtin:$workload\""
  echo "    local_mr: ma"
  echo "    remote_mr: mb"
  echo "    args: { $(echo "$qargs inline=$inl check=false" | sed 's/=/: /g; s/ \([a-z_]*:\)/, \1/g') }"
}

# One pair of runs: perftest TOOL/ARGS, then qpo WORKLOAD/ARGS with perftest's effective
# queue settings (it adjusts some to the device), collecting metric M of each.
#   pair NAME METRIC PERFTEST_TOOL "PERFTEST_ARGS" QPO_WORKLOAD "QPO_ARGS"
pair() {
  name=$1 metric=$2 tool=$3 pargs=$4 workload=$5 qargs=$6
  # The queue settings perftest really used (it adjusts some to the device) are known after its
  # first run; later rounds alternate which tool goes first, so drift favours neither.
  if [ ! -s "$OUT/$name.settings" ] || [ $((r % 2)) -eq 1 ]; then
    perftest "$tool" $pargs
    if [ "$metric" = bw ]; then p=$(column 4); else p=$(column 5); fi
    depth=$(header "TX depth"); mod=$(header "CQ Moderation"); inl=$(header "Max inline data")
    # The latency tests print no RX depth: perftest's default is 512 receives for send tests
    # (at most the iterations) and 1 for the RDMA ones.
    rxd=$(header "RX depth")
    case $tool in ib_send_*) : "${rxd:=512}" ;; *) : "${rxd:=1}" ;; esac
    echo "tx_depth=${depth:-} cq_mod=${mod:-} inline=${inl:-} rx_depth=$rxd" >"$OUT/$name.settings"
    q=$(run_qpo)
  else
    q=$(run_qpo)
    perftest "$tool" $pargs
    if [ "$metric" = bw ]; then p=$(column 4); else p=$(column 5); fi
  fi
  echo "$p" >>"$OUT/$name.perftest"
  echo "$q" >>"$OUT/$name.qpo"
  if [ "$metric" = lat ]; then
    iteration_times <"$OUT/client" >"$OUT/$name.perftest.$r"
    iteration_times <"$OUT/qpo" >"$OUT/$name.qpo.$r"
  fi
  printf '  %-10s perftest %-10s qpo %s\n' "$name" "$p" "$q"
}

run_test() {
  case $1 in
    write64)   pair write64 bw ib_write_bw "-s 64 -n 5000" write_bw "size=64 iterations=5000" ;;
    write64k)  pair write64k bw ib_write_bw "-s 65536 -n 2000" write_bw "size=65536 iterations=2000" ;;
    send)      pair send bw ib_send_bw "-s 65536 -n 2000" send_bw "size=65536 iterations=2000" ;;
    read)      pair read bw ib_read_bw "-s 65536 -n 2000" read_bw "size=65536 iterations=2000" ;;
    send_lat)  pair send_lat lat ib_send_lat "-s 2 -n 2000 -U" send_lat "size=2 iterations=2000 unsorted=true" ;;
    write_lat) pair write_lat lat ib_write_lat "-s 2 -n 2000 -U" write_lat "size=2 iterations=2000 unsorted=true" ;;
    hook)      pair hook bw ib_write_bw "-s 64 -n 5000" examples/write_bw_hook "size=64 iterations=5000" ;;
    *) echo "unknown test $1" >&2; exit 2 ;;
  esac
}

echo "perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null || echo '?') vs qpo on $DEV (gid $GID), $ROUNDS rounds, alternating, qpo: ${QPO_BENCH_CONTEXTS:-1} device context(s), latency tests in $PROCESSES process(es)"
r=1
while [ $r -le "$ROUNDS" ]; do
  echo "round $r"
  for t in $TESTS; do run_test "$t"; done
  r=$((r + 1))
done

# The ratio is the median of the per-round ratios: the host's load drifts between rounds and
# moves both runs of a round together, so pairs cancel most of it. A round where either tool
# failed (0, inf, empty) is left out and counted.
#
# Latency in the 2-vCPU TCG guest is bimodal for both tools (docs/lua.md, Performance): each
# iteration takes either ~11 us or ~19-21 us, and the share of slow ones drifts over tens of
# milliseconds, so a run's median lands in one mode or the other whichever tool runs, and a
# round's ratio may compare modes, not tools. So the latency tests also look at every
# iteration (perftest -U, qpo unsorted=true): an iteration is "fast" when it is within 40% of
# the lowest run median of the series. Printed: the ratio of the medians of each tool's fast
# iterations over the whole series (the tools' own cost, like with like; both tools meet the
# same drift, alternating), and each tool's share of slow iterations and of runs that were
# mostly slow (whether one tool falls into the slow mode more often: a difference a user sees).
per_iteration() {
  t=$1
  lo=$(cat "$OUT/$t.perftest" "$OUT/$t.qpo" | awk '$1 + 0 > 0 && $1 != "inf"' | sort -g | head -1)
  [ -n "$lo" ] || return 0
  cut=$(awk -v l="$lo" 'BEGIN { printf "%.2f", 1.4 * l }')
  for tool in perftest qpo; do
    : >"$OUT/$t.$tool.shares"
    : >"$OUT/$t.$tool.fast"
    i=1
    while [ $i -le "$ROUNDS" ]; do
      if [ -s "$OUT/$t.$tool.$i" ]; then
        awk -v c="$cut" '{ n++; if ($1 > c) s++ } END { printf "%.4f\n", s / n }' "$OUT/$t.$tool.$i" >>"$OUT/$t.$tool.shares"
        awk -v c="$cut" '$1 <= c' "$OUT/$t.$tool.$i" >>"$OUT/$t.$tool.fast"
      fi
      i=$((i + 1))
    done
  done
  fp=$(median <"$OUT/$t.perftest.fast") fq=$(median <"$OUT/$t.qpo.fast")
  share() { awk '{ s += $1; n++; if ($1 > 0.5) m++ } END { printf "%.3f (mostly slow: %d/%d runs)", n ? s / n : 0, m, n }' "$1"; }
  printf '           per iteration (fast <= %s usec): fast-iteration medians %s / %s usec, ratio %s (%s / %s iterations)\n' \
    "$cut" "$fp" "$fq" "$(awk -v p="$fp" -v q="$fq" 'BEGIN { if (p > 0 && q > 0) printf "%.3f", q / p; else print "-" }')" \
    "$(wc -l <"$OUT/$t.perftest.fast" | tr -d ' ')" "$(wc -l <"$OUT/$t.qpo.fast" | tr -d ' ')"
  printf '           slow share perftest %s, qpo %s\n' "$(share "$OUT/$t.perftest.shares")" "$(share "$OUT/$t.qpo.shares")"
}

# The bandwidth tests' runs are short (~0.1-2 s) and fall into the emulator's slow mode as a
# whole or not at all, fresh processes of either tool alike
# (bench/results/2026-11-24-perftest-series.md), so the per-round ratio may compare a fast run
# with a slow one. Printed besides: each tool's median
# over its fast runs (within 20% of the best run of either tool in the series) and how many of
# its runs were slow - like with like, and whether one tool falls into the slow mode more often.
per_run_mode() {
  t=$1
  hi=$(cat "$OUT/$t.perftest" "$OUT/$t.qpo" | awk '$1 + 0 > 0 && $1 != "inf"' | sort -g | tail -1)
  [ -n "$hi" ] || return 0
  cut=$(awk -v h="$hi" 'BEGIN { printf "%.4g", 0.8 * h }')
  fast() { awk -v c="$cut" '$1 + 0 >= c' "$OUT/$t.$1" | median; }
  slow() { awk -v c="$cut" '$1 + 0 < c { n++ } END { print n + 0 }' "$OUT/$t.$1"; }
  fp=$(fast perftest) fq=$(fast qpo)
  printf '           fast runs (>= %s): medians %s / %s, ratio %s; slow runs perftest %s/%s, qpo %s/%s\n' "$cut" "$fp" "$fq" \
    "$(awk -v p="$fp" -v q="$fq" 'BEGIN { if (p > 0 && q > 0) printf "%.3f", q / p; else print "-" }')" \
    "$(slow perftest)" "$(wc -l <"$OUT/$t.perftest" | tr -d ' ')" "$(slow qpo)" "$(wc -l <"$OUT/$t.qpo" | tr -d ' ')"
}

echo
printf '%-10s %-14s %-14s %-8s %-8s %-6s %s\n' test "perftest(med)" "qpo(med)" ratio target pairs "settings (from perftest)"
for t in $TESTS; do
  p=$(median <"$OUT/$t.perftest" | tr -d '\n')
  q=$(median <"$OUT/$t.qpo" | tr -d '\n')
  case $t in
    send_lat|write_lat) unit=usec; target="<= 1.00" ;;
    hook) unit=MB/s; target=">= 0.90" ;;
    *) unit=MB/s; target=">= 1.00" ;;
  esac
  paste "$OUT/$t.perftest" "$OUT/$t.qpo" |
    awk '$1 + 0 > 0 && $2 + 0 > 0 && $1 != "inf" && $2 != "inf" { print $2 / $1 }' >"$OUT/$t.ratios"
  ratio=$(median <"$OUT/$t.ratios" | awk '{ printf "%.3f", $1 }')
  pairs="$(wc -l <"$OUT/$t.ratios" | tr -d ' ')/$ROUNDS"
  printf '%-10s %-14s %-14s %-8s %-8s %-6s %s\n' "$t" "$p$unit" "$q$unit" "$ratio" "$target" "$pairs" "$(cat "$OUT/$t.settings")"
  case $t in send_lat|write_lat) per_iteration "$t" ;; *) per_run_mode "$t" ;; esac
done
# Every run's figure, for the record (docs/lua.md quotes them).
echo
for t in $TESTS; do
  echo "$t perftest: $(tr '\n' ' ' <"$OUT/$t.perftest")"
  echo "$t qpo:      $(tr '\n' ' ' <"$OUT/$t.qpo")"
done
rm -rf "$OUT"
