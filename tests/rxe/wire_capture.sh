#!/bin/sh
# qpo run --capture across two lab guests (issue 33, capture): one 16-packet RC RDMA WRITE at
# path_mtu 1024. Each host writes its pcap; `qpo packets` lists the 16 requests (First, 14
# Middle, Last) to qb and the ACK to qa, nothing retransmitted; and tshark, an oracle no one
# here wrote, decodes the same opcode/PSN/AETH sequence per flow from the same files.
set -u
QPO=${1:?usage: wire_capture.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
. tests/rxe/check_output.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

F=tests/scenarios/wire/rc-write-16-packets.yaml
out=$("$QPO" run --lab --no-smoke --capture "$tmp" "$F" 2>&1)
check "qpo run --capture: each host records its packets" 0 $? "$out" \
  "capture +eth0 +ok" \
  "udp dst port 4791 -> $tmp/rc-write-16-packets\.a\.eth0\.pcap" \
  "udp dst port 4791 -> $tmp/rc-write-16-packets\.b\.eth0\.pcap" \
  "capture stop +eth0 +ok" \
  "^ +17 packets in $tmp/rc-write-16-packets\.a\.eth0\.pcap$" \
  "^PASS rc-write-16-packets"

list=$("$QPO" packets "$tmp/rc-write-16-packets.a.eth0.pcap" 2>&1)
check "qpo packets: 16 requests to qb, one ACK to qa, none resent" 0 $? "$list" \
  "^10\.0\.1\.1 -> qb \(QP 0x[0-9a-f]+ at 10\.0\.1\.2\): 16 packets, 0 retransmitted$" \
  "^10\.0\.1\.2 -> qa \(QP 0x[0-9a-f]+ at 10\.0\.1\.1\): 1 packets, 0 retransmitted$" \
  "RC RDMA Write First +psn 0x[0-9a-f]{6} +1024 B$" \
  "RC RDMA Write Last +psn 0x[0-9a-f]{6} +1024 B$" \
  "RC Acknowledge +psn 0x[0-9a-f]{6} +0 B  ACK msn 1$"
middles=$(printf '%s\n' "$list" | grep -c "RC RDMA Write Middle")
check "qpo packets: 14 Middle packets between First and Last" 0 0 "middles=$middles" "^middles=14$"

oracle=$(python3 tests/rxe/wire_oracle.py "$QPO" "$tmp"/*.pcap 2>&1)
check "tshark decodes the same opcode/PSN/AETH sequence per flow" 0 $? "$oracle" \
  "rc-write-16-packets\.a\.eth0\.pcap: tshark agrees: 17 packets in 2 flows$" \
  "rc-write-16-packets\.b\.eth0\.pcap: tshark agrees: 17 packets in 2 flows$"

echo "$failures wire capture checks failed"
[ "$failures" -eq 0 ]
