#!/bin/sh
# Many hosts in one Soft-RoCE lab guest, each with two RC QPs in a ring (bench/ring_scenario.py):
# the same scenario run through PMIx (mpirun -np N qpo run --pmix) and through qpo's controller
# with one agent process per host (qpo run --agents --local), alternating, for N = 8 .. 64.
#   bench/pmix_scale.sh [HOSTS...]        (default 8 16 32 64; boots the guest)
#   QPO_BENCH_ROUNDS=R                    rounds per N and mode (default 3)
#   QPO_BENCH_MEM=MB QPO_BENCH_SMP=N      the guest (default 6144 MB, 2 vCPUs)
# Printed per N and mode: the run's wall time (launch to report), the bring-up window (first
# ibv_create_qp to the last RTS on the slowest host, which holds the exchange), a host's wait in
# the exchange and in all its stage meetings (medians over the hosts: the report's resolve and
# barrier lines), and the medians over the rounds; per host: wall / N. Every run must PASS. --timeout-ms 60000 in both modes: with 64
# processes on 2 vCPUs a smoke receive can wait past the default 5 s for its sender to be scheduled.
set -eu
cd "$(dirname "$0")/.."
if [ -z "${QPO_IN_LAB:-}" ]; then
  exec scripts/lab/lab.sh run --timeout 3600 --smp "${QPO_BENCH_SMP:-2}" --mem "${QPO_BENCH_MEM:-6144}" \
    --env QPO_IN_LAB=1 -- bench/pmix_scale.sh "$@"
fi
[ $# -gt 0 ] || set -- 8 16 32 64
ROUNDS=${QPO_BENCH_ROUNDS:-3}
QPO=$(pwd)/build/qpo
work=$(mktemp -d /tmp/pmix-scale.XXXXXX)

# run MODE N -> "WALL_S BRINGUP_S" (FAIL when the run did not pass)
run() {
  scenario=$work/ring-$2.yaml
  start=$(date +%s%N)
  if [ "$1" = pmix ]; then
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$2" "$QPO" run --pmix --timeout-ms 60000 --format json \
      "$scenario" > "$work/out.json" 2> "$work/err" || true
  else
    "$QPO" run --no-lab --agents --local --timeout-ms 60000 --format json "$scenario" > "$work/out.json" 2> "$work/err" || true
  fi
  end=$(date +%s%N)
  python3 - "$work/out.json" "$start" "$end" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print("FAIL"); sys.exit()
if r.get("verdict") != "PASS":
    print("FAIL"); sys.exit()
# Per host: its wait in the exchange (the resolve line) and in all its stage meetings (barrier
# lines); the medians over the hosts.
hosts = {}
for st in r.get("steps", []):
    h = hosts.setdefault(st.get("host"), [0.0, 0.0])
    if st.get("verb") == "resolve": h[0] += st.get("micros", 0) / 1000
    if st.get("verb") == "barrier": h[1] += st.get("micros", 0) / 1000
def med(v):
    v = sorted(v)
    return v[(len(v) - 1) // 2] if v else 0
print("%.2f %.3f %.1f %.1f" % ((int(sys.argv[3]) - int(sys.argv[2])) / 1e9, r.get("bringup_seconds", 0),
                               med([h[0] for h in hosts.values()]), med([h[1] for h in hosts.values()])))
PY
}
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "hosts mode round wall_s bringup_s exchange_ms barriers_ms (medians over the hosts)"
summary=""
hosts_list=$*
for n in $hosts_list; do
  python3 bench/ring_scenario.py "$n" > "$work/ring-$n.yaml"
  pw="" pb="" px="" pm="" aw="" ab="" ax="" am=""
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    for mode in $( [ $((r % 2)) -eq 0 ] && echo "pmix agents" || echo "agents pmix"); do
      res=$(run "$mode" "$n")
      echo "$n $mode $r $res"
      if [ "$res" = FAIL ]; then tail -20 "$work/err"; exit 1; fi
      set -f; set -- $res; set +f
      if [ "$mode" = pmix ]; then pw="$pw $1" pb="$pb $2" px="$px $3" pm="$pm $4"; else aw="$aw $1" ab="$ab $2" ax="$ax $3" am="$am $4"; fi
    done
    r=$((r + 1))
  done
  summary="$summary
$n pmix wall $(median $pw) s ($(awk -v w="$(median $pw)" -v n="$n" 'BEGIN { printf "%.3f", w / n }') s/host), bring-up $(median $pb) s, exchange $(median $px) ms, barriers $(median $pm) ms
$n agents wall $(median $aw) s ($(awk -v w="$(median $aw)" -v n="$n" 'BEGIN { printf "%.3f", w / n }') s/host), bring-up $(median $ab) s, exchange $(median $ax) ms, barriers $(median $am) ms"
done
echo "medians:$summary"
rm -rf "$work"
