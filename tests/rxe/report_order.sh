#!/bin/sh
# The run report lists steps in the order they happened, whatever the executor does to keep
# text out of the timed bring-up window (src/exec/deferred_lines.h): creates, then the
# transitions before the exchange and the receives, then the published values, then RTR/RTS,
# each line with its host, verb, object and mask text (the plan's steps: the port and GID
# queries, the exchange's publish and resolve). Runs inside the lab guest.
#   tests/rxe/report_order.sh QPO_BINARY
set -u
QPO=${1:?usage: report_order.sh QPO_BINARY}
cd "$(dirname "$0")/../.."
fails=0
check() {  # NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    echo "ok   $1"
  else
    echo "FAIL $1"
    echo "  expected:"; printf '%s\n' "$2" | sed 's/^/    /'
    echo "  got:"; printf '%s\n' "$3" | sed 's/^/    /'
    fails=$((fails + 1))
  fi
}
# "phase verb object status [mask words]" per step, from the JSON report.
steps() {
  "$QPO" run --no-lab -v --format json "$@" 2>/dev/null | awk -F'"' '
    /"phase":/ { phase = $4 } /"verb":/ { verb = $4 } /"object":/ { object = $4 }
    /"detail":/ { detail = $4; sub(/ mask=.*/, "", detail) }
    /"status":/ { line = phase " " verb " " object " " $4; if (verb == "ibv_modify_qp") line = line " " detail; print line }'
}

got=$(steps scenarios/rc-write-pair.yaml | grep -E '^(setup|bring-up|exchange) ' | grep -v 'ibv_open_device\|ibv_alloc_pd\|ibv_reg_mr\|ibv_create_cq')
want="setup ibv_query_port da ok
setup ibv_query_gid da ok
setup ibv_create_qp qa ok
setup ibv_create_qp qa info
setup ibv_create_qp qb ok
setup ibv_create_qp qb info
bring-up ibv_modify_qp qa ok RESET->INIT
bring-up ibv_modify_qp qb ok RESET->INIT
bring-up ibv_post_recv qa ok
bring-up ibv_post_recv qb ok
exchange publish qa info
exchange publish qb info
exchange resolve a info
bring-up ibv_modify_qp qa ok INIT->RTR
bring-up ibv_modify_qp qa ok RTR->RTS
bring-up ibv_modify_qp qb ok INIT->RTR
bring-up ibv_modify_qp qb ok RTR->RTS"
check "rc-write-pair: bring-up steps in the order they ran, granted caps under their create" "$want" "$got"

B=tests/scenarios/run
# A bring-up transition that fails as expected keeps its place, its names and its text.
got=$(steps $B/bringup-expected-einval.yaml | grep -E '^bring-up ibv_modify_qp .* RTR->RTS')
want="bring-up ibv_modify_qp qa failed as expected RTR->RTS
bring-up ibv_modify_qp qb ok RTR->RTS"
check "bringup-expected-einval: the expected failure is a named bring-up line in its place" "$want" "$got"

# A bring-up transition that fails the run inside the window: named, last of the bring-up,
# then straight to teardown.
got=$(steps $B/bringup-unexpected-success.yaml | grep -E '^(bring-up|traffic|teardown) ' | grep -v '^teardown' | tail -2)
want="bring-up ibv_modify_qp qb ok INIT->RTR
bring-up ibv_modify_qp qb FAILED RTR->RTS"
check "bringup-unexpected-success: the failing step is named and nothing ran after it" "$want" "$got"

# Live output (issue 31): on a terminal, the first smoke's lines arrive before the 3 s pause
# ends, not all at exit. Under a pseudo-terminal each line gets its arrival time; the first
# smoke's receive must come at least 2 s before the process ends (the pause alone is 3 s; a
# log printed at exit puts every line within milliseconds of the end, however busy the box).
L=tests/rxe/live/smoke-pause-smoke.yaml
EV=/tmp/report-order-events.$$.jsonl
# first_smoke_timing QPO_RUN_ARGS...: runs them under a pty; prints whether the first smoke's
# receive line came 2 s or more before the end, then the verdict line. Keeps the timed lines in $timed.
first_smoke_timing() {
  timed=$(python3 tests/rxe/pty_lines.py "$QPO" run "$@")
  first=$(printf '%s\n' "$timed" | awk '$3 == "traffic" && $4 == "smoke" && $5 == "receive" { print $1; exit }')
  end=$(printf '%s\n' "$timed" | awk '$2 == "exit" { print $1 }')
  verdict=$(printf '%s\n' "$timed" | awk '$2 == "PASS" || $2 == "FAIL" { print $2 " " $3 }')
  awk -v a="${first:-0}" -v b="${end:-0}" -v v="$verdict" 'BEGIN {
    print (a > 0 && b - a >= 2 ? "first smoke line 2 s or more before the end" : "first smoke line at " a " s, end at " b " s"); print v }'
}
want="first smoke line 2 s or more before the end
PASS smoke-pause-smoke"
first_smoke_timing --no-lab --events "$EV" "$L" > /tmp/report-order-got.$$
check "smoke; pause: 3s; smoke under a terminal: the first smoke's line is printed before the pause ends" "$want" "$(cat /tmp/report-order-got.$$)"

# The same through an agent (a child process that reports to qpo run over a pipe): its lines
# come as its stages end, not with its report at the end.
first_smoke_timing --no-lab --agents --local "$L" > /tmp/report-order-got.$$
check "the same run with an agent: its first smoke's line is printed before the pause ends" "$want" "$(cat /tmp/report-order-got.$$)"
rm -f /tmp/report-order-got.$$
steps_of_run=$(printf '%s\n' "$timed" | awk '$3 ~ /^(setup|bring-up|exchange|traffic|teardown)$/' | wc -l)
[ "$steps_of_run" -gt 20 ] && echo "ok   agent run: $steps_of_run step lines" || { echo "FAIL agent run printed $steps_of_run step lines"; fails=$((fails + 1)); }

# The same run's --events: every line is one JSON object; the steps are the JSON report's, in
# its order, and the last line is the end event with the verdict.
got=$(python3 - "$EV" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
events = [json.loads(l) for l in lines]
steps = [e for e in events if e["event"] == "step"]
print("%d lines, each JSON" % len(lines) if len(lines) > 30 else "only %d lines" % len(lines))
print("steps numbered in order" if [s["step"] for s in steps] == sorted(s["step"] for s in steps) else "steps out of order")
print("last: %s %s exit %s" % (events[-1]["event"], events[-1].get("verdict"), events[-1].get("exit_code")))
PY
)
n=$(wc -l < "$EV")
want="$n lines, each JSON
steps numbered in order
last: end PASS exit 0"
check "--events: a JSON object per line, the steps in plan order, the verdict last" "$want" "$got"
rm -f "$EV"

[ $fails -eq 0 ] && echo "report order: all checks passed" && exit 0
echo "$fails report-order checks failed"
exit 1
