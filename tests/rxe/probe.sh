#!/bin/sh
# qpo probe inside the lab guest: probes rxe0, writes the deviations to a file, and checks
# that this kernel answers every case as the committed rxe entry of schemas/providers.yaml
# records (a changed answer fails, naming the case), that the file it wrote holds that same
# entry, and that the probe left no verbs object allocated (rdma resource counts).
#   tests/rxe/probe.sh QPO_BINARY
set -u
QPO=${1:?usage: probe.sh QPO_BINARY}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
before=$(rdma resource show rxe0)
start=$(date +%s)
"$QPO" probe rxe0 --no-lab --out "$OUT/rxe.yaml" --expect rxe > "$OUT/stdout" 2> "$OUT/stderr"
rc=$?
end=$(date +%s)
cat "$OUT/stdout"
grep -v '^probe: ' "$OUT/stderr"
[ $rc -eq 0 ] || { echo "FAIL qpo probe --expect rxe exited $rc (a changed case is named above)"; exit 1; }
echo "ok   every case answered as schemas/providers.yaml records for rxe ($((end - start)) s)"
grep -q '^[0-9]* cases, [0-9]* agreed, [0-9]* disagreed, ' "$OUT/stdout" && echo "ok   the summary line" \
  || { echo "FAIL no summary line"; exit 1; }
# The file is written by the same writer as the committed entry: the rxe deviations must be
# the same text (the probed: block differs by date and kernel).
deviations() { awk '/^  [a-z]/ { rxe = ($1 == "rxe:") } rxe && /^    deviations:/ { on = 1 } rxe && on' "$1"; }
if diff -u "$(deviations "$SRC/schemas/providers.yaml" > "$OUT/committed"; echo "$OUT/committed")" \
           "$(deviations "$OUT/rxe.yaml" > "$OUT/written"; echo "$OUT/written")"; then
  echo "ok   the written rxe deviations equal the committed ones ($(grep -c 'case:' "$OUT/written") cases)"
else
  echo "FAIL the written rxe deviations differ from schemas/providers.yaml (diff above)"; exit 1
fi
"$QPO" validate -q --provider "$OUT/rxe.yaml" "$SRC/scenarios/rc-write-pair.yaml" \
  && echo "ok   qpo validate --provider reads the written file" || { echo "FAIL validate --provider"; exit 1; }
after=$(rdma resource show rxe0)
[ "$before" = "$after" ] && echo "ok   nothing left allocated: $after" \
  || { echo "FAIL resources before: $before; after: $after"; exit 1; }
rm -rf "$OUT"
