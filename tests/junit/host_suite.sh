#!/bin/sh
# host_suite.sh QPO OUT.xml: a real `qpo test --junit` run on the host (no lab, no device) over
# scenarios that are all invalid, including hostile ones whose diagnostics carry invalid UTF-8,
# NUL and control bytes, binary junk and terminal escapes into the <failure> text. The file
# must validate (check_junit.sh: xmllint + tests/junit/junit.xsd + counts), and every testcase
# must be a <failure> whose message is the validation error, since no scenario here can run.
set -u
QPO=${1:?usage: host_suite.sh QPO OUT.xml}
OUT=${2:?usage: host_suite.sh QPO OUT.xml}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rm -f "$OUT"
set -- "$src"/tests/hostile/corpus/utf8-*.yaml "$src"/tests/hostile/corpus/junk-*.yaml \
       "$src"/tests/hostile/corpus/nul-*.yaml "$src"/tests/scenarios/bad/q1*.yaml "$src"/tests/scenarios/bad/q2*.yaml
expected=$#
"$QPO" test --no-lab -j 2 --junit "$OUT" "$@" >"$OUT.log" 2>&1
rc=$?
tail -1 "$OUT.log"
status=0
# Every case fails (exit 1); 2 would mean a usage or system error.
if [ $rc -ne 1 ]; then echo "FAIL: qpo test exited $rc, expected 1 (every scenario is invalid)"; status=1; fi
grep -q "^0 passed, $expected failed, 0 skipped\$" "$OUT.log" ||
  { echo "FAIL: expected '0 passed, $expected failed, 0 skipped'"; tail -5 "$OUT.log"; status=1; }
if "$here/check_junit.sh" --min-tests "$expected" --all-failed "$OUT"; then
  # Each failure is the validation error, not a crash or a device error.
  other=$(xmllint --xpath "count(//failure[not(starts-with(@message, 'invalid: '))])" "$OUT")
  [ "$other" = 0 ] || { echo "FAIL: $other failures are not 'invalid: ...' diagnostics"; status=1; }
else
  status=1
fi
[ $status -eq 0 ] && rm -f "$OUT.log"
exit $status
