#!/usr/bin/env bash
# DDP throughput across the nodes of the local test cluster
# (tests/slurm/local_cluster.sh): the same Fashion-MNIST training steps
# (ddp_throughput --worker: samples/s of rank 0, batch per rank, 1 thread per
# rank) run as one Slurm job step with
#   1 node  x 2 ranks  (shared-memory average; the anchor),
#   2 nodes x 1 rank   (Gloo over TCP between the nodes' namespaces),
#   2 nodes x 2 ranks  (hierarchical: shared memory on each node, Gloo
#                       between the leaders) and, with --gloo, the same 4
#                       ranks averaging flat through Gloo.
# Prints the raw JSON line of each run (stderr) and samples/s ratios against
# the anchor, all measured in this run. The "nodes" are namespaces of this one
# machine joined by a bridge: crossing them costs the TCP stack and the
# veth pair, not a real network's latency or bandwidth. The 4-rank rows run
# 4 ranks on however many cores this machine has. Needs root and namespaces,
# like the cluster.
#
#   benchmarks/slurm_ddp.sh [BUILD_DIR=build] [STEPS=200] [MODEL=mlp] [REPEAT=2]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
steps=${2:-200}
model=${3:-mlp}
repeat=${4:-2}
bench=$build/benchmarks/ddp_throughput
[ -x "$bench" ] || { echo "no $bench: build the ddp_throughput target" >&2; exit 1; }
cluster=$root/tests/slurm/local_cluster.sh
export TUNERUN_SLURM_NODES=2 TUNERUN_SLURM_CPUS=2
trap '"$cluster" down >/dev/null 2>&1 || true' EXIT
"$cluster" up 2>/dev/null

port=29611
# run_step LABEL "SRUN_ARGS" PORT [--gloo]: rank 0's JSON line of one run, on stderr too.
run_step() {
  local line
  line=$("$cluster" run salloc --nodes=2 --exclusive --quiet srun $2 --quiet sh -c \
    "OMP_NUM_THREADS=1 RANK=\$SLURM_PROCID WORLD_SIZE=\$SLURM_NTASKS MASTER_ADDR=n1 \
     MASTER_PORT=$3 exec '$bench' --worker --model $model --steps $steps --warmup 10 \
     --batch 128 ${4:-}" 2>&1 | grep '^{' || true)
  [ -n "$line" ] || { echo "$1: no result" >&2; exit 1; }
  echo "$1 $line" >&2
  echo "$line"
}
field() { echo "$1" | sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p"; }

labels=(1x2 2x1 2x2 2x2-gloo)
layouts=("--nodes=1 --ntasks=2 -w n1" "--nodes=2 --ntasks=2 --ntasks-per-node=1"
  "--nodes=2 --ntasks=4 --ntasks-per-node=2" "--nodes=2 --ntasks=4 --ntasks-per-node=2")
extras=("" "" "" "--gloo")
declare -A best cpu waits
# Rounds alternate the layouts, best of each kept: the machine is shared, and
# a busy neighbour slows whichever layout runs at that moment.
for _ in $(seq 1 "$repeat"); do
  for i in "${!labels[@]}"; do
    port=$((port + 1))  # a fresh rendezvous port per run (run_step is a subshell)
    line=$(run_step "${labels[$i]}" "${layouts[$i]}" "$port" "${extras[$i]}")
    rate=$(field "$line" samples_per_s)
    waits[$i]="${waits[$i]:-} $(field "$line" allreduce_wait_ms_per_step)"
    if awk -v a="${best[$i]:-0}" -v b="$rate" 'BEGIN { exit !(b > a) }'; then
      best[$i]=$rate
      cpu[$i]=$(awk -v c="$(field "$line" rank0_cpu_s)" -v w="$(field "$line" wall_s)" \
        'BEGIN { printf "%.2f", c / w }')
    fi
  done
done
names=("1 node x 2 ranks (shared memory)" "2 nodes x 1 rank (Gloo TCP)"
  "2 nodes x 2 ranks (hierarchical)" "2 nodes x 2 ranks (flat Gloo)")
echo "model $model, batch 128 per rank, $steps steps per rank (10 warm-up), best of $repeat"
echo "(cpu/wall: rank 0's user+sys CPU seconds per wall second in that best run;"
echo " wait: ms per step backward waited for the average, median over the rounds: steadier"
echo " than samples/s when neighbours load the machine)"
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for i in "${!labels[@]}"; do
  ratio=$(awk -v a="${best[0]}" -v b="${best[$i]}" 'BEGIN { printf "%.2f", b / a }')
  printf '%-34s %8.0f samples/s  %5sx  wait %5.1f ms  cpu/wall %s%s\n' "${names[$i]}" \
    "${best[$i]}" "$ratio" "$(echo "${waits[$i]}" | median)" "${cpu[$i]}" \
    "$([ "$i" = 0 ] && echo '  (anchor)')"
done
