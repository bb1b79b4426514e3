#!/bin/sh
# Real cross-host traffic: two lab guests joined by a QEMU network, rxe0 on each one's eth0.
# Guest b runs `qpo agent --listen` (token required); guest a runs `qpo run`, which starts a
# local agent for host a and reaches host b's agent over TCP on the guest-only IPv6 link.
# The scenario is scenarios/two-host-rc-ud.yaml with the addresses filled in: RC write across
# the wire plus UD fan-in from both hosts.
set -eu
cd "$(dirname "$0")/../.."
QPO=${1:-build/qpo}
QPO=$(cd "$(dirname "$QPO")" && pwd)/$(basename "$QPO")
work=$(mktemp -d /tmp/qpo-two-guests.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "two-guest-lab-token-0123456789" > "$work/token"
sed -e 's#address: lab-node-a#address: localhost#' \
    -e 's#address: lab-node-b#address: "tcp://[fd00:1::2]:7000"#' \
    -e '/^# run-args/d' scenarios/two-host-rc-ud.yaml > "$work/two-guests.yaml"
scripts/lab/lab.sh run2 --timeout 600 \
  --cmd-b "QPO_AGENT_ONCE=1 $QPO agent --listen '[::]:7000' --token-file $work/token" \
  --cmd-a "$QPO run --no-lab --token-file $work/token --phase-timeout 300 --timeout-ms 20000 $work/two-guests.yaml && rdma resource show"
