#!/usr/bin/env bash
# The Debian packages: `cpack -G DEB` builds tunerun and tunerun-dev from
# BUILD_DIR; their file lists and declared dependencies are checked
# (dpkg-deb -c / -f), then both are unpacked into a scratch root (dpkg
# --root as root; dpkg-deb -x otherwise) and the installed CLI runs an
# example from a folder that has none, and the packaged Python module imports.
#
#   deb_test.sh BUILD_DIR WORK_DIR        exit 77: skipped (no dpkg-deb)
set -euo pipefail
build=$1 work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
  echo "SKIP: needs dpkg-deb and dpkg-shlibdeps (dpkg-dev)"; exit 77
fi
rm -rf "$work"
mkdir -p "$work/elsewhere"

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/packages" >"$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
runtime=$(echo "$work"/packages/tunerun_*.deb)
dev=$(echo "$work"/packages/tunerun-dev_*.deb)
[[ -f $runtime && -f $dev ]] || fail "expected tunerun_*.deb and tunerun-dev_*.deb: $(ls "$work/packages")"
ls -l "$runtime" "$dev"

# File lists.
files=$(dpkg-deb -c "$runtime" | awk '{print $NF}')
for f in ./usr/bin/tunerun ./usr/share/tunerun/examples/quadratic.toml \
         ./usr/share/tunerun/examples/external/train.py; do
  grep -qx "$f" <<<"$files" || fail "$runtime lacks $f"
done
with_torch=0
if [[ -f $build/libtunerun_fashion_mnist.so ]]; then
  with_torch=1
  grep -q '^./usr/lib/.*tunerun/libtunerun_fashion_mnist.so$' <<<"$files" || fail "no plug-in in $runtime"
fi
# The Python module is the runtime's, where Debian's python3 looks.
with_python=0
if compgen -G "$build/bindings/tunerun/_tunerun*.so" >/dev/null; then
  with_python=1
  for f in ./usr/lib/python3/dist-packages/tunerun/__init__.py \
           ./usr/lib/python3/dist-packages/tunerun/tune/__init__.py; do
    grep -qx "$f" <<<"$files" || fail "$runtime lacks $f"
  done
  grep -q '^./usr/lib/python3/dist-packages/tunerun/_tunerun.*\.so$' <<<"$files" \
    || fail "$runtime lacks the extension module"
fi
if grep -q '^./usr/include' <<<"$files"; then fail "headers in the runtime package"; fi
dev_files=$(dpkg-deb -c "$dev" | awk '{print $NF}')
for f in ./usr/include/tunerun/tune/tuner.h ./usr/include/tunerun/train/session.h; do
  grep -qx "$f" <<<"$dev_files" || fail "$dev lacks $f"
done
if grep '^./usr/include/.*\.h$' <<<"$dev_files" | grep -v '^./usr/include/tunerun/'; then
  fail "headers outside /usr/include/tunerun/ in $dev"
fi
if grep -q 'python3' <<<"$dev_files"; then fail "the Python module in $dev"; fi
grep -q '/cmake/tunerun/tunerunConfig.cmake$' <<<"$dev_files" || fail "$dev lacks tunerunConfig.cmake"
grep -q '/libtunerun_tune.a$' <<<"$dev_files" || fail "$dev lacks libtunerun_tune.a"
if grep -q '/internal/' <<<"$dev_files"; then fail "internal headers in $dev"; fi

# Dependencies: each one declared is a Debian package installed here (what
# we built against), first alternative taken, versions dropped.
check_installed() {
  local field=$1 value=$2 dep name
  IFS=',' read -ra deps <<<"$value"
  for dep in "${deps[@]}"; do
    name=$(sed 's/|.*//; s/(.*)//; s/:any//' <<<"$dep" | tr -d ' ')
    [[ $name == tunerun ]] && continue
    dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q 'install ok installed' \
      || fail "$field names $name, which is not an installed Debian package"
  done
}
depends=$(dpkg-deb -f "$runtime" Depends)
echo "tunerun Depends: $depends"
for lib in libzmq5 libsqlite3-0 libstdc++6; do
  grep -q "\b$lib\b" <<<"$depends" || fail "tunerun does not depend on $lib"
done
check_installed "tunerun Depends" "$depends"
dev_depends=$(dpkg-deb -f "$dev" Depends)
echo "tunerun-dev Depends: $dev_depends"
version=$(dpkg-deb -f "$runtime" Version)
grep -q "tunerun (= $version)" <<<"$dev_depends" || fail "tunerun-dev does not pin tunerun $version"
for pkg in libfmt-dev nlohmann-json3-dev cppzmq-dev libsqlite3-dev; do
  grep -q "\b$pkg\b" <<<"$dev_depends" || fail "tunerun-dev does not depend on $pkg"
done
check_installed "tunerun-dev Depends" "$dev_depends"

# Installed into a scratch root: the CLI runs the installed example from a
# folder without sweep files, and finds its plug-in.
root=$work/root
if [[ $(id -u) == 0 ]] && command -v dpkg >/dev/null; then
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
  # The scratch root has no libc6 & co. registered (--force-depends), nor a
  # shell to run tunerun's postinst (ldconfig, which CPack adds for the
  # plug-in under /usr/lib) in: unpacked, not configured.
  dpkg --root="$root" --log=/dev/null --force-depends --unpack "$runtime" "$dev" \
    >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg --root --unpack failed"; }
  for pkg in tunerun tunerun-dev; do
    dpkg --root="$root" -s "$pkg" | grep -q '^Status: install ok unpacked' || fail "$pkg not unpacked"
  done
else
  echo "not root: extracting with dpkg-deb -x instead of dpkg --root"
  dpkg-deb -x "$runtime" "$root"
  dpkg-deb -x "$dev" "$root"
fi
tunerun=$root/usr/bin/tunerun
(cd "$work/elsewhere" && "$tunerun" -q examples/quadratic.toml) || fail "installed example failed"
grep -q '"x": *3' <(cd "$work/elsewhere" && "$tunerun" best runs/quadratic --json) \
  || fail "wrong best trial"
if ((with_python)); then
  (cd "$work/elsewhere" && PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -c \
    'import tunerun, tunerun._tunerun; from tunerun import tune; tune.uniform(0, 1)') \
    || fail "the packaged Python module does not import"
fi
if ((with_torch)); then
  (cd "$work/elsewhere" && "$tunerun" validate examples/fashion_mnist.toml) \
    || fail "the packaged CLI does not find its fashion_mnist plug-in"
fi
echo "deb test: ok"
