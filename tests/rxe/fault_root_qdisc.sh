#!/bin/sh
# A fault never replaces a root qdisc that is the host's own configuration (exec/faults.cpp):
# inside one lab guest (rxe0 on lo), tests/scenarios/run/fault-root-qdisc.yaml
#   1. with lo's default root qdisc (noqueue) passes, and after the run lo's root qdisc is the
#      kernel default again;
#   2. with a root qdisc someone installed on lo (a netem of their own: the guest's kernel has
#      sch_prio and sch_netem, no shapers) fails the fault step naming lo, that qdisc and why,
#      and that qdisc is still there afterwards, unchanged;
#   3. with a prio 1: left on lo (what a killed qpo leaves) fails the same way, saying whose
#      qdisc that is and how to remove it.
#   tests/rxe/fault_root_qdisc.sh QPO_BINARY   (inside the guest: scripts/lab/lab.sh run -- ...)
set -u
QPO=${1:?usage: fault_root_qdisc.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
S=tests/scenarios/run/fault-root-qdisc.yaml
. tests/rxe/check_output.sh
root() { tc qdisc show dev lo root; }

out=$("$QPO" run --no-lab "$S" 2>&1)
check "a fault on lo (root qdisc noqueue) is installed and removed" 0 $? "$out" \
  "tc qdisc replace +slow +dev lo netem delay 100us on udp dport 4791 +ok" \
  "tc qdisc del +slow +dev lo +ok" \
  "^PASS fault-root-qdisc"
check "after the run lo's root qdisc is the kernel default again" 0 0 "$(root)" "^qdisc noqueue 0: root"

tc qdisc add dev lo root handle 8001: netem delay 2ms
before=$(root)
out=$("$QPO" run --no-lab "$S" 2>&1)
check "someone's netem as lo's root qdisc: the fault step is refused, naming lo, the qdisc and why" 1 $? "$out" \
  "tc qdisc replace +slow +dev lo netem delay 100us on udp dport 4791 +FAILED" \
  "netdev lo has root qdisc netem \(handle 8001:\), not a kernel default \(noqueue, pfifo_fast, fq_codel, mq, handle 0:\): qpo would replace it, and removing the fault would leave the kernel default; remove it first or run the fault on another device" \
  "^FAIL fault-root-qdisc"
check "the refused fault left that qdisc alone" 0 0 "$(root)" "^qdisc netem 8001: root .*delay 2ms"
[ "$(root)" = "$before" ] || { failures=$((failures + 1)); echo "FAIL lo's root qdisc changed: $before -> $(root)"; }
if printf '%s\n' "$out" | grep -q "tc qdisc del"; then
  failures=$((failures + 1))
  echo "FAIL a refused fault has no removal line"
else
  echo "ok   a refused fault has no removal line"
fi
tc qdisc del dev lo root

tc qdisc add dev lo root handle 1: prio bands 4
out=$("$QPO" run --no-lab "$S" 2>&1)
check "a prio 1: left on lo is refused as a fault's own qdisc, with how to remove it" 1 $? "$out" \
  "netdev lo has root qdisc prio \(handle 1:\), not a kernel default .* \(prio 1: is a fault's own qdisc: another fault on this netdev, or one a killed qpo left behind: 'tc qdisc del dev lo root' removes it\)"
check "the prio is still lo's root qdisc" 0 0 "$(root)" "^qdisc prio 1: root"
tc qdisc del dev lo root

echo "$failures root qdisc checks failed"
[ "$failures" -eq 0 ]
