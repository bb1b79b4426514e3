#!/usr/bin/env bash
# Self-test of the Soft-RoCE lab (scripts/lab/lab.sh): a real rxe0 device, exit codes,
# argument passing, results share, RDMA traffic, timeouts, and (unless QPO_LAB_SELFTEST_QUICK=1)
# the two-guest network. Exits non-zero with a message on the first failing check.
# Takes about a minute: each check boots a guest (~4 s), the timeout check waits 20 s.
# shellcheck disable=SC2016 # the single-quoted commands expand inside the guest
set -uo pipefail

LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lab" && pwd)/lab.sh
TMP=$(mktemp -d "${TMPDIR:-/tmp}/qpo-lab-selftest.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# Shows a captured output when a check fails, so the reason is in the log.
dump() { sed 's/^/    | /' "$1" >&2; }

# Boots here once, so that the timings below do not include a cold prepare.
"$LAB" prepare || { echo "FAIL: lab.sh prepare" >&2; exit 1; }

# 1. rxe0 exists and its port is active.
if "$LAB" run -- ibv_devinfo -d rxe0 >"$TMP/devinfo" 2>&1 && grep -q PORT_ACTIVE "$TMP/devinfo"; then
    pass "ibv_devinfo -d rxe0 shows PORT_ACTIVE"
else
    fail "ibv_devinfo -d rxe0 in the lab"; dump "$TMP/devinfo"
fi

# 2. The command's exit code comes back.
"$LAB" run -- sh -c 'exit 3' >"$TMP/exit3" 2>&1
rc=$?
if ((rc == 3)); then pass "exit code 3 is returned"; else fail "exit code: want 3, got $rc"; dump "$TMP/exit3"; fi

# 3. Arguments survive verbatim, stdout and stderr stay apart, QPO_* variables pass through,
#    the cwd is kept and files written to $QPO_LAB_OUT reach the host.
mkdir -p "$TMP/a dir" "$TMP/out"
(cd "$TMP/a dir" && QPO_SELFTEST="x'y \"z\"" "$LAB" run --out "$TMP/out" -- \
    bash -c 'printf "[%s]" "$@"; echo; echo "$QPO_SELFTEST"; pwd; echo to-stderr >&2; echo ok >"$QPO_LAB_OUT/file"' \
    argv0 "two words" "it's" '$HOME' '' >"$TMP/args.out" 2>"$TMP/args.err")
rc=$?
expected="[two words][it's][\$HOME][]
x'y \"z\"
$TMP/a dir"
if ((rc == 0)) && [[ $(cat "$TMP/args.out") == "$expected" ]] && [[ $(cat "$TMP/args.err") == to-stderr ]] &&
    [[ $(cat "$TMP/out/file" 2>/dev/null) == ok ]]; then
    pass "arguments, environment, cwd, stdout/stderr and QPO_LAB_OUT"
else
    fail "arguments/environment/cwd/results (rc $rc)"; dump "$TMP/args.out"; dump "$TMP/args.err"
fi

# 4. RC traffic through the kernel device: ibv_rc_pingpong server and client in one guest.
#    The client retries until the server listens.
"$LAB" run --timeout 120 -- sh -c '
    ibv_rc_pingpong -d rxe0 -g 1 -n 100 & server=$!
    i=0
    until ibv_rc_pingpong -d rxe0 -g 1 -n 100 127.0.0.1; do
        i=$((i + 1)); [ $i -lt 20 ] || { kill $server; exit 1; }; sleep 0.3
    done
    wait $server' >"$TMP/pingpong" 2>&1
rc=$?
if ((rc == 0)) && [[ $(grep -c 'iters in' "$TMP/pingpong") == 2 ]]; then
    pass "ibv_rc_pingpong -d rxe0 -g 1 -n 100 (server and client)"
else
    fail "ibv_rc_pingpong (rc $rc)"; dump "$TMP/pingpong"
fi

# 5. Timeouts: 124 and a message, well before the command would have ended.
start=$SECONDS
"$LAB" run --timeout 20 -- sleep 1000 >"$TMP/timeout" 2>&1
rc=$?
took=$((SECONDS - start))
if ((rc == 124 && took <= 40)) && grep -q 'timed out after 20 s' "$TMP/timeout"; then
    pass "--timeout 20 -- sleep 1000 gives 124 after ${took} s"
else
    fail "timeout: want 124 within 40 s, got $rc after $took s"; dump "$TMP/timeout"
fi

# 6. Two guests: RC pingpong across the emulated link, prefixed output, both exit codes.
if [[ ${QPO_LAB_SELFTEST_QUICK:-0} != 1 ]]; then
    "$LAB" run2 --timeout 120 \
        --cmd-a 'ibv_rc_pingpong -d rxe0 -g 1 -n 50' \
        --cmd-b 'for i in $(seq 20); do ibv_rc_pingpong -d rxe0 -g 1 -n 50 "$QPO_LAB_PEER_IP4" && exit 0; sleep 0.3; done; exit 1' \
        >"$TMP/run2" 2>&1
    rc=$?
    if ((rc == 0)) && grep -q '^\[a\] .*iters in' "$TMP/run2" && grep -q '^\[b\] .*iters in' "$TMP/run2"; then
        pass "run2: ibv_rc_pingpong between guests a and b"
    else
        fail "run2 pingpong (rc $rc)"; dump "$TMP/run2"
    fi
    "$LAB" run2 --timeout 60 --cmd-a 'exit 0' --cmd-b 'exit 5' >"$TMP/run2-exit" 2>&1
    rc=$?
    if ((rc == 5)); then pass "run2 returns the failing guest's exit code"; else
        fail "run2 exit code: want 5, got $rc"; dump "$TMP/run2-exit"
    fi
fi

# 7. A guest whose boot dies before it is ready is booted again; one that keeps dying is a lab
#    failure (125) after three boots. A stand-in QEMU kills itself with SIGSEGV on the boots
#    named in CRASH_BOOTS of the guests named in CRASH_GUESTS, as QEMU under TCG has done.
cat >"$TMP/qemu" <<'QEMU'
#!/usr/bin/env bash
name=
for a in "$@"; do [[ $a == qpo-lab-* ]] && name=${a#qpo-lab-}; done
count=$CRASH_DIR/boots-$name
echo x >>"$count"
boot=$(wc -l <"$count")
if [[ " $CRASH_GUESTS " == *" $name "* && " $CRASH_BOOTS " == *" $boot "* ]]; then
    echo "stand-in qemu: crashing boot $boot of $name" >&2
    kill -SEGV $$
fi
exec qemu-system-x86_64 "$@"
QEMU
chmod +x "$TMP/qemu"
crash_run() { # crash_run DIR GUESTS BOOTS LAB-ARGS...
    local dir=$1 guests=$2 boots=$3
    shift 3
    mkdir -p "$dir"
    QPO_LAB_QEMU=$TMP/qemu CRASH_DIR=$dir CRASH_GUESTS=$guests CRASH_BOOTS=$boots "$LAB" "$@"
}
crash_run "$TMP/c1" a 1 run -- sh -c 'exit 3' >"$TMP/crash1" 2>&1
rc=$?
if ((rc == 3)) && grep -q 'the guest died while booting (qemu exit status 139: QEMU died of signal 11); booting it again (attempt 2 of 3)' "$TMP/crash1" &&
    [[ $(wc -l <"$TMP/c1/boots-a") == 2 ]]; then
    pass "run: a boot that died is booted again and the command's exit code comes back"
else
    fail "run after a crashed boot: want 3 after 2 boots, got $rc"; dump "$TMP/crash1"
fi
crash_run "$TMP/c2" a "1 2 3" run -- sh -c 'exit 3' >"$TMP/crash2" 2>&1
rc=$?
if ((rc == 125)) && grep -q 'attempt 3 of 3' "$TMP/crash2" &&
    grep -q 'the guest failed to boot (qemu exit status 139: QEMU died of signal 11, no result)' "$TMP/crash2" &&
    [[ $(wc -l <"$TMP/c2/boots-a") == 3 ]]; then
    pass "run: three boots that die are a lab failure (125)"
else
    fail "run with every boot crashing: want 125 after 3 boots, got $rc"; dump "$TMP/crash2"
fi
if [[ ${QPO_LAB_SELFTEST_QUICK:-0} != 1 ]]; then
    crash_run "$TMP/c3" b 1 run2 --timeout 60 --cmd-a 'exit 0' --cmd-b 'exit 5' >"$TMP/crash3" 2>&1
    rc=$?
    if ((rc == 5)) && grep -q '^lab: \[b\] the guest died while booting' "$TMP/crash3" &&
        [[ $(wc -l <"$TMP/c3/boots-b") == 2 && $(wc -l <"$TMP/c3/boots-a") == 1 ]]; then
        pass "run2: guest b's boot that died is booted again while a waits; exit 5 comes back"
    else
        fail "run2 after b's crashed boot: want 5, got $rc"; dump "$TMP/crash3"
    fi
fi

if ((failures)); then
    echo "lab selftest: $failures check(s) failed" >&2
    exit 1
fi
echo "lab selftest: all checks passed"
