#!/usr/bin/env bash
# The README's first command: installs what is missing, builds akview and the demo folder that the
# project's own writers generate (one model in every format), and opens the folder: the model list.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
./.ci/install-deps
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build akview akview_demo_model >/dev/null
exec ./build/ui/akview "$@" build/assets/demo
