#!/bin/sh
# The validator itself: every samples/valid-*.xml passes check_junit.sh and every
# samples/invalid-*.xml fails it (each sample says in a comment which rule it breaks). Without
# this, a schema that accepted everything would make the JUnit checks pass vacuously.
set -u
here=$(cd "$(dirname "$0")" && pwd)
status=0
n=0
for f in "$here"/samples/valid-*.xml; do
  n=$((n + 1))
  if ! "$here/check_junit.sh" "$f" >/dev/null 2>&1; then
    echo "FAIL: $(basename "$f") should be accepted:"; "$here/check_junit.sh" "$f" 2>&1 | sed 's/^/  /'; status=1
  fi
done
for f in "$here"/samples/invalid-*.xml; do
  n=$((n + 1))
  "$here/check_junit.sh" "$f" >/dev/null 2>&1
  rc=$?
  if [ $rc -ne 1 ]; then
    echo "FAIL: $(basename "$f") should be rejected (exit 1), got exit $rc"; status=1
  fi
done
[ $n -ge 10 ] || { echo "FAIL: only $n samples found in $here/samples"; status=1; }
[ $status -eq 0 ] && echo "junit schema: $n samples, each accepted or rejected as expected"
exit $status
