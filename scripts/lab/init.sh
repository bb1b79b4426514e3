#!/bin/busybox sh
# /init of the qpo Soft-RoCE lab guest (copied into the initramfs by `lab.sh prepare`).
#
# Runs as PID 1 under busybox. It loads the modules listed in /etc/lab-modules, turns the
# host's root filesystem (shared read-only over virtio-9p) into a writable overlay, creates
# the Soft-RoCE device rxe0, runs the host-provided command inside that root, hands the exit
# code back through the "labctl" 9p share and powers the machine off.
#
# Output channels (wired up by lab.sh):
#   ttyS0                  kernel console and this script's messages (host: console.log)
#   ttyS1, ttyS2           the command's stdout and stderr when the host has a terminal there
#   virtio ports qpo.stdout, qpo.stderr   the same streams otherwise (25x faster than a UART)
#
# Contract with the host, all files in the labctl share (mounted at /mnt/ctl):
#   lab.conf  read here (sourced): LAB_NETDEV, LAB_MTU, LAB_IP6, LAB_IP4, LAB_GIDS, LAB_OUT,
#             LAB_BARRIER, LAB_HOSTNAME, LAB_STDOUT_TTY, LAB_STDERR_TTY, LAB_COLS, LAB_ROWS
#   cmd.sh    bash script that sets the environment, cd's and execs the command
#   rc        written last: the command's exit status (125 when the lab itself failed)
#   error     one line saying why the lab failed (only with rc 125)
#   ready     written once rxe0 is up
#   started   written once the command started (a guest that dies before it is booted again)
#   go        with LAB_BARRIER=1 the command starts only once the host created this file
#             (run2 starts both guests' commands together, whichever booted faster)

/bin/busybox --install -s /bin
export PATH=/bin

# Without /dev/console in the cpio archive the kernel starts us with no open fds;
# devtmpfs provides the node, then stdin/stdout/stderr go to the console (ttyS0).
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys

CTL=/mnt/ctl
ROOT=/mnt/root

say() { echo "lab-guest: $*"; }
# One line per stage on the console: when a guest dies, the host shows the last one reached.
say "init started"

# Power off at once. Returning from PID 1 would panic the kernel (harmless with panic=-1 and
# -no-reboot, but noisy), so this never returns.
power_off() {
    sync
    echo o >/proc/sysrq-trigger
    while :; do sleep 60; done
}

# The lab itself failed (not the command): report why, exit code 125, power off.
fail() {
    say "FAILED: $*"
    if grep -q " $CTL " /proc/mounts; then
        echo "$*" >"$CTL/error"
        echo 125 >"$CTL/rc"
    fi
    power_off
}

# --- kernel modules, in dependency order (computed by lab.sh from modules.dep) ---------------
# shellcheck disable=SC2013 # one module name per line, no spaces
for m in $(cat /etc/lab-modules); do
    insmod "/lib/modules/$m.ko" || fail "insmod $m failed"
done

# --- shares -------------------------------------------------------------------------------
mkdir -p "$CTL" /mnt/lower /mnt/rw "$ROOT"
mount -t 9p -o trans=virtio,version=9p2000.L labctl "$CTL" || fail "cannot mount the labctl share"
say "modules loaded, labctl mounted"
[ -f "$CTL/lab.conf" ] || fail "labctl share has no lab.conf"
# shellcheck disable=SC1091 # written by lab.sh
. "$CTL/lab.conf"

# The host root, read-only. msize/cache=loose make the many small reads of binaries and
# libraries much cheaper under TCG.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /mnt/lower ||
    fail "cannot mount the host root share"

# A tmpfs overlay on top makes the whole tree writable (build dirs, $HOME, /tmp ...) without
# touching the host: every write lands in guest RAM and is thrown away at power-off.
mount -t tmpfs -o mode=0755 tmpfs /mnt/rw
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay -o lowerdir=/mnt/lower,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work overlay "$ROOT" ||
    fail "cannot mount the overlay root"

mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
mount -t devtmpfs devtmpfs "$ROOT/dev"
mkdir -p "$ROOT/dev/pts" "$ROOT/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$ROOT/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$ROOT/dev/shm"
# /run of the host holds only sockets and pid files of host daemons: start empty.
# /tmp stays the host's /tmp (through the overlay) so commands and cwds under /tmp still work.
mount -t tmpfs -o mode=0755 tmpfs "$ROOT/run"
mkdir -p "$ROOT/run/qpo-lab"

# The writable results share appears at the same path as on the host.
if [ -n "$LAB_OUT" ]; then
    mkdir -p "$ROOT$LAB_OUT"
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 labout "$ROOT$LAB_OUT" ||
        fail "cannot mount the results share at $LAB_OUT"
fi

[ -n "$LAB_HOSTNAME" ] && hostname "$LAB_HOSTNAME"

