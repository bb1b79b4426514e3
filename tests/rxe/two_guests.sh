#!/bin/sh
# Real cross-host traffic: two lab guests joined by a QEMU network, rxe0 on each one's eth0.
# Guest b runs `qpo agent --listen` (token required); guest a runs `qpo run`, which starts a
# local agent for host a and reaches host b's agent over TCP on the guest-only IPv6 link.
#   two_guests.sh QPO [SCENARIO...]   each scenario has hosts a and b (addresses filled in here)
# Default: scenarios/two-host-rc-ud.yaml (RC write across the wire plus UD fan-in),
# scenarios/two-host-write-bw-lua.yaml (Lua write_bw and send_lat, initiator on a, target on
# b: the script's barriers and results cross the wire), scenarios/two-host-ud-incast-lua.yaml
# (Lua UD incast, senders on a, receiver on b: the senders' w:signal() cross the wire), the
# UD multicast groups across the link (scenarios/two-host-ud-multicast.yaml, IPv4 239.1.1.1,
# and tests/scenarios/two-guests/ud-multicast-ipv6.yaml, ff0e::1234: members on both hosts,
# each receives every datagram; scenarios/two-host-cm-ud-multicast.yaml joins its group through
# rdma_cm, rdma_join_multicast) and the fault-injection scenarios in tests/scenarios/faults/
# (netem on guest a's eth0).
set -eu
cd "$(dirname "$0")/../.."
QPO=${1:-build/qpo}
QPO=$(cd "$(dirname "$QPO")" && pwd)/$(basename "$QPO")
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- scenarios/two-host-rc-ud.yaml scenarios/two-host-write-bw-lua.yaml scenarios/two-host-ud-incast-lua.yaml \
  scenarios/two-host-ud-multicast.yaml scenarios/two-host-cm-ud-multicast.yaml tests/scenarios/two-guests/*.yaml \
  tests/scenarios/faults/*.yaml
work=$(mktemp -d /tmp/qpo-two-guests.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "two-guest-lab-token-0123456789" > "$work/token"
runs_a=""
i=0
for s in "$@"; do
  i=$((i + 1))
  sed -e 's#address: lab-node-a#address: localhost#' \
      -e 's#address: lab-node-b#address: "tcp://[fd00:1::2]:7000"#' \
      -e 's#^  b: { address: localhost }#  b: { address: "tcp://[fd00:1::2]:7000" }#' \
      -e '/^# run-args/d' "$s" > "$work/$i-$(basename "$s")"
  runs_a="$runs_a $work/$i-$(basename "$s")"
done
# Guest b serves one controller per scenario; guest a runs them in order and checks the
# device is back to its baseline after each. Guest a ends with one line per scenario (exit
# status, seconds): the end of the output is what a CI log shows of a failure.
scripts/lab/lab.sh run2 --timeout 900 \
  --cmd-b "rc=0; for f in $runs_a; do QPO_AGENT_ONCE=1 $QPO agent --listen '[::]:7000' --token-file $work/token || rc=1; done; exit \$rc" \
  --cmd-a "base=\$(rdma resource show | head -1); rc=0; tally=''; for f in $runs_a; do t0=\$(date +%s); st=0; $QPO run --no-lab --token-file $work/token --phase-timeout 120 --timeout-ms 20000 \$f || st=\$?; [ \"\$(rdma resource show | head -1)\" = \"\$base\" ] || { echo LEAK; st=leak; }; [ \$st = 0 ] || rc=1; tally=\"\${tally}two_guests: \$(basename \$f): exit \$st after \$((\$(date +%s) - t0)) s\n\"; done; printf \"\$tally\"; exit \$rc"
