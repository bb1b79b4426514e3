#!/bin/sh
# check_junit.sh [--min-tests N] [--all-failed] FILE...
#
# Validates JUnit XML files that `qpo test --junit` wrote with an external validator, so the
# check does not share the writer's assumptions:
#   1. xmllint (libxml2) parses the file (well-formed XML, proper UTF-8) and validates it
#      against tests/junit/junit.xsd (the common testsuites/testsuite/testcase/failure/error/
#      skipped/system-out shape that Jenkins, GitLab and GitHub report readers accept);
#   2. the counts in every <testsuite> agree with its elements (XSD 1.0 cannot say that):
#      tests = testcases, failures/errors/skipped = testcases with such a child; and
#      tests >= N (default 1), so an empty report never passes;
#   3. with --all-failed: every testcase has a <failure> or <error> (for suites of scenarios
#      that are all invalid on purpose).
# Exits 0 when every file passes, 1 otherwise, 2 on usage errors or a missing xmllint.
set -u
here=$(cd "$(dirname "$0")" && pwd)
schema=$here/junit.xsd
min_tests=1
all_failed=0
while [ $# -gt 0 ]; do
  case $1 in
    --min-tests) min_tests=${2:?--min-tests needs N}; shift 2 ;;
    --all-failed) all_failed=1; shift ;;
    --) shift; break ;;
    -*) echo "check_junit: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: check_junit.sh [--min-tests N] [--all-failed] FILE..." >&2; exit 2; }
if ! command -v xmllint >/dev/null 2>&1; then
  echo "check_junit: xmllint not found (Debian package libxml2-utils; scripts/setup installs it)" >&2
  exit 2
fi

status=0
fail() { echo "check_junit: $f: $*" >&2; status=1; bad=1; }
num() { xmllint --xpath "$1" "$f" 2>/dev/null; }  # an XPath number, e.g. count(...)

for f in "$@"; do
  bad=0
  if [ ! -s "$f" ]; then fail "missing or empty"; continue; fi
  if ! xmllint --noout --nonet --schema "$schema" "$f"; then fail "does not validate against $schema"; continue; fi
  suites=$(num 'count(//testsuite)')
  [ "${suites:-0}" -ge 1 ] || { fail "no <testsuite>"; continue; }
  i=1
  while [ "$i" -le "$suites" ]; do
    s="(//testsuite)[$i]"
    name=$(num "string($s/@name)")
    for pair in "tests:count($s/testcase)" \
                "failures:count($s/testcase[failure])" \
                "errors:count($s/testcase[error])" \
                "skipped:count($s/testcase[skipped])"; do
      attr=${pair%%:*}
      declared=$(num "string($s/@$attr)")
      actual=$(num "${pair#*:}")
      if [ -z "$declared" ] && [ "$attr" != tests ]; then continue; fi  # optional attribute absent
      [ "$declared" = "$actual" ] || fail "testsuite '$name': $attr=\"$declared\" but the elements say $actual"
    done
    tests=$(num "count($s/testcase)")
    [ "$tests" -ge "$min_tests" ] || fail "testsuite '$name': $tests testcases, expected at least $min_tests"
    if [ "$all_failed" = 1 ]; then
      ok=$(num "count($s/testcase[not(failure) and not(error)])")
      [ "$ok" = 0 ] || fail "testsuite '$name': $ok testcases without <failure>/<error> (all were expected to fail)"
    fi
    i=$((i + 1))
  done
  [ $bad -ne 0 ] || echo "check_junit: $f: valid ($(num 'count(//testcase)') testcases, $(num 'count(//testcase[failure])') failed, $(num 'count(//testcase[error])') errors, $(num 'count(//testcase[skipped])') skipped)"
done
exit $status
