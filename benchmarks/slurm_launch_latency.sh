#!/usr/bin/env bash
# Trial launch latency through Slurm job steps against local fork/exec: the
# same sweep of N one-iteration trials, one at a time (max_concurrent_trials
# = 1), run by `tunerun` with --launcher local and inside a 2-node
# allocation of the local test cluster (tests/slurm/local_cluster.sh) with
# the slurm launcher. Prints seconds per trial for each and their ratio
# (both measured in this run; the anchor is local fork/exec). Needs root and
# namespaces, like the cluster.
#
#   benchmarks/slurm_launch_latency.sh [BUILD_DIR=build] [N=20]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
n=${2:-20}
cluster=$root/tests/slurm/local_cluster.sh
work=$(mktemp -d)
trap '"$cluster" down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

cat >"$work/latency.toml" <<TOML
name = "latency"
metric = "value"
mode = "max"
num_samples = $n
max_concurrent_trials = 1
[trainable]
builtin = "noop"
[param_space]
iterations = 1
TOML

per_trial() {  # per_trial NAME COMMAND...: seconds per trial of the sweep COMMAND runs
  local name=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$@" >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.4f", (b - a) / n }'
}

"$cluster" up 2>/dev/null
local_s=$(per_trial local "$build/tunerun" run "$work/latency.toml" --storage-path "$work/local" \
  --launcher local -q)
slurm_s=$(per_trial slurm "$cluster" run salloc --nodes=2 --exclusive --quiet "$build/tunerun" \
  run "$work/latency.toml" --storage-path "$work/slurm" --control-address 198.18.0.1 -q)
echo "trials: $n, one at a time, noop trainable, 1 iteration"
echo "local fork/exec: $local_s s/trial (anchor)"
echo "slurm job step:  $slurm_s s/trial (salloc included)"
awk -v a="$local_s" -v b="$slurm_s" 'BEGIN { printf "ratio slurm/local: %.2f\n", b / a }'
