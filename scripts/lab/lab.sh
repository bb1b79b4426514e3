#!/usr/bin/env bash
# qpo Soft-RoCE lab: run host commands inside a QEMU guest whose kernel has a real RDMA device.
#
# The host kernel has no RDMA stack, so we boot Debian's kernel under QEMU (TCG; KVM does not
# work on these machines), load rdma_rxe, share the host's root filesystem into the guest and
# run the command there: every host binary and library (libibverbs, the rxe provider, perftest,
# the qpo build) then runs unchanged against a kernel RDMA device. See scripts/lab/README.md.
#
#   lab.sh prepare                      download the kernel, build vmlinux + initramfs (cached)
#   lab.sh run [opts] -- CMD [ARGS...]  one guest, rxe0 on lo
#   lab.sh run2 [opts] --cmd-a S --cmd-b S   two guests linked by a QEMU datagram network
#   lab.sh info                         cache dir, kernel, prepared or not
# shellcheck disable=SC2054 # commas in QEMU arguments belong to QEMU's option syntax
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${QPO_LAB_CACHE:-$HOME/.cache/qpo/lab}
QEMU=${QPO_LAB_QEMU:-qemu-system-x86_64}

# Exit codes besides the command's own.
readonly EXIT_USAGE=2 EXIT_TIMEOUT=124 EXIT_LAB=125

# Modules the guest loads; their dependencies come from modules.dep.
#  - virtio_pci, 9pnet_virtio, 9p: the shares; overlay: writable root on top of the host's
#  - virtio_console: fast output channels (virtio serial ports move ~3.5 MB/s under TCG, the
#    emulated UARTs ~140 KB/s)
#  - virtio_net: the NIC for run2
#  - crc32_generic: rdma_rxe asks the crypto API for "crc32" at run time, a dependency that
#    modules.dep cannot show
#  - rdma_rxe, ib_uverbs (/dev/infiniband/uverbs*), rdma_ucm (librdmacm, /dev/infiniband/rdma_cm)
#  - sch_netem, sch_prio, cls_u32, veth: fault injection (loss, delay, corruption...) on the
#    RoCEv2 packets (UDP port 4791) of the netdev under rxe, and a veth pair for two rxe devices
#    whose packets really cross a netdev (rxe short-cuts traffic between QPs of one device:
#    RXE_LOOPBACK_MASK)
#  - sch_ingress (clsact), cls_bpf: packet events, qpo's tc BPF program on a netdev's ingress
MODULES=(virtio_pci virtio_console virtio_net 9pnet_virtio 9p overlay crc32_generic rdma_rxe ib_uverbs
    rdma_ucm sch_netem sch_prio cls_u32 veth sch_ingress cls_bpf)

# Host environment that reaches the guest command, besides QPO_* and --env.
ENV_NAMES=(PATH HOME USER LOGNAME LANG LANGUAGE TZ TERM LD_LIBRARY_PATH
    ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS)
ENV_PREFIXES=(QPO_ LC_ RDMAV_ IBV_ GTEST_ CTEST_)

say() { echo "lab: $*" >&2; }
die() { echo "lab: error: $*" >&2; exit $EXIT_LAB; }
usage_error() { echo "lab: $*" >&2; echo "lab: see 'lab.sh help'" >&2; exit $EXIT_USAGE; }

