#!/bin/sh
# exchange values in the lab guest (one rxe0): a peer whose values are given by hand, as a DUT's
# script gives them. Two qpo runs stand for qpo and the DUT: each writes its QP's values to a
# file first, waits for the other's, brings its QP up with them; the sender SENDs 100 x 4 KiB
# and RDMA-WRITEs 10 x 4 KiB into the buffer the receiver's values give, the receiver counts
# the 100 SENDs (op recv). Passes only when both say PASS with those lines, and the files hold
# what the runs report.
set -u
QPO=${1:?usage: given_values.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
. tests/rxe/check_output.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p /tmp/qv
rm -f /tmp/qv/sender.json /tmp/qv/receiver.json

# The receiver starts first and waits for the sender's file; the sender comes 1 s later.
"$QPO" run --no-lab tests/scenarios/interop/values-receiver.yaml >"$tmp/receiver" 2>&1 &
receiver=$!
sleep 1
"$QPO" run --no-lab tests/scenarios/interop/values-sender.yaml >"$tmp/sender" 2>&1
src=$?
wait $receiver
rrc=$?

check "the sender: its values written, the receiver's read, 100 SENDs and 10 RDMA WRITEs at the given buffer, PASS" 0 $src "$(cat "$tmp/sender")" \
  "^ +[0-9]+ exchange +external values +qa +ok" \
  "^     wrote QP qa's values to /tmp/qv/sender\.json; the peer's values from /tmp/qv/receiver\.json: qpn 0x[0-9a-f]+, psn 0x[0-9a-f]+, gid ::ffff:[0-9.]+, buffer rkey 0x[0-9a-f]+$" \
  "^ +[0-9]+ traffic +workload +qa +sends: .*ok" \
  "^ +[0-9]+ traffic +workload +qa +writes: .*ok" \
  "^PASS values-sender on rxe0$"
check "the receiver: its values written, the sender's read, 100 SENDs of 4096 B counted, PASS" 0 $rrc "$(cat "$tmp/receiver")" \
  "^ +[0-9]+ exchange +external values +qb +ok" \
  "^     wrote QP qb's values to /tmp/qv/receiver\.json; the peer's values from /tmp/qv/sender\.json: qpn 0x[0-9a-f]+" \
  "^ +[0-9]+ traffic +workload receive +qb +count: receive only, x100, 4096 B +ok$" \
  "^PASS values-receiver on rxe0$"
# What each wrote is what the other used: the receiver's QP number in its file is the one the
# sender's line names, and the sender's file says its buffer.
rq=$(python3 -c 'import json; print("0x%x" % json.load(open("/tmp/qv/receiver.json"))["qpn"])' 2>&1)
check "the receiver's file holds the QP number the sender read" 0 0 "$(cat "$tmp/sender"; echo)
$(python3 -c 'import json; d = json.load(open("/tmp/qv/sender.json")); print("file:", sorted(d), sorted(d["mr"]))' 2>&1)" \
  "the peer's values from /tmp/qv/receiver\.json: qpn $rq," \
  "^file: \['gid', 'lid', 'mr', 'mtu', 'psn', 'qkey', 'qp', 'qpn'\] \['addr', 'length', 'rkey'\]$"

# own_values: - as a DUT's script reads it: one line "qpo values QP: {json}". With --format json
# the report owns stdout, so the line goes to stderr; a shell loop (the "script") turns it into
# the file the sender waits for. stdout must stay one JSON document.
rm -f /tmp/qv/sender.json /tmp/qv/receiver.json
( "$QPO" run --no-lab --format json --set 'externals.sender.own_values="-"' tests/scenarios/interop/values-receiver.yaml \
    >"$tmp/receiver.json" 2>"$tmp/receiver.err"; echo $? >"$tmp/receiver.rc" ) &
receiver=$!
for _ in $(seq 100); do  # the script: wait for qpo's line, write what it says where the sender reads it
  line=$(grep -m1 '^qpo values qb: ' "$tmp/receiver.err" 2>/dev/null) && break
  sleep 0.2
done
printf '%s\n' "${line#qpo values qb: }" >/tmp/qv/receiver.json.tmp && mv /tmp/qv/receiver.json.tmp /tmp/qv/receiver.json
"$QPO" run --no-lab tests/scenarios/interop/values-sender.yaml >"$tmp/sender2" 2>&1
src=$?
wait $receiver
check "own_values: - with --format json: the line on stderr, a script hands it to the sender, stdout one JSON report, PASS both" 0 $src \
  "$(cat "$tmp/sender2"; echo; python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("receiver", r["verdict"])
for s in r["steps"]:
    if s["verb"] == "external values": print("step", s["message"])' "$tmp/receiver.json" 2>&1; echo "rc $(cat "$tmp/receiver.rc")"; cat "$tmp/receiver.err")" \
  "^PASS values-sender on rxe0$" \
  "^receiver PASS$" \
  "^step wrote QP qb's values to stderr; the peer's values from /tmp/qv/sender\.json: qpn 0x[0-9a-f]+" \
  "^rc 0$"
echo "$failures given-values checks failed"
[ "$failures" -eq 0 ]
