#!/bin/sh
# Deterministic packet events and wire expectations (issue 33), each scenario across two lab
# guests (qpo run --lab: one per host), passing only on qpo's PASS and the lines that show
# what the wire did:
#   1. drop the first transmission of relative PSN 4 of a 16-packet RC WRITE: the event acts
#      on one packet, one NAK (PSN sequence error), go-back-N from it, 12 resent, the data
#      checks; tshark decodes the same NAK from the same capture; the HTML report draws it;
#   2. the same for 20 pairs in one run: 20 of 20 each with one NAK and go-back-N;
#   3. every transmission of one packet dropped, timeouts 12 and 15: RETRY_EXC_ERR after
#      retry_cnt + 1 transmissions, the median gap within 2x of 4.096 us x 2^timeout;
#   4. no receive posted: rnr_retry + 1 RNR NAKs, the delay against min_rnr_timer;
#   5. one packet corrupted: no NAK, resent after the ACK timeout;
#   6. path_mtu 256 vs 1024: 256 and 64 packets per 64 KiB message; on a jumbo lab link
#      (QPO_LAB_MTU=9000) 1024 vs 4096: 64 and 16, and tshark reads the 4 KiB packets whole;
#   7. one packet delayed 20 ms on the sender's egress: reordered, one NAK, go-back-N;
#   8. an ECN CE mark (rxe sends no CNP) and a duplicate (nothing resent, data intact);
#   9. RDMA READs in flight: 1 at max_rd_atomic 1, 2..4 at 4.
set -u
QPO=${1:?usage: wire_events.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
. tests/rxe/check_output.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$QPO" run --lab --no-smoke --capture "$tmp" --report "$tmp/drop.html" scenarios/wire/rc-write-drop-psn4.yaml 2>&1)
check "drop relative PSN 4 once: one NAK, go-back-N, 12 resent, data checked" 0 $? "$out" \
  "packet event +lose-psn4 +ok" \
  "drop the first transmission of the request at relative PSN 4 from qa to qb \(QP 0x[0-9a-f]+\)" \
  "acted on 1 packet: psn 0x[0-9a-f]+$" \
  "wire expect +qa +naks 1  ok" \
  "wire expect +qa +go_back_n true  ok" \
  "kept \(12 retransmitted, 1 NAKs, each [0-9.]+ (us|ms) after the lost PSN was first sent\)" \
  "wire expect +qa +retransmissions 12  ok" \
  "wire expect +qa +max_transmissions 2  ok" \
  "verify +mb .* ok" \
  "^PASS rc-write-drop-psn4"
list=$("$QPO" packets "$tmp/rc-write-drop-psn4.a.eth0.pcap" 2>&1)
check "qpo packets: the NAK and the resent PSNs" 0 $? "$list" \
  "RC Acknowledge +psn 0x[0-9a-f]{6} +0 B  NAK PSN sequence error msn 0$" \
  "RC RDMA Write Middle +psn 0x[0-9a-f]{6} +1024 B  RETX 1$" \
  "-> qb \(QP 0x[0-9a-f]+ at 10\.0\.1\.2\): 28 packets, 12 retransmitted$"
html=$(cat "$tmp/drop.html" 2>&1)
retx=$(printf '%s\n' "$html" | grep -o '<g class="retx"' | wc -l)
naks=$(printf '%s\n' "$html" | grep -o '<g class="nak"' | wc -l)
check "the HTML report draws qa's sequence: 12 retransmissions, one NAK" 0 0 "$html
retx=$retx naks=$naks" "<h2>On the wire</h2>" "data-qp=\"qa\" data-peer=\"qb\" data-packets=\"30\"" "^retx=12 naks=1$" \
  "packet event: drop the first transmission of the request at relative PSN 4 from qa to qb"
oracle=$(python3 tests/rxe/wire_oracle.py "$QPO" "$tmp"/*.pcap 2>&1)
check "tshark decodes the same packets, the NAK's syndrome included" 0 $? "$oracle" \
  "rc-write-drop-psn4\.a\.eth0\.pcap: tshark agrees: 30 packets in 2 flows$"

out=$("$QPO" run --lab --no-smoke tests/scenarios/wire/rc-write-drop-psn4-x20.yaml 2>&1)
naks=$(printf '%s\n' "$out" | grep -cE "wire expect +qa\.[0-9]+ +naks 1  ok")
gbn=$(printf '%s\n' "$out" | grep -cE "wire expect +qa\.[0-9]+ +go_back_n true  ok")
acted=$(printf '%s\n' "$out" | grep -cE "acted on 1 packet: psn")
check "20 pairs, each losing PSN 4 once: 20 of 20 with one NAK and go-back-N" 0 $? \
  "$out
naks=$naks gbn=$gbn acted=$acted" "^naks=20 gbn=20 acted=20$" "^PASS rc-write-drop-psn4-x20"

out=$("$QPO" run --lab scenarios/wire/rc-write-drop-every.yaml 2>&1)
check "every transmission dropped: RETRY_EXC_ERR after retry_cnt + 1, one timeout apart" 0 $? "$out" \
  "acted on 4 packets: psn (0x[0-9a-f]+), psn \1 \(transmission 2\), psn \1 \(transmission 3\), psn \1 \(transmission 4\)$" \
  "wire expect +qa +max_transmissions 4  ok" \
  "wire expect +qc +max_transmissions 3  ok" \
  "wire expect +qa +retransmit_timeout within 2x  ok" \
  "timeout 12: 4\.096 us x 2\^12 = 16\.78 ms$" \
  "wire expect +qc +retransmit_timeout within 2x  ok" \
  "timeout 15: 4\.096 us x 2\^15 = 134\.22 ms$" \
  "IBV_WC_RETRY_EXC_ERR" \
  "^PASS rc-write-drop-every"

out=$("$QPO" run --lab scenarios/wire/rc-send-rnr.yaml 2>&1)
check "no receive posted: rnr_retry + 1 RNR NAKs, delay against min_rnr_timer" 0 $? "$out" \
  "wire expect +qa +rnr_naks 3  ok" \
  "wire expect +qa +rnr_delay within 4x  ok" \
  "RNR NAK timer 18 = 5\.12 ms$" \
  "^PASS rc-send-rnr"

out=$("$QPO" run --lab scenarios/wire/rc-write-corrupt-last.yaml 2>&1)
check "one packet corrupted: no NAK, resent after the ACK timeout" 0 $? "$out" \
  "corrupt the first transmission of the request at relative PSN 15 from qa to qb" \
  "acted on 1 packet: psn 0x[0-9a-f]+$" \
  "wire expect +qa +naks 0  ok" \
  "wire expect +qa +retransmit_timeout within 2x  ok" \
  "timeout 16: 4\.096 us x 2\^16 = 268\.44 ms$" \
  "^PASS rc-write-corrupt-last"

out=$("$QPO" run --lab scenarios/wire/rc-write-path-mtu.yaml 2>&1)
check "path_mtu 256 vs 1024: packets per 64 KiB message" 0 $? "$out" \
  "wire expect +qa +packets_per_message 256  ok" \
  "wire expect +qc +packets_per_message 64  ok" \
  "^PASS rc-write-path-mtu"

mkdir -p "$tmp/jumbo"
out=$(QPO_LAB_MTU=9000 "$QPO" run --lab --no-smoke --capture "$tmp/jumbo" scenarios/wire/rc-write-path-mtu-4096.yaml 2>&1)
check "a jumbo lab link: path_mtu 1024 vs 4096, 64 and 16 packets per 64 KiB message" 0 $? "$out" \
  "port 1 ACTIVE, active_mtu 4096" \
  "wire expect +qa +packets_per_message 64  ok" \
  "wire expect +qc +packets_per_message 16  ok" \
  "^PASS rc-write-path-mtu-4096"
oracle=$(python3 tests/rxe/wire_oracle.py "$QPO" "$tmp"/jumbo/*.pcap 2>&1)
check "tshark decodes the 4 KiB packets of the jumbo capture as qpo lists them" 0 $? "$oracle" \
  "rc-write-path-mtu-4096\.a\.eth0\.pcap: tshark agrees: [0-9]+ packets in [0-9]+ flows$"

out=$("$QPO" run --lab --no-smoke scenarios/wire/rc-write-delay-reorder.yaml 2>&1)
check "one packet delayed past the others: reordered, one NAK, go-back-N" 0 $? "$out" \
  "tc bpf +eth0 +egress, netem delay 20000 us  ok" \
  "delay the first transmission of the request at relative PSN 4 from qa to qb by 20000 us" \
  "acted on 1 packet: psn 0x[0-9a-f]+$" \
  "wire expect +qa +naks 1  ok" \
  "wire expect +qa +go_back_n true  ok" \
  "tc qdisc del +eth0 +ok" \
  "^PASS rc-write-delay-reorder"

out=$("$QPO" run --lab --no-smoke scenarios/wire/rc-write-ecn-duplicate.yaml 2>&1)
check "ECN CE mark (no CNP from rxe) and a duplicate (nothing resent)" 0 $? "$out" \
  "packet event +mark-first +ok" "packet event +double-psn2 +ok" \
  "wire expect +qa +cnps 0  ok" \
  "wire expect +qc +retransmissions 0  ok" \
  "^PASS rc-write-ecn-duplicate"

out=$("$QPO" run --lab --no-smoke scenarios/wire/rc-read-rd-atomic.yaml 2>&1)
check "RDMA READs in flight against max_rd_atomic 1 and 4" 0 $? "$out" \
  "wire expect +qa +max_reads_in_flight 1  ok" \
  "wire expect +qc +max_reads_in_flight 2\.\.4  ok" \
  "^PASS rc-read-rd-atomic"

echo "$failures wire event checks failed"
[ "$failures" -eq 0 ]