usage() {
    cat <<'EOF'
usage: lab.sh COMMAND ...

  prepare      download Debian's kernel and build the guest boot files (idempotent, cached)
  info         show the cache directory, the kernel and whether it is prepared
  run  [--timeout SECS] [--smp N] [--mem MB] [--cwd DIR] [--out DIR] [--env NAME[=VALUE]]...
       [--verbose] -- CMD [ARGS...]
               run CMD in one guest with rxe0 on lo; exits with CMD's exit code
  run2 [--timeout SECS] [--smp N] [--mem MB] [--cwd DIR] [--out DIR] [--env NAME[=VALUE]]...
       [--verbose] [--plain-a] [--prefix-b TEXT] [--grace-b SECS] [--status-file FILE]
       --cmd-a 'SHELL CMD' --cmd-b 'SHELL CMD'
               two guests a and b joined by a network (rxe0 on eth0, fd00:1::1 and fd00:1::2);
               --plain-a: guest a's output without the '[a] ' prefix;
               --prefix-b: guest b's line prefix instead of '[b] ';
               --grace-b: b serves a: b's end never stops a, and b is stopped SECS s after
               a's command ended; --status-file: write 'a|b RC HOW' lines there at the end

exit codes: CMD's own; 124 timeout; 125 the lab failed (boot, rxe, missing tools); 2 usage
environment: QPO_LAB_CACHE (cache dir), QPO_LAB_OUT (host dir for results, also set in the guest),
             QPO_LAB_MTU (run2: the link's MTU, e.g. 9000 so rxe offers path_mtu 4096; default 1500)
EOF
}

# ------------------------------------------------------------------------------------------
# prepare
# ------------------------------------------------------------------------------------------

need_tools() {
    local t missing=()
    for t in "$@"; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
    ((${#missing[@]} == 0)) ||
        die "missing tools: ${missing[*]} (apt-get install qemu-system-x86 busybox-static kmod cpio xz-utils)"
}

# Sets KPKG and KVER: the ABI package linux-image-amd64 points at, and its candidate version.
# apt-cache takes ~1 s here (Docker images disable APT's binary cache), so the answer is
# remembered until the package lists change (apt-get update).
resolve_kernel_package() {
    local key memo=$CACHE/apt-kernel k
    key=$(stat -c '%n %Y %s' /var/lib/apt/lists/* /etc/apt/sources.list* /etc/apt/preferences* \
        2>/dev/null | sha256sum | cut -c1-16)
    if [[ -f $memo ]] && read -r k KPKG KVER <"$memo" && [[ $k == "$key" && -n $KVER ]]; then
        return 0
    fi
    KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
    [[ -n $KPKG ]] || die "apt-cache knows no linux-image-amd64 dependency (run apt-get update?)"
    KVER=$(apt-cache policy "$KPKG" 2>/dev/null | awk '$1 == "Candidate:" { print $2; exit }')
    [[ -n $KVER && $KVER != "(none)" ]] || die "no installable version of $KPKG (run apt-get update?)"
    mkdir -p "$CACHE" && echo "$key $KPKG $KVER" >"$memo"
}

# The cache directory of one kernel package version: a new kernel gets a fresh directory.
kernel_dir() { echo "$CACHE/${KPKG}_${KVER//:/_}"; }

# A key over everything the initramfs is built from, so editing init.sh or MODULES rebuilds it.
initrd_key() {
    { cat "$LAB_DIR/init.sh"; echo "${MODULES[*]}"; sha256sum /bin/busybox; } | sha256sum | cut -c1-16
}

# Prints the module paths (relative to the modules dir) that load NAMES..., each after its
# dependencies, using modules.dep ("path: dep-path dep-path ...").
resolve_modules() {
    local moddir=$1; shift
    local -A path_of=() deps_of=() seen=() builtin=()
    local line path name
    while IFS= read -r line; do
        path=${line%%:*}
        name=${path##*/}; name=${name%%.ko*}; name=${name//-/_}
        path_of[$name]=$path
        deps_of[$name]=${line#*: }
        [[ $line == *: ]] && deps_of[$name]=""
    done <"$moddir/modules.dep"
    if [[ -f $moddir/modules.builtin ]]; then
        while IFS= read -r path; do
            name=${path##*/}; name=${name%%.ko*}; builtin[${name//-/_}]=1
        done <"$moddir/modules.builtin"
    fi
    visit() {
        local n=${1//-/_} d dn
        [[ -n ${seen[$n]:-} ]] && return 0
        seen[$n]=1
        [[ -n ${builtin[$n]:-} ]] && return 0
        [[ -n ${path_of[$n]:-} ]] || { say "module $n not found in $moddir"; return 1; }
        for d in ${deps_of[$n]}; do
            dn=${d##*/}; dn=${dn%%.ko*}
            visit "$dn" || return 1
        done
        echo "${path_of[$n]}"
    }
    for name in "$@"; do visit "$name" || return 1; done
}

# Finds the XZ stream inside a bzImage and unpacks the ELF kernel. QEMU boots an ELF vmlinux
# directly through its PVH note, skipping SeaBIOS and the in-guest decompression (slow in TCG).
extract_vmlinux() {
    local vmlinuz=$1 out=$2 off
    off=$(LC_ALL=C grep -obUaP '\xfd\x37\x7a\x58\x5a\x00' "$vmlinuz" | head -n1 | cut -d: -f1) || true
    [[ -n $off ]] || return 1
    # xz stops after the stream; tail then dies of SIGPIPE, which is fine: only xz's status counts.
    xz -dc --single-stream < <(tail -c +$((off + 1)) "$vmlinuz") >"$out.tmp" 2>/dev/null || return 1
    [[ $(head -c 4 "$out.tmp" | od -An -c | tr -d ' ') == '177ELF' ]] || return 1
    mv "$out.tmp" "$out"
}

build_initramfs() {
    local kdir=$1 krel=$2 out=$3
    local moddir=$kdir/root/lib/modules/$krel stage=$kdir/initramfs.tmp m name
    rm -rf "$stage"
    mkdir -p "$stage"/{bin,dev,proc,sys,mnt,etc,lib/modules}
    cp /bin/busybox "$stage/bin/busybox"
    install -m 0755 "$LAB_DIR/init.sh" "$stage/init"
    local mods
    mods=$(resolve_modules "$moddir" "${MODULES[@]}") || die "cannot resolve the guest's modules"
    : >"$stage/etc/lab-modules"
    for m in $mods; do
        name=${m##*/}; name=${name%%.ko*}
        # Unpack compressed modules here so busybox insmod needs no decompressor.
        case $m in
            *.ko.xz) xz -dc "$moddir/$m" ;;
            *.ko.zst) zstd -qdc "$moddir/$m" ;;
            *.ko.gz) gzip -dc "$moddir/$m" ;;
            *) cat "$moddir/$m" ;;
        esac >"$stage/lib/modules/$name.ko"
        echo "$name" >>"$stage/etc/lab-modules"
    done
    # Uncompressed: gunzip inside the guest would cost more boot time than it saves.
    (cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp"
    mv "$out.tmp" "$out"
    rm -rf "$stage"
    say "initramfs: busybox, init.sh and $(echo "$mods" | wc -w) modules"
}

# Builds what is missing; prints nothing when everything is cached. Sets BOOT_KERNEL,
# BOOT_INITRD and KREL for the callers.
prepare() {
    need_tools apt-cache apt-get dpkg depmod cpio xz flock "$QEMU"
    dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' ||
        die "busybox-static is not installed (apt-get install busybox-static)"
    mkdir -p "$CACHE"
    local lock
    exec {lock}>"$CACHE/.lock"
    flock "$lock"

    resolve_kernel_package
    local kdir
    kdir=$(kernel_dir)
    if ! prepare_kernel "$kdir"; then
        # No network, say, but an older kernel is ready: better than nothing.
        if [[ -L $CACHE/current && -f $CACHE/current/ready ]]; then
            say "warning: using the previously prepared $(readlink "$CACHE/current")"
            kdir=$(readlink -f "$CACHE/current")
        else
            die "could not prepare $KPKG $KVER"
        fi
    fi
    [[ $(readlink "$CACHE/current" 2>/dev/null) == "${kdir##*/}" ]] || ln -sfn "${kdir##*/}" "$CACHE/current"
    KREL=$(cat "$kdir/kernel-release")
    BOOT_KERNEL=$kdir/$(cat "$kdir/boot-kernel")

    # One initramfs per key: checkouts whose init.sh or MODULES differ (a branch, a worktree)
    # boot side by side without rebuilding each other's.
    BOOT_INITRD=$kdir/initrd-$(initrd_key).cpio
    [[ -f $BOOT_INITRD ]] || build_initramfs "$kdir" "$KREL" "$BOOT_INITRD"
    exec {lock}>&-
}

# Download, unpack, depmod and vmlinux for one kernel package version, once.
prepare_kernel() {
    local kdir=$1
    [[ -f $kdir/ready ]] && return 0
    rm -rf "$kdir"
    mkdir -p "$kdir/dl"
    say "downloading $KPKG $KVER into $kdir"
    # apt-get download writes into the current directory.
    if ! (cd "$kdir/dl" && apt-get download -q "$KPKG=$KVER" >download.log 2>&1); then
        sed 's/^/lab:   /' "$kdir/dl/download.log" >&2
        say "apt-get download $KPKG=$KVER failed"
        rm -rf "$kdir"
        return 1
    fi
    say "unpacking"
    dpkg -x "$kdir"/dl/*.deb "$kdir/root" || { rm -rf "$kdir"; return 1; }
    local krel
    krel=$(find "$kdir/root/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n1)
    [[ -n $krel && -f $kdir/root/boot/vmlinuz-$krel ]] || {
        say "unexpected package layout (no lib/modules/* or boot/vmlinuz-*)"
        rm -rf "$kdir"
        return 1
    }
    depmod -b "$kdir/root" "$krel" || { rm -rf "$kdir"; return 1; }
    echo "$krel" >"$kdir/kernel-release"
    if extract_vmlinux "$kdir/root/boot/vmlinuz-$krel" "$kdir/vmlinux"; then
        say "kernel $krel: vmlinux extracted (direct PVH boot)"
        echo vmlinux >"$kdir/boot-kernel"
    else
        say "kernel $krel: could not extract vmlinux, booting vmlinuz (slower)"
        echo "root/boot/vmlinuz-$krel" >"$kdir/boot-kernel"
    fi
    rm -rf "$kdir/dl"
    touch "$kdir/ready"
    ln -sfn "${kdir##*/}" "$CACHE/current"
    # Only the newest kernel is kept.
    local old
    for old in "$CACHE"/*/; do
        old=${old%/}
        [[ -L $old || $old == "$kdir" ]] && continue
        [[ -f $old/ready ]] && rm -rf "$old"
    done
    return 0
}

cmd_info() {
    echo "cache:     $CACHE"
    resolve_kernel_package
    local kdir
    kdir=$(kernel_dir)
    echo "package:   $KPKG $KVER"
    if [[ -f $kdir/ready ]]; then
        echo "kernel:    $(cat "$kdir/kernel-release")"
        echo "boot:      $kdir/$(cat "$kdir/boot-kernel")"
        if [[ -f $kdir/initrd-$(initrd_key).cpio ]]; then
            echo "initramfs: $kdir/initrd-$(initrd_key).cpio"
            echo "prepared:  yes"
        else
            echo "prepared:  no (initramfs missing or out of date; run lab.sh prepare)"
        fi
    else
        echo "prepared:  no (run lab.sh prepare)"
    fi
    echo "qemu:      $("$QEMU" --version 2>/dev/null | head -n1 || echo "not found")"
}

# ------------------------------------------------------------------------------------------
# run / run2
# ------------------------------------------------------------------------------------------

# POSIX-sh single quoting, for lab.conf (read by busybox sh, which lacks bash's $'...').
shq() { local s=${1//\'/\'\\\'\'}; printf "'%s'" "$s"; }

# A command line for messages: plain words stay plain, others get shell quotes.
show_cmd() {
    local a words=()
    for a in "$@"; do
        if [[ $a =~ ^[][A-Za-z0-9_./:=@%+,-]+$ ]]; then words+=("$a"); else words+=("${a@Q}"); fi
    done
    echo "${words[*]}"
}

# QEMU option values: a comma has to be doubled.
qarg() { printf '%s' "${1//,/,,}"; }

# Writes the export lines of the guest command's environment.
write_env() { # write_env EXTRA_ASSIGNMENTS... (NAME=VALUE)
    local name p a
    for name in "${ENV_NAMES[@]}"; do
        [[ -n ${!name+x} ]] && printf 'export %s=%q\n' "$name" "${!name}"
    done
    while IFS= read -r name; do
        for p in "${ENV_PREFIXES[@]}"; do
            [[ $name == "$p"* ]] && { printf 'export %s=%q\n' "$name" "${!name}"; break; }
        done
    done < <(compgen -e)
    for a in "$@"; do printf 'export %s=%q\n' "${a%%=*}" "${a#*=}"; done
}

# Options of run and run2; sets OPT_* and leaves the command in REST. Parsing stops at "--"
# or at the first word that is not an option, so the command's own options stay its own.
parse_options() {
    OPT_TIMEOUT=600 OPT_SMP=$1 OPT_MEM=1024 OPT_CWD=$PWD OPT_OUT=${QPO_LAB_OUT:-} OPT_VERBOSE=0
    OPT_ENV=() OPT_CMD_A='' OPT_CMD_B='' OPT_PLAIN_A=0 OPT_PREFIX_B='[b] ' OPT_GRACE_B='' OPT_STATUS_FILE=''
    OPT_RUN2_ONLY=() REST=()
    shift
    while (($#)); do
        case $1 in
            --timeout) OPT_TIMEOUT=${2:?--timeout needs SECS}; shift 2 ;;
            --smp) OPT_SMP=${2:?--smp needs N}; shift 2 ;;
            --mem) OPT_MEM=${2:?--mem needs MB}; shift 2 ;;
            --cwd) OPT_CWD=${2:?--cwd needs DIR}; shift 2 ;;
            --out) OPT_OUT=${2:?--out needs DIR}; shift 2 ;;
            --env)
                local e=${2:?--env needs NAME[=VALUE]}
                [[ $e == *=* ]] || e="$e=${!e-}"
                OPT_ENV+=("$e"); shift 2 ;;
            --verbose) OPT_VERBOSE=1; shift ;;
            --cmd-a) OPT_CMD_A=${2:?--cmd-a needs a shell command}; shift 2 ;;
            --cmd-b) OPT_CMD_B=${2:?--cmd-b needs a shell command}; shift 2 ;;
            --plain-a) OPT_PLAIN_A=1; OPT_RUN2_ONLY+=("$1"); shift ;;
            --prefix-b) OPT_PREFIX_B=${2?--prefix-b needs TEXT}; OPT_RUN2_ONLY+=("$1"); shift 2 ;;
            --grace-b) OPT_GRACE_B=${2:?--grace-b needs SECS}; OPT_RUN2_ONLY+=("$1"); shift 2 ;;
            --status-file) OPT_STATUS_FILE=${2:?--status-file needs FILE}; OPT_RUN2_ONLY+=("$1"); shift 2 ;;
            --) shift; REST=("$@"); break ;;
            -*) usage_error "unknown option $1" ;;
            *) REST=("$@"); break ;;
        esac
    done
    [[ $OPT_TIMEOUT =~ ^[0-9]+$ && $OPT_TIMEOUT -gt 0 ]] || usage_error "--timeout wants a positive number of seconds"
    [[ -z $OPT_GRACE_B || $OPT_GRACE_B =~ ^[0-9]+$ ]] || usage_error "--grace-b wants a whole number of seconds"
    [[ $OPT_SMP =~ ^[0-9]+$ && $OPT_SMP -gt 0 ]] || usage_error "--smp wants a positive number"
    [[ $OPT_MEM =~ ^[0-9]+$ && $OPT_MEM -ge 128 ]] || usage_error "--mem wants MB >= 128"
    [[ -d $OPT_CWD ]] || usage_error "--cwd $OPT_CWD: no such directory"
    OPT_CWD=$(cd "$OPT_CWD" && pwd)
    if [[ -n $OPT_OUT ]]; then
        mkdir -p "$OPT_OUT" || die "cannot create $OPT_OUT"
        OPT_OUT=$(cd "$OPT_OUT" && pwd -P)
    fi
}

WORK='' GUEST_WRAP=() GUEST_PIDS=() PUMP_PIDS=() STOPPER_PID='' BARRIER_PID=
cleanup() {
    local p
    for p in "${GUEST_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PUMP_PIDS[@]}" $STOPPER_PID $BARRIER_PID; do kill -TERM "$p" 2>/dev/null || true; done
    [[ -n $WORK ]] && rm -rf "$WORK"
}
on_signal() { say "interrupted"; trap - EXIT; cleanup; exit 130; }

# Creates $WORK (private temp dir). Each guest gets $WORK/<name>/ctl as its labctl share.
make_work() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/qpo-lab.XXXXXX")
    trap cleanup EXIT
    trap on_signal INT TERM HUP
}

# Writes lab.conf and cmd.sh for one guest.
#   setup_guest NAME NETDEV IP6 IP4 GIDS BARRIER OUTDIR ENV_ASSIGNMENTS... -- CMD...
# GIDS: how many GIDs rxe0 must have before the command starts. BARRIER=1: the command waits
# until the host creates ctl/go (run2 releases both guests together).
# CMD runs with exec, arguments kept verbatim.
setup_guest() {
    local name=$1 netdev=$2 ip6=$3 ip4=$4 gids=$5 barrier=$6 out=$7
    shift 7
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    local ctl=$WORK/$name/ctl
    mkdir -p "$ctl"
    local out_tty=0 err_tty=0 cols=80 rows=24
    [[ -t 1 ]] && out_tty=1
    [[ -t 2 ]] && err_tty=1
    # The guest's terminal gets our size, so column-formatting tools behave the same.
    if [[ -t 1 ]]; then read -r rows cols < <(stty size 0<&1 2>/dev/null) || true; fi
    {
        echo "LAB_NETDEV=$(shq "$netdev")"
        echo "LAB_MTU=$(shq "${QPO_LAB_MTU:-}")"
        echo "LAB_IP6=$(shq "$ip6")"
        echo "LAB_IP4=$(shq "$ip4")"
        echo "LAB_GIDS=$gids"
        echo "LAB_BARRIER=$barrier"
        echo "LAB_OUT=$(shq "$out")"
        echo "LAB_HOSTNAME=$(shq "lab-$name")"
        echo "LAB_STDOUT_TTY=$out_tty"
        echo "LAB_STDERR_TTY=$err_tty"
        echo "LAB_COLS=${cols:-80}"
        echo "LAB_ROWS=${rows:-24}"
    } >"$ctl/lab.conf"
    {
        echo "# generated by lab.sh: the environment, the directory and the command"
        write_env "${envs[@]}" "QPO_LAB=1" "QPO_LAB_OUT=$out"
        # The host's /proc, read-only and uncached: qpo reports the host's CPU contention
        # next to its figures (a TCG guest sees neither steal time nor the host's load).
        echo 'mkdir -p /run/qpo-lab/hostproc &&'
        echo '  /bin/mount -t 9p -o trans=virtio,version=9p2000.L,ro hostproc /run/qpo-lab/hostproc 2>/dev/null &&'
        echo '  export QPO_HOST_PROC=/run/qpo-lab/hostproc'
        printf 'cd -- %q || { echo "lab: cannot cd to "%q >&2; exit 125; }\n' "$OPT_CWD" "$OPT_CWD"
        printf 'exec'
        printf ' %q' "$@"
        printf '\n'
    } >"$ctl/cmd.sh"
}

# Starts one guest in the background (pid appended to GUEST_PIDS); its stdout/stderr pumps
# copy the guest's output channels to ours, with PREFIX in front of every line if given.
# Each stream has two channels into the same FIFO: a UART (ttyS1/ttyS2), used when the command
# should see a terminal, and a virtio serial port (qpo.stdout/qpo.stderr), used otherwise.
#   start_guest NAME PREFIX OUTDIR QEMU_NET_ARGS...
start_guest() {
    local name=$1 prefix=$2 out=$3
    shift 3
    local dir=$WORK/$name
    mkfifo "$dir/stdout" "$dir/stderr"
    : >"$dir/console.log"
    # If our stdout goes away (lab.sh ... | head), the pump keeps draining the FIFO into
    # /dev/null: a stalled FIFO would stall the guest until the timeout.
    local copy=(cat) sed_prefix=${prefix//\\/\\\\}
    sed_prefix=${sed_prefix//\//\\/}
    sed_prefix=${sed_prefix//&/\\&}
    [[ -n $prefix ]] && copy=(sed -u "s/^/$sed_prefix/")
    { "${copy[@]}" || cat >/dev/null; } <"$dir/stdout" & PUMP_PIDS+=($!)
    { "${copy[@]}" >&2 || cat >/dev/null; } <"$dir/stderr" & PUMP_PIDS+=($!)
    local args=(
        -name "qpo-lab-$name" -nodefaults -no-user-config -display none -no-reboot
        -accel tcg,thread=multi,tb-size=128 -cpu max -smp "$OPT_SMP" -m "$OPT_MEM"
        -kernel "$BOOT_KERNEL" -initrd "$BOOT_INITRD"
        -append "console=ttyS0 quiet loglevel=3 panic=-1 ${QPO_LAB_KERNEL_ARGS:-}"
        -chardev "file,id=con,path=$(qarg "$dir/console.log"),append=on" -serial chardev:con
        -chardev "file,id=out,path=$(qarg "$dir/stdout"),append=on" -serial chardev:out
        -chardev "file,id=err,path=$(qarg "$dir/stderr"),append=on" -serial chardev:err
        -device virtio-serial-pci,id=vser
        -chardev "file,id=vout,path=$(qarg "$dir/stdout"),append=on"
        -device virtserialport,chardev=vout,name=qpo.stdout
        -chardev "file,id=verr,path=$(qarg "$dir/stderr"),append=on"
        -device virtserialport,chardev=verr,name=qpo.stderr
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
        -virtfs "local,path=$(qarg "$dir/ctl"),mount_tag=labctl,security_model=none"
        -virtfs "local,path=$(qarg "$out"),mount_tag=labout,security_model=none"
        -virtfs local,path=/proc,mount_tag=hostproc,security_model=none,readonly=on
        "$@"
    )
    # timeout: TERM at the deadline, KILL 5 s later; it exits 124 when the deadline hit.
    timeout -k 5 "$OPT_TIMEOUT" "${GUEST_WRAP[@]+"${GUEST_WRAP[@]}"}" "$QEMU" "${args[@]}" </dev/null >"$dir/qemu.log" 2>&1 &
    GUEST_PIDS+=($!)
    if ((OPT_VERBOSE)); then
        tail -n +1 -f --pid=$! "$dir/console.log" | sed -u "s/^/[console${prefix:+ $name}] /" >&2 &
        PUMP_PIDS+=($!)
    fi
}

# After the guest's QEMU exited with status $2: prints the lab's verdict, returns the exit code
# and sets VERDICT_HOW: exit (the command's own status), timeout, stopped (by the other guest's
# end: --grace-b, or its failure), lab (the lab failed).
VERDICT_HOW=''
guest_verdict() {
    local name=$1 qrc=$2 label=$3 what=$4 dir=$WORK/$1
    VERDICT_HOW=lab
    if [[ -f $dir/ctl/rc ]]; then
        local rc tries=0
        # The guest wrote it through 9p just before powering off; CI once saw the file listed
        # and its read fail a moment later ("No such file"): read again before giving up.
        rc=$(cat "$dir/ctl/rc" 2>/dev/null)
        while [[ ! $rc =~ ^[0-9]+$ ]] && ((tries < 10)); do
            sleep 0.2
            tries=$((tries + 1))
            rc=$(cat "$dir/ctl/rc" 2>/dev/null)
        done
        if [[ ! $rc =~ ^[0-9]+$ ]]; then
            say "${label}lab failed: the guest's exit status file ctl/rc could not be read"
            return $EXIT_LAB
        fi
        if [[ -f $dir/ctl/error ]]; then
            say "${label}lab failed in the guest: $(cat "$dir/ctl/error")"
            show_logs "$dir"
        else
            VERDICT_HOW='exit'
        fi
        return "$rc"
    fi
    if ((qrc == 124)); then
        VERDICT_HOW=timeout
        say "${label}timed out after $OPT_TIMEOUT s running: $what"
        return $EXIT_TIMEOUT
    fi
    if [[ -f $dir/graced ]]; then
        VERDICT_HOW=stopped
        say "${label}stopped: still running $OPT_GRACE_B s after guest a's command ended (--grace-b)"
        return $EXIT_TIMEOUT
    fi
    if [[ -f $dir/killed ]]; then
        VERDICT_HOW=stopped
        say "${label}stopped because the other guest failed"
        return $EXIT_LAB
    fi
    if [[ -f $dir/ctl/started ]]; then
        say "${label}the guest crashed while running the command (qemu exit status $qrc$(qemu_exit_meaning "$qrc"), no result)"
    else
        say "${label}the guest failed to boot (qemu exit status $qrc$(qemu_exit_meaning "$qrc"), no result)"
    fi
    show_logs "$dir"
    return $EXIT_LAB
}

# Words for a QEMU exit status that ended a guest without a result.
qemu_exit_meaning() {
    case $1 in
        0) echo ": the guest powered off, or reset (a triple fault, a panic) and -no-reboot ended QEMU" ;;
        13[0-9] | 14[0-9]) echo ": QEMU died of signal $(($1 - 128))" ;;
    esac
}

# Boots that die before the command started: under TCG on a loaded host, QEMU has been seen
# to segfault or the guest to reset in early boot, a few times in hundreds of boots. Such a
# guest is booted again (its command never started, so nothing runs twice). Not a guest that
# reported a reason (ctl/rc, or init's "FAILED:" line when it could not even mount labctl), one
# that timed out (124, or 137 when timeout had to KILL it) or one that was stopped.
readonly BOOT_ATTEMPTS=3
died_before_start() {
    local name=$1 qrc=$2 dir=$WORK/$1
    ((qrc != 124 && qrc != 137)) || return 1
    [[ ! -f $dir/ctl/rc && ! -f $dir/ctl/started && ! -f $dir/killed ]] || return 1
    ! grep -q 'lab-guest: FAILED:' "$dir/console.log" 2>/dev/null
}

# Makes guest NAME's directory ready for another boot: the old console is kept next to it,
# the old output FIFOs are released (their pumps see end-of-file) and made anew by start_guest.
reset_guest_dir() {
    local name=$1 attempt=$2 dir=$WORK/$1 f fd
    mv "$dir/console.log" "$dir/console.$attempt.log"
    mv "$dir/qemu.log" "$dir/qemu.$attempt.log"
    # The barrier waits for the new boot's ready (a go it already gave stays: the other
    # guest's command is running, and this one's starts as soon as it is ready).
    rm -f "$dir/ctl/ready" "$dir/ctl/started"
    for f in "$dir/stdout" "$dir/stderr"; do
        exec {fd}<>"$f"
        exec {fd}>&-
        rm -f "$f"
    done
}

# Says why guest NAME is booted again, with what its failed boot left.
say_reboot() {
    local name=$1 qrc=$2 attempt=$3 label=$4 dir=$WORK/$1
    say "${label}the guest died while booting (qemu exit status $qrc$(qemu_exit_meaning "$qrc")); booting it again (attempt $((attempt + 1)) of $BOOT_ATTEMPTS)"
    if [[ -s $dir/qemu.log ]]; then
        tail -n 5 "$dir/qemu.log" | sed 's/^/lab:   qemu: /' >&2
    fi
    if [[ -s $dir/console.log ]]; then
        tail -n 5 "$dir/console.log" | tr -d '\r' | sed 's/^/lab:   console: /' >&2
    fi
}

show_logs() {
    local dir=$1
    if [[ -s $dir/qemu.log ]]; then
        say "qemu said:"
        tail -n 20 "$dir/qemu.log" | sed 's/^/lab:   /' >&2
    fi
    if [[ -s $dir/console.log ]]; then
        say "guest console (last lines):"
        tail -n 30 "$dir/console.log" | tr -d '\r' | sed 's/^/lab:   /' >&2
    fi
}

# Waits for the pumps to copy the last output. Call it only when QEMU has exited.
wait_pumps() {
    local p f fd
    # A QEMU that died before opening its FIFOs left the pumps blocked in open(): a
    # read-write open (which never blocks) and close lets them see end-of-file.
    for f in "$WORK"/*/stdout "$WORK"/*/stderr; do
        [[ -p $f ]] || continue
        exec {fd}<>"$f"
        exec {fd}>&-
    done
    for p in "${PUMP_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    PUMP_PIDS=()
}

cmd_run() {
    parse_options 2 "$@"
    set -- "${REST[@]+"${REST[@]}"}"
    (($#)) || usage_error "run: no command (lab.sh run [options] -- CMD [ARGS...])"
    [[ -z $OPT_CMD_A$OPT_CMD_B ]] || usage_error "run: --cmd-a/--cmd-b belong to run2"
    ((${#OPT_RUN2_ONLY[@]} == 0)) || usage_error "run: ${OPT_RUN2_ONLY[0]} belongs to run2"

    prepare
    make_work
    local out=${OPT_OUT:-$WORK/out}
    mkdir -p "$out"
    # rxe0 on lo: GID 0 fe80::..., GID 1 ::ffff:127.0.0.1 (ibv_rc_pingpong -g 1), GID 2 ::1
    setup_guest a lo "" "" 3 0 "$out" "${OPT_ENV[@]+"${OPT_ENV[@]}"}" -- "$@"
    local qrc attempt=1
    while :; do
        start_guest a "" "$out" -nic none
        qrc=0
        wait "${GUEST_PIDS[0]}" || qrc=$?
        GUEST_PIDS=()
        if ((attempt >= BOOT_ATTEMPTS)) || ! died_before_start a "$qrc"; then break; fi
        say_reboot a "$qrc" "$attempt" ""
        reset_guest_dir a "$attempt"
        attempt=$((attempt + 1))
    done
    wait_pumps
    local rc=0
    guest_verdict a "$qrc" "" "$(show_cmd "$@")" || rc=$?
    return "$rc"
}

# Two free UDP ports on 127.0.0.1 (nothing bound to them right now).
free_udp_ports() {
    local used p found=()
    used=$(ss -Hlun 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u)
    while ((${#found[@]} < 2)); do
        p=$((20000 + RANDOM % 40000))
        grep -qx "$p" <<<"$used" && continue
        [[ " ${found[*]-} " == *" $p "* ]] && continue
        found+=("$p")
    done
    echo "${found[@]}"
}

# In the background (STOPPER_PID): after SECS s, creates MARK and stops the guest whose QEMU is
# PID. Its sleep ends with it, and it holds none of our output: a caller that reads lab.sh's
# output to its end (out=$(lab.sh ...)) would otherwise wait for a sleep that outlived lab.sh.
#   start_stopper SECS MARK PID
start_stopper() {
    local secs=$1 mark=$2 pid=$3
    (
        exec </dev/null >/dev/null 2>&1
        trap 'kill "$sleeper" 2>/dev/null; wait "$sleeper"; exit 0' TERM
        sleep "$secs" &
        sleeper=$!
        wait "$sleeper"
        touch "$mark"
        kill -TERM "$pid"
    ) &
    STOPPER_PID=$!
}

cmd_run2() {
    parse_options 1 "$@"
    ((${#REST[@]} == 0)) || usage_error "run2: unexpected argument ${REST[0]}"
    local cmd_a=$OPT_CMD_A cmd_b=$OPT_CMD_B p
    [[ -n $cmd_a && -n $cmd_b ]] || usage_error "run2 needs --cmd-a 'CMD' and --cmd-b 'CMD'"

    prepare
    make_work
    local out=${OPT_OUT:-$WORK/out}
    mkdir -p "$out"
    # IPv6 ULAs for the project's own traffic; IPv4 too, because ibv_*_pingpong and perftest
    # exchange their connection data over IPv4 only. GIDs: link-local, ULA, IPv4-mapped.
    local ip_a=fd00:1::1 ip_b=fd00:1::2 ip4_a=10.0.1.1 ip4_b=10.0.1.2
    setup_guest a eth0 "$ip_a/64" "$ip4_a/24" 3 1 "$out" "${OPT_ENV[@]+"${OPT_ENV[@]}"}" \
        QPO_LAB_ROLE=a QPO_LAB_IP6=$ip_a QPO_LAB_PEER_IP6=$ip_b \
        QPO_LAB_IP4=$ip4_a QPO_LAB_PEER_IP4=$ip4_b -- /bin/bash -c "$cmd_a"
    setup_guest b eth0 "$ip_b/64" "$ip4_b/24" 3 1 "$out" "${OPT_ENV[@]+"${OPT_ENV[@]}"}" \
        QPO_LAB_ROLE=b QPO_LAB_IP6=$ip_b QPO_LAB_PEER_IP6=$ip_a \
        QPO_LAB_IP4=$ip4_b QPO_LAB_PEER_IP4=$ip4_a -- /bin/bash -c "$cmd_b"
    # A datagram link over host loopback: ~2 ms round trip (stream/socket netdevs add ~22 ms).
    # udp_link.py opens each end with a 1 MiB receive buffer (why that size: its header) and
    # QEMU takes the socket as its netdev's descriptor.
    local pa pb
    read -r pa pb < <(free_udp_ports)
    local -a net_a net_b
    net_a=(-netdev "dgram,id=n0,local.type=fd,local.str={fd}" -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:01)
    net_b=(-netdev "dgram,id=n0,local.type=fd,local.str={fd}" -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:02)
    # --plain-a: guest a's command speaks for the run (qpo run's report, JSON included), so its
    # lines keep their own form; guest b's stay prefixed.
    local prefix_a="[a] "
    ((OPT_PLAIN_A)) && prefix_a=""
    local -a wrap_a=(python3 "$LAB_DIR/udp_link.py" "$pa" "$pb" $((512 << 10)) --)
    local -a wrap_b=(python3 "$LAB_DIR/udp_link.py" "$pb" "$pa" $((512 << 10)) --)
    GUEST_WRAP=("${wrap_a[@]}")
    start_guest a "$prefix_a" "$out" "${net_a[@]}"
    GUEST_WRAP=("${wrap_b[@]}")
    start_guest b "$OPT_PREFIX_B" "$out" "${net_b[@]}"
    # Boot times differ by a second or more: release both commands together once both
    # guests have rxe0 up.
    (
        until [[ -f $WORK/a/ctl/ready && -f $WORK/b/ctl/ready ]]; do sleep 0.05; done
        touch "$WORK/a/ctl/go" "$WORK/b/ctl/go"
    ) &
    BARRIER_PID=$!

    # When one guest's command fails the other is usually waiting for it: give it 5 s, then
    # stop it instead of waiting for the timeout. With --grace-b, b serves a (a stock tool
    # beside qpo run): a runs to its own end whatever b does, and b, which may still be
    # printing or finishing, gets --grace-b seconds after a's end, whatever a's status.
    local -A qrc=()
    local pid name
    local -A name_of=([${GUEST_PIDS[0]}]=a [${GUEST_PIDS[1]}]=b) attempts=([a]=1 [b]=1)
    while ((${#qrc[@]} < 2)); do
        local st=0
        wait -n -p pid "${GUEST_PIDS[@]}" || st=$?
        name=${name_of[$pid]}
        local remaining=()
        for p in "${GUEST_PIDS[@]}"; do [[ $p != "$pid" ]] && remaining+=("$p"); done
        GUEST_PIDS=("${remaining[@]+"${remaining[@]}"}")
        # A boot that died is replaced while the other guest still runs (its command waits at
        # the barrier, or for this one's); not once the other has ended: nobody would be there.
        if ((${#qrc[@]} == 0 && attempts[$name] < BOOT_ATTEMPTS)) && died_before_start "$name" "$st"; then
            say_reboot "$name" "$st" "${attempts[$name]}" "[$name] "
            reset_guest_dir "$name" "${attempts[$name]}"
            attempts[$name]=$((attempts[$name] + 1))
            if [[ $name == a ]]; then
                GUEST_WRAP=("${wrap_a[@]}")
                start_guest a "$prefix_a" "$out" "${net_a[@]}"
            else
                GUEST_WRAP=("${wrap_b[@]}")
                start_guest b "$OPT_PREFIX_B" "$out" "${net_b[@]}"
            fi
            name_of[${GUEST_PIDS[-1]}]=$name
            continue
        fi
        qrc[$name]=$st
        local rcf=$WORK/$name/ctl/rc
        if ((${#qrc[@]} < 2)) && [[ -n $OPT_GRACE_B ]]; then
            if [[ $name == a ]]; then
                start_stopper "$OPT_GRACE_B" "$WORK/b/graced" "${GUEST_PIDS[0]}"
            fi
        elif ((${#qrc[@]} < 2)) && { [[ ! -f $rcf ]] || [[ $(cat "$rcf") != 0 ]]; }; then
            local other_pid=${GUEST_PIDS[0]}
            local other=${name_of[$other_pid]}
            start_stopper 5 "$WORK/$other/killed" "$other_pid"
        fi
    done
    for p in $STOPPER_PID $BARRIER_PID; do kill "$p" 2>/dev/null || true; done
    wait_pumps
    local -A rc=([a]=0 [b]=0) how=()
    guest_verdict a "${qrc[a]}" "[a] " "$cmd_a" || rc[a]=$?
    how[a]=$VERDICT_HOW
    guest_verdict b "${qrc[b]}" "[b] " "$cmd_b" || rc[b]=$?
    how[b]=$VERDICT_HOW
    # --status-file: the caller reports both guests' outcomes itself (lab.sh's exit code can
    # carry only one), so the tally line below is left to it.
    if [[ -n $OPT_STATUS_FILE ]]; then
        printf 'a %s %s\nb %s %s\n' "${rc[a]}" "${how[a]}" "${rc[b]}" "${how[b]}" >"$OPT_STATUS_FILE" ||
            say "cannot write --status-file $OPT_STATUS_FILE"
    fi
    ((rc[a] == 0 && rc[b] == 0)) && return 0
    [[ -n $OPT_STATUS_FILE ]] || say "guest a: exit ${rc[a]}, guest b: exit ${rc[b]}"
    # The guest we stopped failed only as a consequence. Of the others, a lab failure says
    # more than the peer's error that it caused; otherwise a's status comes first.
    local n
    for n in a b; do
        [[ ! -f $WORK/$n/killed ]] && ((rc[$n] == EXIT_LAB)) && return $EXIT_LAB
    done
    for n in a b; do
        [[ ! -f $WORK/$n/killed ]] && ((rc[$n] != 0)) && return "${rc[$n]}"
    done
    return $EXIT_LAB
}

main() {
    local sub=${1:-help}
    (($#)) && shift
    case $sub in
        prepare) (($#)) && usage_error "prepare takes no arguments"; prepare ;;
        info) cmd_info ;;
        run) cmd_run "$@" ;;
        run2) cmd_run2 "$@" ;;
        help | -h | --help) usage ;;
        *) usage_error "unknown command '$sub'" ;;
    esac
}

main "$@"
