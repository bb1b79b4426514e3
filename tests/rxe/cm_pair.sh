#!/bin/sh
# rdma_cm between the two lab guests (lab.sh run2; rdma_cm needs them: it does not work over
# `lo`), with QPs the program creates and src/cm/flow.h moves through INIT/RTR/RTS:
#   - over IPv4: guest a connects to guest b (10.0.1.2), RDMA-writes 4 KiB through the
#     connection and sends; guest b checks every byte; both see DISCONNECTED
#   - over IPv6 (fd00:1::2): guest b rejects the request with private data "go away"; guest a
#     sees REJECTED with the reason "consumer defined" and that private data
#   - UD through RDMA_PS_UDP (IPv6): the CM tells guest a guest b's QP number, qkey and address
#     handle; guest a sends a datagram, guest b checks it
#   - to a port nobody listens on (guest b stays up until a is done): REJECTED, "invalid service ID"
set -u
CM_PAIR=${1:?usage: cm_pair.sh CM_PAIR_BINARY}
LAB=$(dirname "$0")/../../scripts/lab/lab.sh
out=$("$LAB" run2 --timeout 600 \
  --cmd-b "$CM_PAIR serve 7471 && $CM_PAIR serve-ud 7472 || exit 1; until [ -f \$QPO_LAB_OUT/a-done ]; do sleep 0.2; done" \
  --cmd-a "wait_for() { until [ -f \$QPO_LAB_OUT/b-listening-\$1 ]; do sleep 0.2; done; }; wait_for 7471; $CM_PAIR connect 10.0.1.2 7471 && $CM_PAIR expect-reject fd00:1::2 7471 && wait_for 7472 && $CM_PAIR connect-ud fd00:1::2 7472 && $CM_PAIR expect-nobody 10.0.1.2 7999; rc=\$?; touch \$QPO_LAB_OUT/a-done; exit \$rc" 2>&1)
rc=$?
printf '%s\n' "$out"
failures=0
want() {
  printf '%s\n' "$out" | grep -Eq -- "$1" || { echo "FAIL: no line matches /$1/"; failures=$((failures + 1)); }
}
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; failures=$((failures + 1)); }
want '^\[b\] serve: RDMA_CM_EVENT_CONNECT_REQUEST \(private data .hello.\)$'
want '^\[a\] connect: RDMA_CM_EVENT_ROUTE_RESOLVED on rxe0$'
want '^\[a\] connect: RDMA_CM_EVENT_CONNECT_RESPONSE \(peer QP [0-9]+, rkey 0x[0-9a-f]+\)$'
want '^\[b\] serve: RDMA_CM_EVENT_ESTABLISHED$'
want '^\[b\] serve: 4096 bytes written through the connection, 0 wrong$'
want '^\[a\] connect: RDMA_CM_EVENT_DISCONNECTED$'
want '^\[b\] serve: RDMA_CM_EVENT_DISCONNECTED$'
want '^\[b\] serve: RDMA_CM_EVENT_CONNECT_REQUEST \(private data .please.\)$'
want "^\[a\] refused: qa: waited for RDMA_CM_EVENT_CONNECT_RESPONSE, got RDMA_CM_EVENT_REJECTED \(status 28: consumer defined, private data 'go away'\)$"
want '^\[b\] serve-ud: RDMA_CM_EVENT_CONNECT_REQUEST \(private data .ud hello.\)$'
want '^\[a\] connect-ud: RDMA_CM_EVENT_ESTABLISHED \(peer QP [0-9]+, qkey 0x1234567\)$'
want "^\[b\] serve-ud: received 27 bytes: 'a datagram through rdma_cm'$"
want '^\[a\] refused: qa: waited for RDMA_CM_EVENT_CONNECT_RESPONSE, got RDMA_CM_EVENT_REJECTED \(status 8: invalid service ID\)$'
echo "$failures rdma_cm checks failed"
[ "$failures" -eq 0 ]
