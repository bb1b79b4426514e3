#!/bin/sh
# Issue 20's matrix, baselines and launchers end to end, inside one lab guest:
#   1. qpo test on scenarios/rc-write-matrix.yaml (2 x 2): four cases named by their values,
#      JUnit with parameters and figures as properties, --json, --save-baseline's four files;
#   2. qpo test --baseline on one of the cases (--name): compared against the saved file;
#   3. qpo run of tests/launcher/two-hosts.yaml, whose two agents the stand-in launcher
#      tests/launcher/fake_srun.sh starts: the run passes and the launcher got the expected argv.
#   tests/rxe/sweep.sh QPO_BINARY
set -u
QPO=${1:?usage: sweep.sh QPO_BINARY}
QPO=$(cd "$(dirname "$QPO")" && pwd)/$(basename "$QPO")
cd "$(dirname "$0")/../.."
src=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # NAME CONDITION-EXIT-STATUS [DETAIL]
  if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1${3:+: $3}"; fails=$((fails + 1)); fi
}

# 1. the matrix
"$QPO" test --no-lab --junit "$tmp/j.xml" --json "$tmp/s.json" --save-baseline "$tmp/base" \
  scenarios/rc-write-matrix.yaml >"$tmp/test.log" 2>&1
rc=$?
cat "$tmp/test.log"
check "matrix: qpo test exits 0" $rc "exit $rc"
grep -q '^4 passed, 0 failed, 0 skipped$' "$tmp/test.log"; check "matrix: 4 cases passed" $?
for c in 'size=4KiB,mtu=1024' 'size=4KiB,mtu=4096' 'size=64KiB,mtu=1024' 'size=64KiB,mtu=4096'; do
  grep -q "^ok   rc-write-matrix\[$c\]" "$tmp/test.log"; check "matrix: case rc-write-matrix[$c] ran" $?
  [ -s "$tmp/base/rc-write-matrix[$c].json" ]; check "baseline saved for [$c]" $?
done
grep -q '<property name="mtu" value="4096"/>' "$tmp/j.xml"; check "junit: the parameter mtu as a property" $?
grep -q '<property name="write_bw.bw_avg" value="[0-9.e+]* MB/s"/>' "$tmp/j.xml"; check "junit: bw_avg as a property" $?
if command -v xmllint >/dev/null 2>&1; then
  tests/junit/check_junit.sh --min-tests 4 "$tmp/j.xml"; check "junit: the file validates" $?
fi
grep -q '"name": "rc-write-matrix\[size=64KiB,mtu=1024\]"' "$tmp/s.json"; check "json: the case by its name" $?

# 2. a baseline comparison (the tolerance is wide: this checks the plumbing, not the machine)
"$QPO" test --no-lab --name 'size=4KiB,mtu=1024' --baseline "$tmp/base" --tolerance 100000% \
  scenarios/rc-write-matrix.yaml >"$tmp/base.log" 2>&1
rc=$?
cat "$tmp/base.log"
check "baseline: qpo test exits 0" $rc "exit $rc"
grep -q "^baseline rc-write-matrix\[size=4KiB,mtu=1024\]: no regression beyond 100000% ([1-9][0-9]* figures against $tmp/base/rc-write-matrix\[size=4KiB,mtu=1024\].json)$" \
  "$tmp/base.log"
check "baseline: the case compared with its saved result" $?

# 3. the launcher
sed "s|FAKE_SRUN|$src/tests/launcher/fake_srun.sh|" tests/launcher/two-hosts.yaml >"$tmp/launcher.yaml"
QPO_LAUNCHER_LOG=$tmp/argv.log "$QPO" run --no-lab --agent-command "$QPO" "$tmp/launcher.yaml" >"$tmp/run.log" 2>&1
rc=$?
cat "$tmp/run.log"
check "launcher: the run passes" $rc "exit $rc"
# One line per launch; the hosts are launched at once, so in either order.
want=$(printf '%s\n' "-w a -N1 $QPO agent --stdio" "-w b -N1 $QPO agent --stdio")
got=$(sort "$tmp/argv.log" 2>/dev/null)
[ "$got" = "$want" ]; check "launcher: argv of both hosts" $? "got: $(echo $got)"

[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
exit $((fails != 0))
