#!/usr/bin/env bash
# `cmake --install` by a user who is not root into a prefix of their own (as
# `--prefix ~/.local` would be), then what a user of the installed tree does:
# build a project of their own with find_package(tunerun) and run its
# 4-trial, 2-rank sweep; import the Python module from the prefix; run the
# installed CLI from a folder with no sweep files (examples come from
# share/tunerun, plug-ins and the ranks' executable from lib/tunerun).
#
#   install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
home=$work/home
prefix=$home/.local
rm -rf "$work"
mkdir -p "$work/elsewhere" "$home"
chmod 755 "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

# The user: ourselves unless we are root; as root, nobody, owning the prefix
# and reading the build and source trees. Nothing outside the prefix is
# theirs to write, so an install rule that writes elsewhere (the system's
# site-packages...) fails here. cmake --install also writes its manifest
# into the build tree: that one file is lent to them.
as_user=()
if [[ $(id -u) == 0 ]]; then
  user=nobody
  chown "$user:$(id -g "$user")" "$home"
  as_user=(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups env HOME="$home")
  manifest=$build/install_manifest.txt
  owner=$(stat -c %u:%g "$manifest" 2>/dev/null || echo 0:0)
  touch "$manifest"
  chown "$user" "$manifest"
  trap 'chown "$owner" "$manifest"' EXIT
  for f in "$build/cmake_install.cmake" "$source/tune/tuner.h"; do
    "${as_user[@]}" test -r "$f" || fail "$user cannot read $f"
  done
fi
[[ $("${as_user[@]}" id -u) != 0 ]] || fail "the install would run as root"
"${as_user[@]}" cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; fail "cmake --install as $("${as_user[@]}" id -un) failed"; }

# The headers: all under include/tunerun/, only the API's closure (no
# internal/ header, none of the controller's rooms: cmake/install.cmake
# installs what the API includes), and complete: every "..." include of an
# installed header names tunerun/... and is installed.
echo "$(find "$prefix/include" -name '*.h' | wc -l) headers installed"
if find "$prefix/include" -mindepth 1 -maxdepth 1 ! -name tunerun | grep .; then
  fail "installed outside include/tunerun/"
fi
[[ -f $prefix/include/tunerun/tune/tuner.h ]] || fail "no include/tunerun/tune/tuner.h"
if find "$prefix/include" -path '*/internal/*' | grep .; then fail "internal headers installed"; fi
if find "$prefix/include/tunerun/tune" -path '*/tune/execution/*' -o -path '*/tune/launch/*' \
    -o -path '*/tune/channel/*' -o -path '*/tune/spec/*' -o -path '*/tune/cli/*' | grep .; then
  fail "the controller's headers installed (which API header includes them?)"
fi
if [[ -f $build/train/torch/libtunerun_torch.a ]]; then
  [[ -f $prefix/include/tunerun/train/torch/ddp.h ]] || fail "no include/tunerun/train/torch/ddp.h"
fi
missing=0
while IFS= read -r header; do
  for inc in $(sed -n 's/^[[:blank:]]*#[[:blank:]]*include[[:blank:]]*"\([^"]*\)".*/\1/p' "$header"); do
    [[ $inc == tunerun/* && -f $prefix/include/$inc ]] \
      || { echo "$header includes \"$inc\", not installed" >&2; missing=1; }
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

# The Python module, from the prefix alone (none goes to the system's
# site-packages), imported outside the tree by the same user; a 2-trial
# sweep checks that its ranks find the installed package too.
if compgen -G "$build/bindings/tunerun/_tunerun*.so" >/dev/null; then
  site=$prefix/lib/python3/dist-packages
  cat >"$work/sweep.py" <<'EOF'
import sys
import tunerun, tunerun._tunerun
from tunerun import train, tune

def train_func(config):
    for step in range(3):
        train.report({"loss": (config["x"] - 3) ** 2 / (step + 1)})

if __name__ == "__main__":
    results = tune.Tuner(train_func, param_space={"x": tune.uniform(-5, 5)},
                         tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=2),
                         run_config=tune.RunConfig(storage_path=sys.argv[1], verbose=0)).fit()
    assert len(results) == 2 and not results.errors, results.errors
    print(tunerun.__file__)
    print(tunerun._tunerun.__file__)
EOF
  py=$(cd "$work/elsewhere" && "${as_user[@]}" env PYTHONPATH="$site" /usr/bin/python3 "$work/sweep.py" \
         "$home/runs") || fail "import tunerun from $site, or its sweep, failed"
  while IFS= read -r file; do
    [[ $file == "$site"/tunerun/* ]] || fail "tunerun was imported from $file, not from $site"
  done <<<"$py"
fi

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
