#!/bin/sh
# `qpo run --lab-peer CMD`: the scenario in lab guest a, a stock tool in guest b (lab.sh run2).
# Two runs, two guests each (~15 s a run here), and one refusal that boots nothing (a stock
# tool in guest b, with qpo's JSON report on stdout untouched by it, is tests/rxe/interop.sh):
#   2. the peer sleeps past qpo's end, says bye and exits 3: its late line is kept (after qpo's
#      PASS), `lab peer: exit 3`, and the run exits 1 although qpo's verdict is PASS;
#   3. the peer never ends: it is stopped --lab-peer-grace (2) s after qpo ended, not at the
#      lab's 600 s timeout, and the run exits 1;
#   4. a two-host scenario with --lab-peer, and --lab-peer with --no-lab: clear errors, exit 2,
#      at once.
set -u
QPO=${1:?usage: lab_peer.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
. tests/rxe/check_output.sh
S=scenarios/rc-write-pair.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 4 first: no guest may boot (it would take seconds, and say so on stderr).
t0=$(date +%s)
out=$("$QPO" run --lab-peer 'ibv_devinfo' scenarios/two-host-rc-ud.yaml 2>&1)
check "--lab-peer with two hosts: refused, naming the option and the hosts" 2 $? "$out" \
  "^qpo: --lab-peer runs the scenario in lab guest a and the peer command in guest b, so the scenario must have one host; it has 2 \(a, b\)\. Give --local"
out=$("$QPO" run --no-lab --lab-peer 'ibv_devinfo' "$S" 2>&1)
check "--lab-peer with --no-lab: a usage error" 2 $? "$out" "^qpo: --lab-peer .*--no-lab refuses the lab"
check "the refusals booted nothing" 0 0 "$(printf '%s\n' "$out"; echo "took $(($(date +%s) - t0)) s")" \
  "^took [0-2] s$"

# 2. A peer that ends after qpo and fails.
t0=$(date +%s)
out=$("$QPO" run --lab-peer 'sleep 5; echo bye; exit 3' "$S" 2>&1)
rc=$?
echo "     run 2: $(($(date +%s) - t0)) s"
check "peer exit 3 after qpo passed: the run fails" 1 $rc "$out" \
  "^PASS rc-write-pair on rxe0$" \
  "^\[peer\] bye$" \
  "^lab peer: exit 3: sleep 5; echo bye; exit 3$" \
  "^qpo: the scenario passed and the lab peer did not: exit 1$"
# The peer's last words came after qpo's verdict: qpo's end did not cut the peer short.
check "peer exit 3: its line after qpo's PASS is kept" 0 0 "$(printf '%s\n' "$out" | grep -E '^(PASS|\[peer\] bye)')" \
  "^\[peer\] bye$"
check "peer exit 3: PASS comes first" 0 0 "$(printf '%s\n' "$out" | grep -E '^(PASS|\[peer\] bye)' | head -1)" "^PASS "

# 3. A peer that never ends: stopped 2 s after qpo.
t0=$(date +%s)
out=$("$QPO" run --lab-peer-grace 2 --lab-peer 'echo waiting; sleep 600' "$S" 2>&1)
rc=$?
echo "     run 3: $(($(date +%s) - t0)) s"
check "hanging peer: stopped after the grace time" 1 $rc "$(printf '%s\n' "$out"; echo "took $(($(date +%s) - t0)) s")" \
  "^\[peer\] waiting$" \
  "^PASS rc-write-pair on rxe0$" \
  "^lab peer: stopped, still running 2 s after qpo ended \(--lab-peer-grace\): echo waiting; sleep 600$" \
  "^took ([0-9]|[1-9][0-9]|1[0-7][0-9]) s$"

echo "$failures lab peer checks failed"
[ "$failures" -eq 0 ]
