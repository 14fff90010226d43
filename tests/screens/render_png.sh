#!/usr/bin/env bash
# Renders every SVG in a folder to a PNG beside it (rsvg-convert, package librsvg2-bin), for people to
# review screens. Typical use:
#   AKVIEW_SCREENS_SVG_DIR=/tmp/shots ctest --test-dir build -L screens && tests/screens/render_png.sh /tmp/shots
# Failed comparisons leave their SVGs in <build>/screens-actual, which this renders the same way.
set -euo pipefail
dir="${1:?usage: render_png.sh DIR}"
command -v rsvg-convert >/dev/null || { echo "render_png.sh: rsvg-convert not found (apt-get install librsvg2-bin)" >&2; exit 1; }
shopt -s nullglob
n=0
for svg in "$dir"/*.svg; do
  rsvg-convert -o "${svg%.svg}.png" "$svg"
  n=$((n + 1))
done
echo "rendered $n PNG(s) in $dir"
