#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then what a user of the installed
# tree does: build a project of their own with find_package(tunerun) and run
# its 4-trial, 2-rank sweep; run the installed CLI from a folder with no
# sweep files (examples come from share/tunerun, plug-ins and the ranks'
# executable from lib/tunerun).
#
#   install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work/elsewhere"

fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log"

# Public headers only, and complete: every "..." include of an installed
# header is installed too.
if find "$prefix/include" -path '*/internal/*' | grep .; then fail "internal headers installed"; fi
missing=0
while IFS= read -r header; do
  for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$header"); do
    [[ -f $prefix/include/$inc ]] || { echo "$header includes $inc, not installed" >&2; missing=1; }
  done
done < <(find "$prefix/include" -name '*.h')
((missing == 0)) || fail "installed headers include headers that are not installed"

# The consumer: configured, built and run against the prefix alone; its
# build also compiles every installed header. A fixed work folder keeps
# ccache's hits from run to run.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$source/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >"$work/configure.log" \
  || { cat "$work/configure.log"; fail "find_package(tunerun) failed"; }
cmake --build "$work/consumer" >"$work/build.log" || { cat "$work/build.log"; fail "build failed"; }
out=$(cd "$work/elsewhere" && "$work/consumer/consumer" runs)
echo "$out"
[[ $(grep -c '^trial .* TERMINATED ranks=2 world_size=2$' <<<"$out") == 4 ]] \
  || fail "expected 4 TERMINATED trials whose 2 ranks both reported"
[[ -f $work/elsewhere/runs/consumer/experiment.db ]] || fail "no experiment database"

# The installed CLI, from a folder without examples/.
tunerun=$prefix/bin/tunerun
"$tunerun" --help | grep -q '^Usage: tunerun ' || fail "--help does not name the program"
run=$(cd "$work/elsewhere" && "$tunerun" -v examples/quadratic.toml 2>&1) || fail "installed example failed"
# Its ranks ran the installed tunerun-worker, not tunerun and not the build tree's.
grep -q "] ranks run $prefix/lib[^ ]*/tunerun/tunerun-worker\$" <<<"$run" \
  || fail "the ranks did not run lib/tunerun/tunerun-worker: $(grep 'ranks run' <<<"$run")"
best=$(cd "$work/elsewhere" && "$tunerun" best runs/quadratic --json)
grep -q '"x": *3' <<<"$best" && grep -q '"y": *-1' <<<"$best" || fail "quadratic best: $best"
if [[ -f $build/libtunerun_fashion_mnist.so ]]; then
  # Found as a built-in from lib/tunerun/, not from the build tree.
  (cd "$work/elsewhere" && "$tunerun" validate examples/fashion_mnist.toml) \
    || fail "the installed CLI does not find its fashion_mnist plug-in"
fi
echo "install test: ok"
