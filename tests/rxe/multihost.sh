#!/bin/sh
# Multi-host drills inside one lab guest: every host of scenarios/two-host-rc-ud.yaml gets its
# own agent process (qpo run --agents --local); Lua workloads across hosts, passing and with
# a failing target (scenarios/two-host-write-bw-lua.yaml, tests/rxe/cross_host/). Checks the run passes, that an agent dying or
# hanging at various phases (and a script hanging with --local, hosts as threads) fails the run with the host and phase named while the others tear
# down, protocol version mismatch and tcp agents with and without the token, and after each
# case that the device is back to its baseline resources (nothing leaked on the survivors).
set -u
QPO=${1:?usage: multihost.sh QPO_BINARY}
cd "$(dirname "$0")/../.."
S=scenarios/two-host-rc-ud.yaml
counts() { rdma resource show 2>/dev/null | grep -E '^[0-9]+: rxe0' | sed 's/^[0-9]*: rxe0: //'; }
baseline=$(counts)
failures=0

# check NAME EXPECTED_EXIT PATTERN -- CMD...: runs CMD, wants the exit code and PATTERN in its output.
check() {
  name=$1 want=$2 pattern=$3
  shift 4
  out=$("$@" 2>&1)
  rc=$?
  problem=""
  [ "$rc" -eq "$want" ] || problem="exit $rc, expected $want"
  echo "$out" | grep -Eq -- "$pattern" || problem="$problem; output lacks /$pattern/"
  now=$(counts)
  [ "$now" = "$baseline" ] || problem="$problem; leaked: $now (baseline $baseline)"
  if [ -z "$problem" ]; then
    echo "ok   $name"
  else
    failures=$((failures + 1))
    echo "FAIL $name: $problem"
    echo "$out" | tail -25 | sed 's/^/     | /'
  fi
}

check "two hosts, one agent process each" 0 "^PASS two-host-rc-ud" -- \
  "$QPO" run --no-lab --agents --local "$S"
check "agent b killed at bring-up" 1 "host b .*went away during" -- \
  env QPO_AGENT_FAULT=b:die:bring-up "$QPO" run --no-lab --agents --local "$S"
check "agent a killed during the exchange" 1 "host a .*went away during setup" -- \
  env QPO_AGENT_FAULT=a:die:exchange "$QPO" run --no-lab --agents --local "$S"
# The headline (the verdict line) names the cause, the lost host, not a survivor's symptom.
check "agent b killed mid-workload" 1 "^FAIL two-host-rc-ud[^:]*: host b .*went away during" -- \
  env QPO_AGENT_FAULT="b:die-later:prepare rc_write, ud_a1" "$QPO" run --no-lab --agents --local "$S"
check "agent b never answers (phase timeout)" 1 "host b .*no answer within 8 s" -- \
  env QPO_AGENT_FAULT=b:hang:smoke "$QPO" run --no-lab --agents --local --phase-timeout 8 "$S"
check "protocol version mismatch" 1 "protocol version 99" -- \
  env QPO_TEST_PROTOCOL_VERSION=99 "$QPO" run --no-lab --agents --local "$S"

# Lua workloads across hosts: initiator on host a, target on host b (write_bw, send_lat).
L=scenarios/two-host-write-bw-lua.yaml
E=tests/rxe/cross_host/target-error.yaml
check "lua across hosts, in-process" 0 "^PASS two-host-write-bw-lua" -- \
  "$QPO" run --no-lab --local "$L"
check "lua across hosts, one agent each: the perftest table reaches the report" 0 "65536 +300 " -- \
  "$QPO" run --no-lab --agents --local "$L"
check "lua across hosts, one agent each: the JSON workloads array came back" 0 '"script": "builtin:send_lat"' -- \
  "$QPO" run --no-lab --agents --local --format json "$L"
# Host b's target errors after barrier 'start': host a, waiting at 'done', fails within
# seconds (timeout 30 would turn a hang into exit 124) naming host b and both barriers.
check "lua target fails on host b (in-process): host a names it" 1 \
  "barrier 'done': cross-host barrier failed: another host failed: host b after barrier 'start': worker 'qb' \(target\): target gives up" -- \
  timeout 30 "$QPO" run --no-lab --local "$E"
check "lua target fails on host b (agents): host a names it" 1 \
  "barrier 'done': cross-host barrier failed: another host failed: host b after barrier 'start': worker 'qb' \(target\): target gives up" -- \
  timeout 30 "$QPO" run --no-lab --agents --local "$E"
check "lua target fails on host b (agents): the verdict is host b's own error" 1 \
  "^FAIL cross-host-target-error .*: host b: workload 'w': worker 'qb' \(target\): target gives up" -- \
  timeout 30 "$QPO" run --no-lab --agents --local "$E"
