#!/bin/sh
# Runs inside the Soft-RoCE lab guest (see tests/CMakeLists.txt): scenarios with `qpo run`
# (below: which, by default), each checked against its expected outcome, and after every run the device's
# resource counts (rdma resource show) must be back to the baseline: nothing leaked, also
# when a run fails midway.
#
# Expected outcome per scenario: a "# run-expect: pass|fail|unsupported|error" line in the file,
# extra `qpo run` arguments in a "# run-args: ..." line, and an extended regex the output
# must match in a "# run-expect-output: REGEX" line (a fail must fail for its reason),
# else "unsupported" when it `requires:` xrc or raw_packet (rxe lacks them), else "pass".
set -u
QPO=${1:?usage: run_scenarios.sh QPO_BINARY [SCENARIO...]}
shift
cd "$(dirname "$0")/../.."
# By default: the runs of tests/scenarios/run, and the examples with an expectation of their own
# (a "# run-" line). The other examples must pass, and rxe_qpo_test_suite runs each of them
# already (nothing leaked; plan_equals_lab_runs checks the verdict and every step walked):
# one run of each is enough for CI.
if [ $# -eq 0 ]; then
  set -- $(grep -l '^# run-' scenarios/*.yaml) tests/scenarios/run/*.yaml
fi

counts() { rdma resource show 2>/dev/null | grep -E '^[0-9]+: rxe0' | sed 's/^[0-9]*: rxe0: //'; }
baseline=$(counts)
if [ -z "$baseline" ]; then echo "rxe: no rxe0 in 'rdma resource show'"; exit 1; fi
echo "baseline resources: $baseline"

failures=0
total=0
for f in "$@"; do
  [ -f "$f" ] || continue
  total=$((total + 1))
  expect=$(sed -n 's/^# run-expect: *\([a-z]*\).*/\1/p' "$f" | head -1)
  if [ -z "$expect" ]; then
    if grep -Eq '^requires:.*(xrc|raw_packet)' "$f"; then expect=unsupported; else expect=pass; fi
  fi
  args=$(sed -n 's/^# run-args: *//p' "$f" | head -1)
  want=$(sed -n 's/^# run-expect-output: *//p' "$f" | head -1)
  # shellcheck disable=SC2086  # run-args is a word list on purpose
  out=$("$QPO" run --no-lab $args "$f" 2>&1)
  rc=$?
  case $rc in 0) got=pass ;; 1) got=fail ;; 77) got=unsupported ;; 2) got=error ;; *) got="exit($rc)" ;; esac
  after=$(counts)
  status=ok
  [ "$got" = "$expect" ] || status="FAILED: expected $expect, got $got"
  if [ "$status" = ok ] && [ -n "$want" ] && ! printf '%s\n' "$out" | grep -Eq -- "$want"; then
    status="FAILED: $got, but no line of the output matches /$want/"
  fi
  if [ "$after" != "$baseline" ]; then status="FAILED: leaked resources: $after (baseline $baseline)"; fi
  if [ "$status" = ok ]; then
    echo "ok   $f ($got)"
  else
    failures=$((failures + 1))
    echo "FAIL $f: $status"
    echo "$out" | sed 's/^/     | /'
  fi
  if [ "$got" = unsupported ]; then echo "$out" | tail -1 | sed 's/^/     /'; fi
done
echo "$total scenarios, $failures failed"
[ "$total" -gt 0 ] && [ "$failures" -eq 0 ]
