#!/bin/sh
# A host that fails while the other waits for it, in two lab guests (issue 18; ~40 s):
# tests/rxe/cross_host/cm-no-listener.yaml: host a's rdma_connect is REJECTED (nobody listens
# at the address it connects to) while host b waits in rdma_get_cm_event for the
# CONNECT_REQUEST. The controller tells host b at once: b's log says "aborted: host a failed
# at step N (rdma_connect, qa): ...", b's wait (the step's own time in the JSON report, boot
# not included) is far below the phase timeout (120 s; the check allows 30 s; when the REJECTED
# comes before b has begun to wait, b is aborted at the stage's start and the whole lab run must
# take under 60 s), the run exits 1
# with host a's error as its reason, and neither guest keeps a verbs resource afterwards.
#   host_failure.sh QPO
set -u
cd "$(dirname "$0")/../.." || exit 2
QPO=${1:?usage: host_failure.sh QPO_BINARY}
QPO=$(cd "$(dirname "$QPO")" && pwd)/$(basename "$QPO")
S=tests/rxe/cross_host/cm-no-listener.yaml
out=$(mktemp -d /tmp/qpo-host-failure.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo "host-failure-lab-token-0123456789" > "$out/token"
sed -e 's#address: lab-node-a#address: localhost#' -e 's#address: lab-node-b#address: "tcp://[fd00:1::2]:7000"#' \
  "$S" > "$out/scenario.yaml"
# Each guest compares its device's resources before and after (nothing leaked on either side).
res='rdma resource show 2>/dev/null | grep -E "^[0-9]+: rxe0"'
t0=$(date +%s)
scripts/lab/lab.sh run2 --timeout 300 --out "$out" \
  --cmd-b "base=\$($res); QPO_AGENT_ONCE=1 $QPO agent --listen '[::]:7000' --token-file $out/token; [ \"\$($res)\" = \"\$base\" ] || echo \"b: \$($res) (was \$base)\" > $out/leak-b" \
  --cmd-a "base=\$($res); $QPO run --no-lab --token-file $out/token --format json $out/scenario.yaml > $out/run.json 2> $out/run.err; echo \$? > $out/rc; [ \"\$($res)\" = \"\$base\" ] || echo \"a: \$($res) (was \$base)\" > $out/leak-a"
lab=$?
elapsed=$(($(date +%s) - t0))
python3 - "$out" "$lab" "$elapsed" <<'PY'
import json, os, re, sys
out, lab, elapsed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = []
def text(name):
    p = os.path.join(out, name)
    return open(p).read() if os.path.exists(p) else None
rc = text("rc")
if lab not in (0, 1) or rc is None:
    print("FAIL the lab run: lab.sh exit %d, run exit %s" % (lab, rc)); print(text("run.err") or ""); sys.exit(1)
try:
    run = json.loads(text("run.json"))
except Exception as e:
    print("FAIL the report is not JSON:", e); print(text("run.err") or ""); sys.exit(1)
if int(rc) != 1: bad.append("qpo run exited %s, expected 1 (a failed run)" % rc.strip())
if run.get("verdict") != "FAIL": bad.append("verdict %s, expected FAIL" % run.get("verdict"))
reason = run.get("reason", "")
if not re.match(r"host a: rdma_connect\(qa\): .*REJECTED", reason):
    bad.append("reason %r does not start with host a's rdma_connect error" % reason)
steps = run.get("steps", [])
abort = [s for s in steps if s.get("host") == "b" and s.get("verb") == "abort"]
if not abort or not re.match(r"aborted: host a failed at step \d+ \(rdma_connect, qa\): .*REJECTED", abort[0].get("message", "")):
    bad.append("no abort line on host b naming host a's step: %r" % [a.get("message") for a in abort])
wait = [s for s in steps if s.get("host") == "b" and s.get("verb") == "rdma_get_cm_event"]
# Host a's REJECTED can come within milliseconds of the stage's start, before host b has begun
# its wait: then b's abort comes at the stage's start. Either way b must stop at once: a b that
# missed the abort would wait the phase timeout (120 s) in rdma_get_cm_event.
if not wait:
    if elapsed >= 60: bad.append("host b has no rdma_get_cm_event line, and the run took %d s" % elapsed)
    else: print("host b was aborted before it began to wait (at the stage's start); %d s for both guests in all" % elapsed)
elif wait[0].get("micros", 1e12) >= 30e6:
    bad.append("host b waited %.1f s for the CONNECT_REQUEST (the abort should end it at once)" % (wait[0]["micros"] / 1e6))
else:
    print("host b waited %.2f s in rdma_get_cm_event before the abort (phase timeout 120 s)" % (wait[0]["micros"] / 1e6))
if any("no answer within" in s.get("message", "") for s in steps) or "no answer within" in reason:
    bad.append("a phase timeout fired")
for side in "ab":
    leak = text("leak-" + side)
    if leak: bad.append("leaked on guest %s: %s" % (side, leak.strip()))
for b in bad: print("FAIL " + b)
if bad:
    print(text("run.err") or "")
    for s in steps: print("   ", s.get("host"), s.get("step"), s.get("verb"), s.get("object"), s.get("status"), s.get("message"))
    sys.exit(1)
print("ok   host a fails, host b is aborted at once and tears down; the run's reason is host a's error")
PY
