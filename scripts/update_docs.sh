#!/usr/bin/env bash
# Writes the generated parts of docs/: the sweep-file key reference in
# docs/sweep-files.md, between its spec-table markers, from `tunerun keys`
# (the spec table, tune/spec/fields.cpp).
#   scripts/update_docs.sh [TUNERUN]           rewrite docs/sweep-files.md
#   scripts/update_docs.sh --check [TUNERUN]   exit 1, with the diff, when it differs
# TUNERUN defaults to build/tunerun.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=0
if [[ ${1:-} == --check ]]; then check=1; shift; fi
tunerun=${1:-$root/build/tunerun}
doc=$root/docs/sweep-files.md
begin='<!-- spec-table:begin -->'
end='<!-- spec-table:end -->'
for marker in "$begin" "$end"; do
  grep -qxF "$marker" "$doc" || { echo "update_docs: $doc has no line '$marker'" >&2; exit 2; }
done
keys=$(mktemp)
trap 'rm -f "$keys" "$keys.doc"' EXIT
"$tunerun" keys >"$keys"
# The document with the lines between the markers replaced by the keys.
awk -v begin="$begin" -v end="$end" -v keys="$keys" '
  $0 == begin { print; while ((getline line < keys) > 0) print line; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }' "$doc" >"$keys.doc"
if ((check)); then
  if ! diff -u "$doc" "$keys.doc"; then
    echo "update_docs: docs/sweep-files.md's key reference differs from the spec table;" \
         "run scripts/update_docs.sh" >&2
    exit 1
  fi
  echo "update_docs: docs/sweep-files.md matches the spec table"
else
  cp "$keys.doc" "$doc"
fi
