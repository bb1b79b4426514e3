#!/bin/sh
# qpo against stock tools, unmodified, in the two-guest lab (`qpo run --lab-peer`): qpo in
# guest a (10.0.1.1), the tools in guest b (10.0.1.2). Each case passes only when every tool
# exits 0 with its own success lines and qpo's verdict is PASS. Two boots cover four cases: one
# scenario talks to ibv_rc_pingpong (port 18515) and ibv_ud_pingpong (port 18516) at once
# (tests/scenarios/interop/; the single-tool files users start from are scenarios/interop/).
#   1. the tools serve, qpo is their client: qpo's JSON report on stdout says PASS with 1000
#      round trips per tool; the tools say 8192000 bytes (4096 x 1000 x 2, RC) and 2048000
#      (1024 x 1000 x 2, UD), 1000 iters each;
#   2. the tools are clients, qpo serves. Both guests boot together, so each tool's command tries
#      again until qpo listens (its first tries are refused).
set -u
QPO=${1:?usage: interop.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
. tests/rxe/check_output.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT


# 1. qpo dials both tools' servers.
t0=$(date +%s)
servers='ibv_rc_pingpong -d rxe0 -g 1 & rc=$!; ibv_ud_pingpong -d rxe0 -g 1 -p 18516 & ud=$!; wait $rc && wait $ud'
"$QPO" run --format json --lab-peer "$servers" tests/scenarios/interop/pingpong-clients.yaml >"$tmp/out" 2>"$tmp/err"
rc=$?
echo "     run 1: $(($(date +%s) - t0)) s"
check "ibv_rc_pingpong and ibv_ud_pingpong serve, qpo is their client: the tools' own success lines, exit 0" 0 $rc \
  "$(cat "$tmp/err")" \
  "^\[peer\]   local address:  LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.2$" \
  "^\[peer\]   remote address: LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.1$" \
  "^\[peer\] 8192000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" \
  "^\[peer\] 2048000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" \
  "^\[peer\] 1000 iters in [0-9.]+ seconds = [0-9.]+ usec/iter$" \
  "^lab peer: exit 0: ibv_rc_pingpong"
check "qpo as client: its JSON report, PASS, both exchanges and 1000 round trips with each tool" 0 0 "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("verdict", r["verdict"])
for s in r["steps"]:
    if s["verb"] in ("external exchange", "workload"):
        print(s["verb"], s["object"], s["status"], s.get("message", ""))' "$tmp/out" 2>&1)" \
  "^verdict PASS$" \
  "^external exchange rc ok connected to 10\.0\.1\.2:18515; the tool: LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.2$" \
  "^external exchange ud ok connected to 10\.0\.1\.2:18516; the tool: LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.2$" \
  "^workload rc ok 1000 round trips in .*\(as the tool counts: 8192000 bytes\)$" \
  "^workload ud ok 1000 round trips in .*\(as the tool counts: 2048000 bytes\)$"

# 2. Both tools dial qpo.
t0=$(date +%s)
clients='r() { for i in $(seq 60); do "$@" && return 0; sleep 1; done; return 1; }
r ibv_rc_pingpong -d rxe0 -g 1 10.0.1.1 & rc=$!; r ibv_ud_pingpong -d rxe0 -g 1 -p 18516 10.0.1.1 & ud=$!; wait $rc && wait $ud'
out=$("$QPO" run --lab-peer "$clients" tests/scenarios/interop/pingpong-servers.yaml 2>&1)
rc=$?
echo "     run 2: $(($(date +%s) - t0)) s"
check "ibv_rc_pingpong and ibv_ud_pingpong dial qpo, qpo serves: all pass" 0 $rc "$out" \
  "^ +[0-9]+ exchange +external exchange +rc +ok" \
  "^ +[0-9]+ exchange +external exchange +ud +ok" \
  "^     accepted 10\.0\.1\.2:[0-9]+; the tool: LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.2$" \
  "^ +[0-9]+ exchange +external reply +rc +ok" \
  "^ +[0-9]+ exchange +external reply +ud +ok" \
  "^\[peer\] 8192000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" \
  "^\[peer\] 2048000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" \
  "^PASS pingpong-servers on rxe0$" \
  "^lab peer: exit 0: r\(\) "

echo "$failures interop checks failed"
[ "$failures" -eq 0 ]
