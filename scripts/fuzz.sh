#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, ASan and UBSan into build-fuzz/ and
# runs each for SECONDS (default 120) on its corpus in tests/fuzz/corpus/.
# New inputs that raise coverage are added to the corpus.
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
  "$build/tests/fuzz/${target}_fuzz" -max_total_time="$seconds" -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$build/" "$root/tests/fuzz/corpus/$target" 2>&1 | tail -12
done