check "lua target stuck on host b (agents): the phase timeout names host b and the workload" 1 \
  "host b .*no answer within 5 s during workload 'w'" -- \
  timeout 60 "$QPO" run --no-lab --agents --local --phase-timeout 5 tests/rxe/cross_host/target-hang.yaml
# The same with hosts as threads (--local): no process to kill, so host b's workers must be
# stopped where they are, in pure Lua (target_spin.lua) or in qpo.sleep (target_hang.lua);
# host a names host b and the workload; the run tears down and exits well within `timeout 30`
# (a hang would be exit 124).
check "lua target spinning in pure Lua on host b (in-process): stopped at its line, the verdict names host b" 1 \
  "^FAIL cross-host-target-spin .*: host b: workload 'w': worker 'qb' \(target\): tests/rxe/cross_host/target_spin.lua:13: stopped: no answer within 5 s during workload 'w'" -- \
  timeout 30 "$QPO" run --no-lab --local --phase-timeout 5 tests/rxe/cross_host/target-spin.yaml
check "lua target spinning in pure Lua on host b (in-process): host a names host b and the workload" 1 \
  "barrier 'done': cross-host barrier failed: another host failed: host b: no answer within 5 s during workload 'w'" -- \
  timeout 30 "$QPO" run --no-lab --local --phase-timeout 5 tests/rxe/cross_host/target-spin.yaml
check "lua target stuck in qpo.sleep on host b (in-process): stopped, the verdict names host b" 1 \
  "^FAIL cross-host-target-hang .*: host b: workload 'w': worker 'qb' \(target\): tests/rxe/cross_host/target_hang.lua:12: stopped: no answer within 5 s" -- \
  timeout 30 "$QPO" run --no-lab --local --phase-timeout 5 tests/rxe/cross_host/target-hang.yaml

# UD incast across hosts: three senders on host a, the receiver on host b. The receiver's
# stream ends when the senders' w:signal("sent") reach host b (3 of them, counted from
# w.workers, which lists every host's workers); received data is checked against the
# senders' pattern and max_loss bounds the drops (exit 0 = both held). Without cross-host
# signals the receiver would wait for its stream's timeout and fail.
# Both hosts stuck in report() (nobody waits at a meeting): the run's own watch of the phase
# timeout stops both where they spin, and the run ends.
check "report() spinning on both hosts (in-process): stopped at its line, the run ends" 1 \
  "report\(\): tests/rxe/cross_host/report_hang.lua:10: stopped: no answer within 5 s during workload 'w'" -- \
  timeout 30 "$QPO" run --no-lab --local --phase-timeout 5 tests/rxe/cross_host/report-hang.yaml
G=tests/rxe/cross_host/signals.yaml
check "signals across hosts, in-process: host b sees host a's 'go', host a sees host b's 'reply'" 0 \
  "signals across hosts: go 1, reply 5" -- timeout 60 "$QPO" run --no-lab --local "$G"
check "signals across hosts, one agent each" 0 \
  "signals across hosts: go 1, reply 5" -- timeout 60 "$QPO" run --no-lab --agents --local "$G"
I=scenarios/two-host-ud-incast-lua.yaml
check "ud incast across hosts, in-process: 3 senders on host a, data checked on host b" 0 \
  "senders 3  sent 1500  received [0-9]+  lost" -- timeout 60 "$QPO" run --no-lab --local "$I"
check "ud incast across hosts, one agent each: 3 senders on host a, data checked on host b" 0 \
  "senders 3  sent 1500  received [0-9]+  lost" -- timeout 60 "$QPO" run --no-lab --agents --local "$I"

# tcp agents: one listening agent per host, shared token.
tok=/tmp/qpo-token
echo "0123456789abcdef-lab-secret" > $tok
sed -e 's#address: lab-node-a#address: "tcp://127.0.0.1:17001"#' -e 's#address: lab-node-b#address: "tcp://127.0.0.1:17002"#' \
  -e '/^# run-args/d' "$S" > /tmp/tcp-two-host.yaml
start_listeners() {
  QPO_AGENT_ONCE=1 "$QPO" agent --listen 127.0.0.1:17001 --token-file $tok 2>/dev/null &
  QPO_AGENT_ONCE=1 "$QPO" agent --listen 127.0.0.1:17002 --token-file $tok 2>/dev/null &
  sleep 1
}
start_listeners
check "tcp agents with the token" 0 "^PASS two-host-rc-ud" -- \
  "$QPO" run --no-lab --token-file $tok /tmp/tcp-two-host.yaml
wait
start_listeners
check "tcp agents refuse a controller without the token" 1 "authentication failed" -- \
  "$QPO" run --no-lab /tmp/tcp-two-host.yaml
wait

echo "$failures multi-host checks failed"
[ "$failures" -eq 0 ]
