#!/bin/sh
# Inside the lab guest: every example scenario through `qpo test --local` (JUnit, the suite's
# JSON and every case's report kept in OUT, the lab's shared folder), and rxe0's resource
# counts (`rdma resource show`) the same before and after: the examples' runs leak nothing.
# plan_equals_lab_runs reads the kept reports.
set -u
QPO=${1:?usage: example_suite.sh QPO_BINARY SOURCE_DIR OUT_DIR}
SRC=${2:?usage: example_suite.sh QPO_BINARY SOURCE_DIR OUT_DIR}
OUT=${3:?usage: example_suite.sh QPO_BINARY SOURCE_DIR OUT_DIR}
counts() { rdma resource show 2>/dev/null | grep -E '^[0-9]+: rxe0' | sed 's/^[0-9]*: rxe0: //'; }
before=$(counts)
if [ -z "$before" ]; then
  echo "example_suite: no rxe0 in rdma resource show"
  exit 1
fi
"$QPO" test --no-lab --local --junit "$OUT/junit-scenarios.xml" --json "$OUT/scenarios.json" \
  --results "$OUT/scenarios" "$SRC/scenarios"
rc=$?
after=$(counts)
if [ "$after" != "$before" ]; then
  echo "example_suite: the examples' runs left resources behind: $after (before: $before)"
  exit 1
fi
exit $rc
