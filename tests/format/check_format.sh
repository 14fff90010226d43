#!/usr/bin/env bash
# The tree follows .clang-format: every C++ source and header under core/, compute/, ui/, tests/, bench/
# and assets/ is what clang-format-14 would write (a test, label `format`). Exits 77 (skipped) where
# clang-format-14 is not installed. To format a file: clang-format-14 -i FILE.
set -uo pipefail
root="$1"
formatter="$(command -v clang-format-14 || true)"
if [ -z "$formatter" ]; then
  echo "skipped: clang-format-14 not installed"
  exit 77
fi
cd "$root"
mapfile -t files < <(find core compute ui tests bench assets -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) \
  -not -path 'tests/oracles/*' -not -path '*/node_modules/*' | sort)
# One clang-format process for the whole list; each file it would change is named in its warnings.
mapfile -t bad < <("$formatter" --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
for f in "${bad[@]}"; do echo "not formatted: $f (clang-format-14 -i $f)"; done
echo "${#files[@]} files checked, ${#bad[@]} not formatted"
[ "${#bad[@]}" -eq 0 ]
