#!/usr/bin/env bash
# Installs every Debian package tunerun needs. Idempotent: packages already
# present are skipped; `apt-get update` runs only when something is missing.
# The dashboard serves with cpp-httplib and draws with Chart.js (embedded at build
# time); its browser tests drive headless Chromium through chromedriver and Selenium.
# Slurm and munge: the slurm launcher's clients (srun, scontrol) and the
# tests' local Slurm cluster (tests/slurm/local_cluster.sh), which starts its
# own daemons.
# python3-dev, pybind11-dev, python3-pytest, python3-pandas: `import tunerun` and its tests.
# TUNERUN_WITH_TORCH=0 skips libtorch, Gloo, OpenBLAS, Fashion-MNIST, the
# fortunes corpus and python3-torch (the trainers and their example data).
# TUNERUN_BENCH_ANCHORS=1 adds what the benchmarks' anchors run: Optuna and
# PyTorch from Python (benchmarks/anchors/); the build and the tests never need them.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libsqlite3-dev sqlite3
  libeigen3-dev libcli11-dev libfmt-dev doctest-dev libtomlplusplus-dev
  nlohmann-json3-dev python3
  libcpp-httplib-dev libjs-chart.js
  chromium chromium-driver python3-selenium
  slurmd slurmctld slurm-client munge iproute2 mount
  python3-dev pybind11-dev python3-pytest python3-pandas
)
if [[ "${TUNERUN_WITH_TORCH:-1}" != 0 ]]; then
  packages+=(libtorch-dev libgloo-dev zlib1g-dev libopenblas0-pthread dataset-fashion-mnist
             fortunes)
  packages+=(python3-torch)  # tunerun.train.torch (Python DDP) and its tests
fi
if [[ "${TUNERUN_BENCH_ANCHORS:-0}" == 1 ]]; then
  packages+=(python3-optuna python3-torch)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install_deps: installing ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) != 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
