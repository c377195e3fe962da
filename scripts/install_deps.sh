#!/usr/bin/env bash
# Installs the Debian packages tunerun needs. Idempotent: packages already
# present are skipped; `apt-get update` runs only when something is missing.
#
#   scripts/install_deps.sh           the engine, the CLI and the libtorch trainer:
#                                     what `scripts/tunerun SWEEP.toml` needs
#   scripts/install_deps.sh --tests   adds what the test suite and the Python
#                                     bindings need (`scripts/test` asks for it)
#   scripts/install_deps.sh --tests-build
#                                     of those, only what configuring and building
#                                     the tests needs (doctest, the Python headers,
#                                     pybind11): `scripts/test` installs these first,
#                                     then the rest beside its build
#
# The engine: ZeroMQ, msgpack, SQLite, fmt, nlohmann-json, toml++, CLI11, and
# for the dashboard cpp-httplib, Eigen and Chart.js (embedded at build time).
# --tests adds doctest; headless Chromium, chromedriver and Selenium (the
# dashboard's browser tests); Slurm and munge (the launcher's clients and the
# tests' local cluster, tests/slurm/local_cluster.sh, which starts its own
# daemons); openssh-server (the SSH launcher's tests, tests/ssh/local_cluster.sh,
# run one sshd per network namespace; the machine's own sshd is never
# started: /etc/ssh/sshd_not_to_be_run is in place before it installs, and
# Debian's init script and unit honour it); python3-dev, pybind11-dev, pytest, pandas, python3-cloudpickle
# (how a Python trainable reaches its ranks) and python3-torch (`import
# tunerun` and its tests), python3-torchvision, python3-xgboost and
# python3-sklearn (the Ray scripts the tests run); the fortunes corpus (char_gpt's text).
# TUNERUN_WITH_TORCH=0 leaves out libtorch, Gloo, OpenBLAS, Fashion-MNIST,
# fortunes and python3-torch (the trainers and their example data).
# TUNERUN_BENCH_ANCHORS=1 adds what the benchmarks' anchors run: Optuna and
# PyTorch from Python (benchmarks/anchors/); the build and the tests never need them.
set -euo pipefail

with_tests=0
tests_build_only=0
for arg in "$@"; do
  case "$arg" in
    --tests) with_tests=1 ;;
    --tests-build) with_tests=1; tests_build_only=1 ;;
    *) echo "install_deps: unknown argument '$arg' (known: --tests, --tests-build)" >&2; exit 2 ;;
  esac
done
with_torch=$([[ "${TUNERUN_WITH_TORCH:-1}" != 0 ]] && echo 1 || echo 0)

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libsqlite3-dev sqlite3
  libeigen3-dev libcli11-dev libfmt-dev libtomlplusplus-dev nlohmann-json3-dev python3
  libcpp-httplib-dev libjs-chart.js
)
if ((with_torch)); then
  packages+=(libtorch-dev libgloo-dev zlib1g-dev libopenblas0-pthread dataset-fashion-mnist)
fi
if ((with_tests)); then
  # What CMake needs to configure and build the tests and the Python module.
  packages+=(doctest-dev python3-dev pybind11-dev)
fi
if ((with_tests && !tests_build_only)); then
  # What only running the tests needs.
  packages+=(
    chromium chromium-driver python3-selenium
    slurmd slurmctld slurm-client munge iproute2 mount openssh-server
    python3-pytest python3-pandas python3-optuna python3-cloudpickle
    python3-xgboost python3-sklearn
  )
  if ((with_torch)); then
    packages+=(fortunes python3-torch python3-torchvision)
  fi
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
if [[ " ${missing[*]} " == *" openssh-server "* ]]; then
  # The tests start their own sshds; none listens on this machine's addresses.
  $SUDO mkdir -p /etc/ssh
  $SUDO touch /etc/ssh/sshd_not_to_be_run
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
