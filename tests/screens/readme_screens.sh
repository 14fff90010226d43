#!/usr/bin/env bash
# Renders the README's screenshots, assets/screens/<name>.png, from the goldens named in
# assets/screens/screens.txt (the screens the golden tests compare, so the README never shows a screen
# the code does not draw), and records each golden's sha256 there. The test
# ReadmeScreens.RenderedFromTheCurrentGoldens fails when a golden changed after its PNG was made: run
#   tests/screens/readme_screens.sh [BUILD_DIR]      # default build/
# after updating goldens (AKVIEW_UPDATE_GOLDENS=1), and commit the PNGs with them.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
build="${1:-build}"
command -v rsvg-convert >/dev/null || { echo "readme_screens.sh: rsvg-convert not found (apt-get install librsvg2-bin)" >&2; exit 1; }
ninja -C "$build" akview_golden_svg >/dev/null
list=assets/screens/screens.txt
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
while IFS= read -r line; do
  case "$line" in '' | '#'*) echo "$line"; continue ;; esac
  read -r name golden _ <<<"$line"
  file="tests/screens/golden/$golden.txt"
  "$build/tests/akview_golden_svg" "$file" "$tmp/$name.svg"
  rsvg-convert -o "assets/screens/$name.png" "$tmp/$name.svg"
  echo "$name $golden $(sha256sum "$file" | cut -d' ' -f1)"
done <"$list" >"$tmp/list"
cp "$tmp/list" "$list"
n="$(grep -c -v -e '^#' -e '^$' "$list")"
echo "readme_screens.sh: rendered $n screenshot(s) into assets/screens/" >&2
