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
# drill NAME [--within SECONDS] COMMAND...: with --within, qpo must exit that soon after Ctrl-C.
drill() {
  name=$1
  shift
  within=""
  if [ "$1" = --within ]; then within=$2; shift 2; fi
  out=/tmp/interrupt.$$.out
  # Its own process group, like a terminal job: Ctrl-C reaches every process of the run.
  setsid "$@" > "$out" 2>&1 &
  pid=$!
  # Bring-up takes a few seconds under emulation; the workload runs for minutes after it.
  sleep 15
  kill -INT -"$pid"
  sent=$(date +%s)
  wait "$pid"
  rc=$?
  took=$(($(date +%s) - sent))
  problem=""
  if [ -n "$within" ] && [ "$took" -gt "$within" ]; then problem="exited ${took} s after Ctrl-C, expected within $within s"; fi
  [ "$rc" -eq 1 ] || problem="$problem; exit $rc, expected 1"
  grep -q "interrupted" "$out" || problem="$problem; no 'interrupted' in the report"
  [ "$(counts)" = "$baseline" ] || problem="$problem; leaked: $(counts) (baseline $baseline)"
  if [ -z "$problem" ]; then echo "ok   $name"; else failures=$((failures + 1)); echo "FAIL $name: $problem"; tail -15 "$out" | sed 's/^/     | /'; fi
  rm -f "$out"
}
drill "Ctrl-C, hosts as threads" "$QPO" run --no-lab --local --verbose "$S"
drill "Ctrl-C, one agent process per host" "$QPO" run --no-lab --agents --local --verbose "$S"
# A ping-pong has no progress callback: it must see the executor's stop flag directly. The
# bound is loose on purpose (CI may share the box): one that ignores the flag runs on for
# ~165 s, one that honours it stops in seconds (1-6 s measured under TCG).
drill "Ctrl-C, send_lat script with duration: 180" --within 60 \
  "$QPO" run --no-lab --verbose tests/scenarios/long/rc-send-lat-duration-lua.yaml
echo "$failures interrupt drills failed"
[ "$failures" -eq 0 ]
