#!/bin/sh
# `qpo run` and `qpo test` of two-host scenarios from this host, no hand-made agents: each host
# gets its own lab guest (lab.sh run2), joined by the lab's link, so the fault on host a's
# netdev really touches the RC traffic to host b. Two runs, two guests each (~1 min here):
#   1. qpo run --lab rc-write-loss-1pct: passes, the log says where each host ran and that the
#      scenario's addresses were replaced, the fault went onto guest a's eth0, and the run
#      reports the device's retransmissions (1% of ~11,000 packets: some are always lost);
#      --verbose ends with the control plane's tally (one exchange message per host).
#   2. qpo test --lab rc-loss-100pct-retry-exceeded: the suite runs the multi-host case in
#      guests of its own (not one guest for the suite) and the expected RETRY_EXC_ERR passes;
#      the case's results (written in guest a) reach this host: --baseline compares, and
#      --save-baseline and --json write them.
set -u
QPO=${1:?usage: lab_two_hosts.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
. tests/rxe/check_output.sh

F=tests/scenarios/faults/rc-write-loss-1pct.yaml
out=$("$QPO" run --lab --verbose "$F" 2>&1)
check "qpo run: two hosts in two guests, 1% loss, data intact" 0 $? "$out" \
  "^qpo: 2 hosts, one lab guest each, joined by the lab's link: host a in guest a \(10\.0\.1\.1, fd00:1::1\), host b in guest b \(10\.0\.1\.2, fd00:1::2\)" \
  "the scenario's addresses \(a: lab-node-a, b: lab-node-b\) are not used in the lab$" \
  "^\[b\] qpo agent: listening on \[::\]:7000$" \
  "tc qdisc replace +lossy +dev eth0 netem loss 1% on udp dport 4791  ok" \
  "hw_counters: completer_retry_err \+[1-9]" \
  "^with --set hosts\.b\.address=\"tcp://\[fd00:1::2\]:7000\"$" \
  "^PASS rc-write-loss-1pct"
# --verbose: the control plane's tally; one exchange message per host each way.
check "qpo run --verbose: the control plane's messages, one exchange per host" 0 0 "$out" \
  "^qpo: control plane: 2 hosts, [0-9]+ rounds in [0-9.]+ s; sent [0-9]+ messages, [0-9.]+ k?B: [0-9]+ barrier_result \([0-9.]+ k?B\), 2 exchange_result \([0-9.]+ k?B\), 2 hello \([0-9.]+ k?B\), 2 run " \
  "; received [0-9]+ messages, [0-9.]+ k?B: [0-9]+ barrier \([0-9.]+ k?B\), 2 exchange \([0-9.]+ k?B\), 2 hello \([0-9.]+ k?B\), [0-9]+ lines \([0-9.]+ k?B\), 2 report " \
  "^qpo: wall time per round: launch \+ hello [0-9.]+ s, setup \+ bring-up to the exchange [0-9.]+ s, to 'bring-up' [0-9.]+ s, .*, the rest \+ reports [0-9.]+ s$"

R=tests/scenarios/faults/rc-loss-100pct-retry-exceeded.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$("$QPO" test --lab --baseline "$tmp/base" --save-baseline "$tmp/base" --json "$tmp/suite.json" "$R" 2>&1)
check "qpo test: the multi-host case in guests of its own, RETRY_EXC_ERR as expected" 0 $? "$out" \
  "^qpo: 1 multi-host scenario \(two lab guests each, without --local\): every scenario runs in lab guests of its own$" \
  "^1 passed, 0 failed, 0 skipped$"
# The case's results, written in guest a, reached this host: compared (no baseline yet, rather
# than "the case wrote no result"), saved as a baseline, and in the suite's JSON.
check "qpo test: the multi-host case's results reach the host" 0 0 "$out" \
  "^baseline rc-loss-100pct-retry-exceeded: no baseline \($tmp/base/rc-loss-100pct-retry-exceeded\.json\)$" \
  "^saved 1 baseline in $tmp/base$"
check "qpo test: the saved baseline is the multi-host run's results" 0 0 "$(cat "$tmp/base/rc-loss-100pct-retry-exceeded.json" 2>&1)" \
  '^  "scenario": "rc-loss-100pct-retry-exceeded",$' '"host": "b",' '"verdict": "PASS"'
check "qpo test: --json has the case" 0 0 "$(cat "$tmp/suite.json" 2>&1)" \
  '"name": "rc-loss-100pct-retry-exceeded",' '"outcome": "pass",'

echo "$failures two-host lab checks failed"
[ "$failures" -eq 0 ]
