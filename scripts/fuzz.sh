#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, ASan and UBSan into build-fuzz/ and
# runs each for SECONDS (default 120). Each target reads two corpus folders:
# build-fuzz/corpus/<target>, where libFuzzer writes the inputs that raise
# coverage (it grows from run to run, outside the tree), and the seed set in
# tests/fuzz/corpus/<target>, read on every run and never written. Crashes
# land in build-fuzz/ as crash-*: once fixed, copy the input into the seed
# set so that it stays covered. The seed set stays small (a file or two per
# distinct input shape): never copy the grown corpus into it.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-120}
build=$root/build-fuzz
"$root/scripts/install_deps.sh"
if [[ ! -f "$build/build.ninja" ]]; then
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link -g -O1"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DTUNERUN_FUZZ=ON \
    -DTUNERUN_WITH_TORCH=OFF -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
cmake --build "$build" -j "${TUNERUN_JOBS:-2}" --target protocol_fuzz sweep_fuzz
for target in protocol sweep; do
  echo "== ${target}_fuzz for ${seconds}s"
  mkdir -p "$build/corpus/$target"
  "$build/tests/fuzz/${target}_fuzz" -max_total_time="$seconds" -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$build/" \
    "$build/corpus/$target" "$root/tests/fuzz/corpus/$target" 2>&1 | tail -12
done
