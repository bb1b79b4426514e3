#!/bin/sh
# qpo run --pmix under OpenMPI's mpirun, every rank in one lab guest on rxe0 (~60 s):
#   1. a ring of 4 hosts (bench/ring_scenario.py 4): mpirun -np 4 passes with the same steps
#      (host, plan step, verb, object, outcome) and verdict as --local, hosts as threads;
#   2. tests/rxe/cross_host/local-abort.yaml under mpirun -np 2: host a's workload fails at
#      once while host b's runs 10^8 writes; b is stopped by a's PMIx event ("aborted: host a
#      failed at step N (workload, qa1): ..."), says how far it got, tears down; the run is
#      FAIL with host a's error as its reason (as host_failure_local.sh checks it for --local);
#   3. mpirun -np 3 for the 4-host ring: exit 2, and rank 0 says the counts and the order.
#   pmix.sh QPO
set -u
cd "$(dirname "$0")/../.." || exit 2
QPO=${1:?usage: pmix.sh QPO_BINARY}
QPO=$(cd "$(dirname "$QPO")" && pwd)/$(basename "$QPO")
out=$(mktemp -d /tmp/qpo-pmix.XXXXXX)
trap 'rm -rf "$out"' EXIT
python3 bench/ring_scenario.py 4 > "$out/ring4.yaml" || exit 2
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
scripts/lab/lab.sh run --timeout 500 --out "$out" -- sh -c "
  '$QPO' run --no-lab --local --format json $out/ring4.yaml > $out/local.json 2> $out/local.err; echo \$? > $out/local.rc
  $MPIRUN -np 4 '$QPO' run --pmix --format json $out/ring4.yaml > $out/pmix.json 2> $out/pmix.err; echo \$? > $out/pmix.rc
  $MPIRUN -np 2 '$QPO' run --pmix --format json tests/rxe/cross_host/local-abort.yaml > $out/abort.json 2> $out/abort.err
  echo \$? > $out/abort.rc
  $MPIRUN -np 3 '$QPO' run --pmix $out/ring4.yaml > $out/count.out 2> $out/count.err; echo \$? > $out/count.rc"
lab=$?
python3 - "$out" "$lab" <<'PY'
import json, os, re, sys
out, lab = sys.argv[1], int(sys.argv[2])
def text(name):
    p = os.path.join(out, name)
    return open(p).read() if os.path.exists(p) else ""
def report(name):
    try:
        return json.loads(text(name + ".json"))
    except Exception as e:
        print("%s: the report is not JSON (%s); stderr:\n%s" % (name, e, text(name + ".err")))
        return {}
bad = []
if lab != 0:
    bad.append("the lab run: lab.sh exit %d" % lab)
# 1. The ring: the same walk as --local.
local, pmix = report("local"), report("pmix")
def walk(r):
    return [(s.get("host"), s.get("plan_step"), s.get("verb"), s.get("object"), s.get("status")) for s in r.get("steps", [])]
for name, r in (("local", local), ("pmix", pmix)):
    if text(name + ".rc").strip() != "0" or r.get("verdict") != "PASS":
        bad.append("%s: exit %s, verdict %s (%s)" % (name, text(name + ".rc").strip(), r.get("verdict"), r.get("reason")))
if walk(local) != walk(pmix):
    a, b = walk(local), walk(pmix)
    first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    bad.append("the ring's steps differ from --local at line %d: %s vs %s (%d and %d lines)"
               % (first, a[first] if first < len(a) else None, b[first] if first < len(b) else None, len(a), len(b)))
else:
    print("ring of 4 under mpirun: %d steps, as --local; %s" % (len(walk(pmix)), pmix.get("verdict")))
# 2. A failing rank stops the busy one.
why = "all completions succeeded; expected IBV_WC_REM_ACCESS_ERR"
r = report("abort")
if text("abort.rc").strip() != "1":
    bad.append("abort: mpirun exited %s, expected 1" % text("abort.rc").strip())
if r.get("verdict") != "FAIL" or r.get("reason") != "host a: workload 'bad': " + why:
    bad.append("abort: verdict %s, reason %r: not host a's workload error" % (r.get("verdict"), r.get("reason")))
steps = r.get("steps", [])
abort = [s.get("message", "") for s in steps if s.get("host") == "b" and s.get("verb") == "abort"]
if len(abort) != 1 or not re.fullmatch(r"aborted: host a failed at step \d+ \(workload, qa1\): " + re.escape(why), abort[0]):
    bad.append("abort: host b's abort lines %r do not name host a's step" % abort)
long = [s.get("message", "") for s in steps if s.get("host") == "b" and s.get("verb") == "workload" and s.get("object") == "qb2"]
if len(long) != 1 or not re.fullmatch(r"stopped after \d+ of 100000000: aborted: host a failed at step \d+ \(workload, qa1\): " + re.escape(why), long[0]):
    bad.append("abort: host b's workload lines for qb2 %r do not say how far it got" % long)
if not [s for s in steps if s.get("host") == "b" and s.get("verb") == "ibv_close_device"]:
    bad.append("abort: host b did not tear down")
if not bad:
    print("failing rank: b %s; %s" % (abort[0][:60] + "...", long[0][:40] + "..."))
# 3. Ranks and hosts must match.
want = "qpo: --pmix: the launcher started 3 ranks, and scenario 'ring-4' has 4 hosts (h0, h1, h2, h3)"
if text("count.rc").strip() != "2" or want not in text("count.err"):
    bad.append("count: exit %s, stderr %r; expected 2 and %r" % (text("count.rc").strip(), text("count.err")[:300], want))
for b in bad:
    print("FAIL " + b)
if bad:
    for name in ("pmix", "abort"):
        print("--- %s stderr:\n%s" % (name, text(name + ".err")[-2000:]))
    sys.exit(1)
print("PASS pmix")
PY