# --- network and Soft-RoCE ------------------------------------------------------------------
# iproute2's `ip` and `rdma` come from the host root (busybox has no `rdma`, and its `ip`
# lacks options such as nodad). The absolute path to env matters: busybox's chroot prefers
# its own applets over PATH lookups, so `chroot $ROOT ip` would run busybox's ip.
hostcmd() { chroot "$ROOT" /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

hostcmd ip link set lo up || fail "cannot bring up lo"
if [ "$LAB_NETDEV" != lo ]; then
    [ -d "/sys/class/net/$LAB_NETDEV" ] || fail "no network device $LAB_NETDEV in the guest"
    # Duplicate address detection would hold IPv6 addresses (and so their GIDs) back for ~1 s.
    for c in all default "$LAB_NETDEV"; do
        echo 0 >"/proc/sys/net/ipv6/conf/$c/accept_dad"
    done
    # QPO_LAB_MTU (lab.sh): a jumbo link, so rxe's port offers path_mtu 4096 (1500 gives 1024).
    if [ -n "${LAB_MTU:-}" ]; then
        hostcmd ip link set "$LAB_NETDEV" mtu "$LAB_MTU" || fail "cannot set $LAB_NETDEV's MTU to $LAB_MTU"
    fi
    hostcmd ip link set "$LAB_NETDEV" up || fail "cannot bring up $LAB_NETDEV"
    if [ -n "$LAB_IP6" ]; then
        hostcmd ip -6 addr add "$LAB_IP6" dev "$LAB_NETDEV" nodad ||
            fail "cannot add $LAB_IP6 to $LAB_NETDEV"
    fi
    if [ -n "$LAB_IP4" ]; then
        hostcmd ip addr add "$LAB_IP4" dev "$LAB_NETDEV" || fail "cannot add $LAB_IP4 to $LAB_NETDEV"
    fi
fi
hostcmd rdma link add rxe0 type rxe netdev "$LAB_NETDEV" || fail "cannot create rxe0 on $LAB_NETDEV"

# The port turns ACTIVE and the GID table fills asynchronously; commands expect both
# (ibv_rc_pingpong -g 1 on lo needs GID 1 = ::ffff:127.0.0.1, two guests need one GID per
# address). LAB_GIDS is how many GIDs the host expects.
port=/sys/class/infiniband/rxe0/ports/1
zero_gid=0000:0000:0000:0000:0000:0000:0000:0000
i=0
while :; do
    state=$(cat "$port/state" 2>/dev/null)
    gids=0
    for g in 0 1 2 3 4 5 6 7; do
        gid=$(cat "$port/gids/$g" 2>/dev/null)
        [ -n "$gid" ] && [ "$gid" != "$zero_gid" ] && gids=$((gids + 1))
    done
    case "$state" in *ACTIVE*) [ $gids -ge "${LAB_GIDS:-1}" ] && break ;; esac
    i=$((i + 1))
    [ $i -ge 300 ] && fail "rxe0 not ready after 30 s (port state: ${state:-none}, $gids of ${LAB_GIDS:-1} GIDs)"
    sleep 0.1
done

# --- the command ----------------------------------------------------------------------------
cp "$CTL/cmd.sh" "$ROOT/run/qpo-lab/cmd.sh" || fail "cannot copy cmd.sh"

# Raw serial lines: no \n -> \r\n translation, no echo.
for t in ttyS1 ttyS2; do
    stty -F "/dev/$t" raw -echo cols "${LAB_COLS:-80}" rows "${LAB_ROWS:-24}" ||
        fail "cannot configure /dev/$t"
done

# Virtio serial ports show up asynchronously (the host announces them after the driver is
# ready); prints /dev/vportXpY for the port called $1, or the fallback $2.
virtio_port() {
    n=0
    while [ $n -lt 30 ]; do
        for d in /sys/class/virtio-ports/*; do
            [ "$(cat "$d/name" 2>/dev/null)" = "$1" ] && [ -c "/dev/${d##*/}" ] && {
                echo "/dev/${d##*/}"
                return
            }
        done
        n=$((n + 1))
        sleep 0.1
    done
    echo "$2"
}

# The command sees a terminal only where the caller has one (isatty decides colours and
# stdio buffering). Otherwise it writes into a pipe that a `cat` pump copies to the fast
# virtio port.
out=/dev/ttyS1
err=/dev/ttyS2
pumps=
if [ "$LAB_STDOUT_TTY" != 1 ]; then
    mkfifo /lab-stdout
    cat /lab-stdout >"$(virtio_port qpo.stdout /dev/ttyS1)" &
    pumps="$pumps $!"
    out=/lab-stdout
fi
if [ "$LAB_STDERR_TTY" != 1 ]; then
    mkfifo /lab-stderr
    cat /lab-stderr >"$(virtio_port qpo.stderr /dev/ttyS2)" &
    pumps="$pumps $!"
    err=/lab-stderr
fi

say "rxe0 up, ready"
echo ready >"$CTL/ready"
if [ "$LAB_BARRIER" = 1 ]; then
    while [ ! -e "$CTL/go" ]; do sleep 0.05; done
fi

# A new session lets us kill whatever the command leaves running in the background, which
# would otherwise hold the pipes open. env -i: the environment comes only from cmd.sh.
setsid chroot "$ROOT" /usr/bin/env -i /bin/bash --noprofile --norc /run/qpo-lab/cmd.sh \
    </dev/null >"$out" 2>"$err" &
cmd=$!
say "command started"
echo started >"$CTL/started"
wait $cmd
rc=$?

# Kill leftovers of the command's session (field 6 of /proc/PID/stat is the session id).
for p in /proc/[0-9]*; do
    read -r stat 2>/dev/null <"$p/stat" || continue
    # shellcheck disable=SC2086 # split the fields after "(comm)"
    set -- ${stat##*) }
    [ "$4" = "$cmd" ] && kill -KILL "${p#/proc/}" 2>/dev/null
done
# With the writers gone the pumps see EOF and finish copying the tail. A writer that escaped
# the session (it called setsid itself) would keep them open: stop waiting after 5 s.
# shellcheck disable=SC2086 # $pumps is a list of pids
if [ -n "$pumps" ]; then
    (sleep 5; kill -KILL $pumps 2>/dev/null) &
    watchdog=$!
    wait $pumps
    kill -KILL $watchdog 2>/dev/null
fi

say "command exited $rc"
echo "$rc" >"$CTL/rc"
# stty waits (TCSADRAIN) until the serial ports have sent everything before power-off.
stty -F /dev/ttyS1 raw
stty -F /dev/ttyS2 raw
power_off
