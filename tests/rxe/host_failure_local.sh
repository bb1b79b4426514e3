#!/bin/sh
# A host that fails while another is busy, every host in one lab guest (~30 s):
# tests/rxe/cross_host/local-abort.yaml: host a's workload fails at once while host b's runs
# far longer than the phase timeout. Run twice, hosts as threads (--local) and as agent
# processes (--agents --local): each time host b logs "aborted: host a failed at step N
# (workload, qa1): ..." (the same line both ways), its workload line says "stopped after N of
# 100000000: aborted: ...", it tears down; the run exits 1 with
# host a's error as its reason, in well under the phase timeout (120 s; the check allows 30 s).
#   host_failure_local.sh QPO
set -u
cd "$(dirname "$0")/../.." || exit 2
QPO=${1:?usage: host_failure_local.sh QPO_BINARY}
QPO=$(cd "$(dirname "$QPO")" && pwd)/$(basename "$QPO")
S=tests/rxe/cross_host/local-abort.yaml
out=$(mktemp -d /tmp/qpo-host-failure-local.XXXXXX)
trap 'rm -rf "$out"' EXIT
# Each mode's exit code, its report and its wall time in ms (the guest's clock).
scripts/lab/lab.sh run --timeout 400 --out "$out" -- sh -c "
  for mode in local agents; do
    if [ \$mode = local ]; then set -- --local; else set -- --agents --local; fi
    s=\$(date +%s%N)
    '$QPO' run --no-lab \"\$@\" --format json $S > $out/\$mode.json 2> $out/\$mode.err
    echo \$? > $out/\$mode.rc
    e=\$(date +%s%N)
    echo \$(( (e - s) / 1000000 )) > $out/\$mode.ms
  done"
lab=$?
python3 - "$out" "$lab" <<'PY'
import json, os, re, sys
out, lab = sys.argv[1], int(sys.argv[2])
def text(name):
    p = os.path.join(out, name)
    return open(p).read() if os.path.exists(p) else None
if lab != 0:
    print("FAIL the lab run: lab.sh exit %d" % lab); sys.exit(1)
bad, aborts = [], {}
why = "all completions succeeded; expected IBV_WC_REM_ACCESS_ERR"
for mode in ("local", "agents"):
    rc, ms = text(mode + ".rc"), text(mode + ".ms")
    try:
        run = json.loads(text(mode + ".json") or "")
    except Exception as e:
        bad.append("%s: the report is not JSON: %s" % (mode, e)); print(text(mode + ".err") or ""); continue
    if rc is None or int(rc) != 1: bad.append("%s: qpo run exited %s, expected 1 (a failed run)" % (mode, rc))
    if run.get("verdict") != "FAIL": bad.append("%s: verdict %s, expected FAIL" % (mode, run.get("verdict")))
    reason = run.get("reason", "")
    if reason != "host a: workload 'bad': " + why:
        bad.append("%s: reason %r is not host a's workload error" % (mode, reason))
    steps = run.get("steps", [])
    abort = [s.get("message", "") for s in steps if s.get("host") == "b" and s.get("verb") == "abort"]
    if len(abort) != 1 or not re.fullmatch(r"aborted: host a failed at step \d+ \(workload, qa1\): " + re.escape(why), abort[0]):
        bad.append("%s: host b's abort lines %r do not name host a's step" % (mode, abort))
    else:
        aborts[mode] = abort[0]
    # b's own workload line says how far it got before the abort stopped it.
    long = [s.get("message", "") for s in steps if s.get("host") == "b" and s.get("verb") == "workload" and s.get("object") == "qb2"]
    if len(long) != 1 or not re.fullmatch(r"stopped after \d+ of 100000000: aborted: host a failed at step \d+ \(workload, qa1\): " + re.escape(why), long[0]):
        bad.append("%s: host b's workload lines for qb2 %r do not say how far it got" % (mode, long))
    if any("no answer within" in s.get("message", "") for s in steps) or "no answer within" in reason:
        bad.append("%s: a phase timeout fired" % mode)
    seconds = int(ms) / 1000 if ms else None
    if seconds is None or seconds >= 30:
        bad.append("%s: the run took %s s (the abort should end host b's workload at once; phase timeout 120 s)" % (mode, seconds))
    else:
        print("%-6s host b aborted; the run took %.2f s (phase timeout 120 s)" % (mode, seconds))
if len(aborts) == 2 and aborts["local"] != aborts["agents"]:
    bad.append("the abort lines differ: %r (--local) vs %r (--agents)" % (aborts["local"], aborts["agents"]))
for b in bad: print("FAIL " + b)
if bad:
    for mode in ("local", "agents"): print("--", mode, "stderr:"); print(text(mode + ".err") or "")
    sys.exit(1)
print("ok   host a fails, host b is aborted at once in both modes, with the same line; the run's reason is host a's error")
PY
