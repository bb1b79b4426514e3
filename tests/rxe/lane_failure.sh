#!/bin/sh
# Runs inside the lab guest: one QP of a group fails while a worker thread drives four of them
# (tests/scenarios/run/group-one-lane-fails.yaml, `workers: 2`; srv.5 has no remote write, so
# cli.5's RDMA WRITE completes with IBV_WC_REM_INV_REQ_ERR: rxe NAKs a write to a QP without
# remote write as an invalid request). In the text log, the JSON report
# and the JUnit file: cli.5's line carries the completion error and is the run's reason; the
# other QPs of its worker (cli.4, cli.6, cli.7) say they did not finish because of cli.5, and
# no other line repeats cli.5's error.
set -u
QPO=${1:?usage: lane_failure.sh QPO_BINARY}
cd "$(dirname "$0")/../.." || exit 2
S=tests/scenarios/run/group-one-lane-fails.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL $1"; }

text=$("$QPO" run --no-lab "$S" 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "text: exit $rc, expected 1"
printf '%s\n' "$text" | grep -Eq "^FAIL group-one-lane-fails[^:]*: workload 'write\.5': QP 'cli\.5': completion IBV_WC_REM_INV_REQ_ERR" ||
  fail "text: the verdict does not name cli.5's completion error"
# Each line's message is on the line under it: cli.4, cli.6 and cli.7 each say it once.
for q in 4 6 7; do
  printf '%s\n' "$text" | grep -A1 -E "^ *[0-9]+ traffic +workload +cli\.$q " |
    grep -q "^     not finished: worker stopped after cli\.5 failed (IBV_WC_REM_INV_REQ_ERR)$" ||
    fail "text: cli.$q's line does not say it stopped because of cli.5"
done
n=$(printf '%s\n' "$text" | grep -c "QP 'cli.5': completion IBV_WC_REM_INV_REQ_ERR")
[ "$n" -le 2 ] || fail "text: cli.5's error appears on $n lines (its own line and the verdict only)"

"$QPO" run --no-lab --format json "$S" > "$tmp/run.json" 2> "$tmp/run.err"
python3 - "$tmp/run.json" <<'PY' || failures=$((failures + 1))
import json, sys
run = json.load(open(sys.argv[1]))
bad = []
lines = {s["object"]: s for s in run["steps"] if s["verb"] == "workload"}
if not run["reason"].startswith("workload 'write.5': QP 'cli.5': completion IBV_WC_REM_INV_REQ_ERR"):
    bad.append("reason: " + run["reason"])
if "IBV_WC_REM_INV_REQ_ERR" not in lines.get("cli.5", {}).get("message", ""):
    bad.append("cli.5: " + str(lines.get("cli.5")))
for q in ("cli.4", "cli.6", "cli.7"):
    if lines.get(q, {}).get("message") != "not finished: worker stopped after cli.5 failed (IBV_WC_REM_INV_REQ_ERR)":
        bad.append(q + ": " + str(lines.get(q, {}).get("message")))
if sum("QP 'cli.5'" in s.get("message", "") for s in run["steps"]) != 1:
    bad.append("cli.5's error is on more than its own line")
for b in bad: print("FAIL json: " + b)
sys.exit(1 if bad else 0)
PY

# JUnit: the case fails (without its run-expect header) with cli.5's error as the message.
sed '/^# run-expect/d' "$S" > "$tmp/group-one-lane-fails.yaml"
"$QPO" test --no-lab --junit "$tmp/junit.xml" "$tmp/group-one-lane-fails.yaml" > "$tmp/test.out" 2>&1
grep -q "<failure message=\"workload &apos;write.5&apos;: QP &apos;cli.5&apos;: completion IBV_WC_REM_INV_REQ_ERR" "$tmp/junit.xml" ||
  { fail "junit: the failure message is not cli.5's error"; cat "$tmp/junit.xml"; }
grep -q "not finished: worker stopped after cli.5 failed (IBV_WC_REM_INV_REQ_ERR)" "$tmp/junit.xml" ||
  fail "junit: the output lacks the stopped lanes' lines"

[ "$failures" -eq 0 ] && echo "ok   one failing lane is named once: text, JSON, JUnit"
[ "$failures" -eq 0 ]
