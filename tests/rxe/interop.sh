#!/bin/sh
# qpo against stock tools, unmodified, in the two-guest lab (`qpo run --lab-peer`): qpo in
# guest a (10.0.1.1), the tool in guest b (10.0.1.2). Each case passes only when the tool exits
# 0 with its own success lines and qpo's verdict is PASS (scenarios/interop/).
#   1. ibv_rc_pingpong as server, qpo as its client: the JSON report on stdout says PASS with the
#      ping-pong's 1000 round trips; the tool says 8192000 bytes (4096 x 1000 x 2) and 1000 iters;
#   2. ibv_rc_pingpong as client, qpo as its server. Both guests boot together, so the tool's
#      command tries again until qpo listens (its first tries are refused).
set -u
QPO=${1:?usage: interop.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
. tests/rxe/check_output.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. qpo dials the tool's server.
t0=$(date +%s)
"$QPO" run --format json --lab-peer 'ibv_rc_pingpong -d rxe0 -g 1' scenarios/interop/ibv-rc-pingpong-client.yaml \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
echo "     run 1: $(($(date +%s) - t0)) s"
check "ibv_rc_pingpong server, qpo client: the tool's own success lines, exit 0" 0 $rc "$(cat "$tmp/err")" \
  "^\[peer\]   local address:  LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.2$" \
  "^\[peer\]   remote address: LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.1$" \
  "^\[peer\] 8192000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" \
  "^\[peer\] 1000 iters in [0-9.]+ seconds = [0-9.]+ usec/iter$" \
  "^lab peer: exit 0: ibv_rc_pingpong -d rxe0 -g 1$"
check "ibv_rc_pingpong server, qpo client: qpo's JSON report, PASS, 1000 round trips" 0 0 "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("verdict", r["verdict"])
for s in r["steps"]:
    if s["verb"] in ("external exchange", "workload"):
        print(s["verb"], s["status"], s.get("message", ""))' "$tmp/out" 2>&1)" \
  "^verdict PASS$" \
  "^external exchange ok connected to 10\.0\.1\.2:18515; the tool: LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.2$" \
  "^workload ok 1000 round trips in "

# 2. The tool dials qpo.
t0=$(date +%s)
out=$("$QPO" run --lab-peer 'for i in $(seq 60); do ibv_rc_pingpong -d rxe0 -g 1 10.0.1.1 && exit 0; sleep 1; done; exit 1' \
  scenarios/interop/ibv-rc-pingpong-server.yaml 2>&1)
rc=$?
echo "     run 2: $(($(date +%s) - t0)) s"
check "ibv_rc_pingpong client, qpo server: both pass" 0 $rc "$out" \
  "^ +[0-9]+ exchange +external exchange +qb +ok" \
  "^     accepted 10\.0\.1\.2:[0-9]+; the tool: LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.0\.1\.2$" \
  "^ +[0-9]+ exchange +external reply +qb +ok" \
  "^\[peer\] 8192000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" \
  "^\[peer\] 1000 iters in [0-9.]+ seconds = [0-9.]+ usec/iter$" \
  "^PASS ibv-rc-pingpong-server on rxe0$" \
  "^lab peer: exit 0: for i in"

echo "$failures interop checks failed"
[ "$failures" -eq 0 ]
