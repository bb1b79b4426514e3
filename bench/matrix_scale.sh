#!/usr/bin/env bash
# Scaling benchmark for a scenario's `matrix:` (issue 30 item 9): `qpo validate -q FILE` checks
# every combination, so its CPU time over 1,000 and 10,000 combinations of one small scenario
# (scenarios/rc-write-matrix.yaml's pair, five parameters) says whether the cost per
# combination stays flat. Best of RUNS by CPU time (user + sys), pinned to one core.
#
#   bench/matrix_scale.sh                 # uses build/qpo
#   QPO=/path/to/qpo RUNS=5 bench/matrix_scale.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
qpo=${QPO:-$root/build/qpo}
runs=${RUNS:-3}
[[ -x $qpo ]] || { echo "matrix_scale: no qpo binary at $qpo (build first, or set QPO=)" >&2; exit 2; }
pin=()
if command -v taskset > /dev/null; then pin=(taskset -c 0); fi
work=$(mktemp -d "${TMPDIR:-/tmp}/qpo-matrix.XXXXXX")
trap 'rm -rf "$work"' EXIT

# gen ITERATION_VALUES FILE: the example's scenario with a matrix of 10 x ITERATION_VALUES x 10 x 5 x 2.
gen() {
  local iterations=$1 out=$2
  sed '/^matrix:/,$d' "$root/scenarios/rc-write-matrix.yaml" > "$out"
  cat >> "$out" << YAML
matrix:
  workloads.write_bw.size: [1KiB, 2KiB, 4KiB, 8KiB, 16KiB, 32KiB, 64KiB, 128, 256, 512]
  workloads.write_bw.iterations: [$(seq -s ', ' 1 "$iterations")]
  qps.qa.cap.max_send_wr: [32, 33, 34, 35, 36, 37, 38, 39, 40, 41]
  mtu:
    set: [qps.qa.states.RTR.path_mtu, qps.qb.states.RTR.path_mtu]
    values: [256, 512, 1024, 2048, 4096]
  qps.qb.cap.max_recv_wr: [16, 17]
YAML
}

best_cpu_ms() {
  local best="" i cpu
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -o "$work/time" -f "%U %S" "${pin[@]}" "$qpo" validate -q "$1" > /dev/null ||
      { echo "matrix_scale: qpo validate $1 failed" >&2; exit 1; }
    cpu=$(awk '{ printf "%d", ($1 + $2) * 1000 }' < "$work/time")
    if [[ -z $best || $cpu -lt $best ]]; then best=$cpu; fi
  done
  echo "$best"
}

echo "qpo: $qpo   best of $runs by CPU time${pin:+, pinned to CPU 0}   load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%12s %8s %14s\n" combinations "cpu ms" "cpu us/comb."
declare -A ms
for k in 1 10; do
  gen "$k" "$work/m$k.yaml"
  n=$((1000 * k))
  ms[$k]=$(best_cpu_ms "$work/m$k.yaml")
  printf "%12d %8d %14.1f\n" "$n" "${ms[$k]}" "$(awk -v m="${ms[$k]}" -v n="$n" 'BEGIN { print m * 1000 / n }')"
done
awk -v a="${ms[1]}" -v b="${ms[10]}" 'BEGIN { printf "10k/1k cpu ratio %.1fx (linear: 10x)\n", b / a }'
