#!/usr/bin/env bash
# Installs missing packages, then configures and builds tunerun into build/
# (Ninja, ccache, -j2: these machines have 2 cores). Safe to run repeatedly.
#   scripts/build.sh                  everything, the benchmarks included
#   scripts/build.sh --target NAME    arguments go to `cmake --build`
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TUNERUN_BUILD_DIR:-$root/build}

"$root/scripts/install_deps.sh"
# Precompiled torch headers are cacheable only with this sloppiness; paths
# relative to the checkout let a fresh clone (CI) hit the cache of another.
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
(($# > 0)) || set -- --target all benchmarks
cmake --build "$build" -j "${TUNERUN_JOBS:-2}" "$@"
