#!/bin/sh
# Runs inside the Soft-RoCE lab guest: memory windows and memory back-ends on rxe0.
#  1. scenarios/rc-memory-windows.yaml (type 1 and 2 windows: bind, write through, past the
#     end, invalidate), scenarios/rc-send-with-invalidate.yaml (the peer's SEND_WITH_INV: the
#     receive's IBV_WC_WITH_INV and invalidated rkey checked) and the ODP scenario (unsupported
#     by device, exit 77), through run_scenarios.sh: each outcome and output line checked, no resource leaked.
#     The two-host window again with agents (the rkey through the agent protocol's meeting).
#     tests/scenarios/mw/: a type 1 window unbound by `invalidate:` (was SIGSEGV in librxe) and a
#     type 2 window bound, invalidated and bound again, data through it (was IBV_WC_MW_BIND_ERR).
#  2. hugetlb MRs: with no huge pages reserved the run fails naming mmap(MAP_HUGETLB) and the
#     pages it needs; with pages reserved it passes.
set -u
QPO=${1:?usage: memory_backends.sh QPO_BINARY}
here=$(dirname "$0")
root=$here/../..
fail=0

"$here/run_scenarios.sh" "$QPO" scenarios/rc-memory-windows.yaml scenarios/rc-send-with-invalidate.yaml \
  scenarios/two-host-memory-window.yaml \
  tests/scenarios/mw/rc-mw-type1-invalidate.yaml tests/scenarios/mw/rc-mw-type2-rebind.yaml \
  tests/scenarios/run/rc-odp-unsupported.yaml || fail=1

# The window's rkey through the agents' protocol: each host a separate `qpo agent` process.
out=$("$QPO" run --no-lab --agents --local "$root/scenarios/two-host-memory-window.yaml" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
  echo "ok   two-host-memory-window with agents: passes"
else
  echo "FAIL two-host-memory-window with agents: exit $rc"; printf '%s\n' "$out" | sed 's/^/     | /'; fail=1
fi

hp=$root/tests/scenarios/hugetlb/rc-write-hugetlb.yaml
if [ ! -w /proc/sys/vm/nr_hugepages ]; then
  echo "FAIL hugetlb: /proc/sys/vm/nr_hugepages is not writable here"
  exit 1
fi
echo 0 > /proc/sys/vm/nr_hugepages
out=$("$QPO" run --no-lab "$hp" 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -Eq 'mmap\(MAP_HUGETLB\).*needs 1 huge page\(s\) of 2048 KiB; 0 free'; then
  echo "ok   hugetlb without reserved pages: fails with the reason"
else
  echo "FAIL hugetlb without reserved pages: exit $rc"; printf '%s\n' "$out" | sed 's/^/     | /'; fail=1
fi
echo 8 > /proc/sys/vm/nr_hugepages
free=$(sed -n 's/^HugePages_Free: *//p' /proc/meminfo)
out=$("$QPO" run --no-lab "$hp" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
  echo "ok   hugetlb with $free pages reserved: passes"
else
  echo "FAIL hugetlb with $free pages reserved: exit $rc"; printf '%s\n' "$out" | sed 's/^/     | /'; fail=1
fi
echo 0 > /proc/sys/vm/nr_hugepages
exit $fail
