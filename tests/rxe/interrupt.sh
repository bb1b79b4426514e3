#!/bin/sh
# Ctrl-C drills inside the lab guest: interrupt `qpo run` in the middle of a long workload,
# in one process and with one agent process per host, and check it exits 1 saying it was
# interrupted, and that the device is back to its baseline resources (nothing leaked).
set -u
QPO=${1:?usage: interrupt.sh QPO_BINARY}
cd "$(dirname "$0")/../.."
S=tests/scenarios/long/rc-write-long.yaml
counts() { rdma resource show 2>/dev/null | grep -E '^[0-9]+: rxe0' | sed 's/^[0-9]*: rxe0: //'; }
baseline=$(counts)
failures=0
drill() {
  name=$1
  shift
  out=/tmp/interrupt.$$.out
  # Its own process group, like a terminal job: Ctrl-C reaches every process of the run.
  setsid "$@" > "$out" 2>&1 &
  pid=$!
  # Bring-up takes a few seconds under emulation; the workload runs for minutes after it.
  sleep 15
  kill -INT -"$pid"
  wait "$pid"
  rc=$?
  problem=""
  [ "$rc" -eq 1 ] || problem="exit $rc, expected 1"
  grep -q "interrupted" "$out" || problem="$problem; no 'interrupted' in the report"
  [ "$(counts)" = "$baseline" ] || problem="$problem; leaked: $(counts) (baseline $baseline)"
  if [ -z "$problem" ]; then echo "ok   $name"; else failures=$((failures + 1)); echo "FAIL $name: $problem"; tail -15 "$out" | sed 's/^/     | /'; fi
  rm -f "$out"
}
drill "Ctrl-C, hosts as threads" "$QPO" run --no-lab --local --verbose "$S"
drill "Ctrl-C, one agent process per host" "$QPO" run --no-lab --agents --local --verbose "$S"
echo "$failures interrupt drills failed"
[ "$failures" -eq 0 ]
