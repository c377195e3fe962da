#!/usr/bin/env bash
# Trial launch latency over ssh sessions against local fork/exec: the same
# sweep of N one-iteration trials, one at a time (max_concurrent_trials = 1),
# run by `tunerun` with --launcher local and with the ssh launcher on the
# local SSH test cluster (tests/ssh/local_cluster.sh: one host, its control
# connection opened once per run). Prints seconds per trial for each and
# their ratio (both measured in this run; the anchor is local fork/exec).
# Needs root and namespaces, like the cluster.
#
#   benchmarks/ssh_launch_latency.sh [BUILD_DIR=build] [N=20]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
n=${2:-20}
cluster=$root/tests/ssh/local_cluster.sh
work=$(mktemp -d)
trap 'TUNERUN_SSH_HOSTS=1 "$cluster" down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

TUNERUN_SSH_HOSTS=1 "$cluster" up 2>/dev/null
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
[cluster]
hostfile = "$("$cluster" hostfile)"
ssh_config = "$("$cluster" ssh_config)"
TOML

per_trial() {  # per_trial NAME COMMAND...: seconds per trial of the sweep COMMAND runs
  local name=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$@" >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.4f", (b - a) / n }'
}

local_s=$(per_trial local "$build/tunerun" run "$work/latency.toml" --storage-path "$work/local" \
  --launcher local -q)
ssh_s=$(per_trial ssh "$build/tunerun" run "$work/latency.toml" --storage-path "$work/ssh" \
  --launcher ssh --control-address 198.18.0.129 -q)
echo "trials: $n, one at a time, noop trainable, 1 iteration"
echo "local fork/exec: $local_s s/trial (anchor)"
echo "ssh session:     $ssh_s s/trial (the run's connection set-up included)"
awk -v a="$local_s" -v b="$ssh_s" 'BEGIN { printf "ratio ssh/local: %.2f\n", b / a }'
