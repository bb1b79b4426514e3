# Sourced by lab test scripts (sh): one check of a command's exit code and output.
#   check NAME WANT_EXIT RC OUTPUT PATTERN...
# Every extended regex must match a line of OUTPUT. Prints "ok   NAME", or "FAIL NAME: why"
# with OUTPUT's last 40 lines, and counts the failures in $failures.
failures=0
check() {
  name=$1 want=$2 rc=$3 out=$4
  shift 4
  problem=""
  [ "$rc" -eq "$want" ] || problem="exit $rc, expected $want"
  for pattern in "$@"; do
    printf '%s\n' "$out" | grep -Eq -- "$pattern" || problem="$problem; output lacks /$pattern/"
  done
  if [ -z "$problem" ]; then
    echo "ok   $name"
  else
    failures=$((failures + 1))
    echo "FAIL $name: $problem"
    printf '%s\n' "$out" | tail -40 | sed 's/^/     | /'
  fi
}
