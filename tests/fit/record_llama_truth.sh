#!/usr/bin/env bash
# Records what llama.cpp itself allocates for the `fit` ground-truth models, into
# tests/fit/data/llama_truth.txt, which FitGroundTruth.* compares akview's estimates against.
# CI never runs this (it needs llama.cpp's sources and a few minutes of one core); run it again
# after changing the models (tests/writers/fit_models.cpp) or to move to another llama.cpp.
#
#   tests/fit/record_llama_truth.sh BUILD_DIR
#
# BUILD_DIR is an akview build (it needs the akview_fit_models target; FIT_MODELS=PATH names that
# program instead). llama.cpp's sources come
# from the npm package llama.rn, which ships llama.cpp's src/ and ggml/ flattened into its cpp/
# folder (ggml symbols prefixed lm_; its build-info.cpp names the llama.cpp build and commit);
# tests/fit/llama_probe/ builds them for the CPU with fit_probe, which loads a model and prints the
# exact bytes of every buffer. Each line of the output is one load: the case (model, ctx, batch,
# ubatch, kv type) and then fit_probe's key=value figures.
set -euo pipefail

BUILD_DIR=$(cd "${1:?usage: record_llama_truth.sh BUILD_DIR}" && pwd)
SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
LLAMA_RN_VERSION=${LLAMA_RN_VERSION:-0.12.9}
WORK=${WORK:-${TMPDIR:-/tmp}/akview-llama-truth}
OUT=${OUT:-$SRC_DIR/tests/fit/data/llama_truth.txt}
LLAMA_CPP_DIR=${LLAMA_CPP_DIR:-$WORK/package/cpp}   # or an unpacked llama.rn cpp/ folder
PROBE_BUILD=${PROBE_BUILD:-$WORK/build}
mkdir -p "$WORK/models"

if [ ! -f "$LLAMA_CPP_DIR/llama.h" ]; then
  (cd "$WORK" && npm pack "llama.rn@$LLAMA_RN_VERSION" >/dev/null && tar xzf "llama.rn-$LLAMA_RN_VERSION.tgz")
fi
cmake -S "$SRC_DIR/tests/fit/llama_probe" -B "$PROBE_BUILD" -G Ninja -DLLAMA_CPP_DIR="$LLAMA_CPP_DIR" >/dev/null
nice ninja -C "$PROBE_BUILD" -j"${JOBS:-1}" fit_probe   # ~190 files at -O0: about 15 minutes on one core
FIT_MODELS=${FIT_MODELS:-}
if [ -z "$FIT_MODELS" ]; then
  nice ninja -C "$BUILD_DIR" akview_fit_models
  FIT_MODELS="$BUILD_DIR/tests/akview_fit_models"
fi
PROBE="$PROBE_BUILD/fit_probe"
MODELS=$("$FIT_MODELS" "$WORK/models")   # lines: name trained_context

build=$(sed -n 's/^int LLAMA_BUILD_NUMBER = \([0-9]*\);/\1/p' "$LLAMA_CPP_DIR/common/build-info.cpp")
commit=$(sed -n 's/^char const \* LLAMA_COMMIT = "\([0-9a-f]*\)";/\1/p' "$LLAMA_CPP_DIR/common/build-info.cpp")
{
  echo "# What llama.cpp b$build ($commit; npm llama.rn@$LLAMA_RN_VERSION's sources) allocates for the"
  echo "# tests/writers/fit_models.cpp GGUFs, on the CPU backend, llama-cli's context defaults (flash"
  echo "# attention auto, no full-size SWA cache, 1 sequence). Made by tests/fit/record_llama_truth.sh"
  echo "# on $(uname -m) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')). Bytes, exact."
} > "$OUT.tmp"

run() {   # model ctx batch ubatch kv_type
  local line
  line=$("$PROBE" "$WORK/models/$1.gguf" "$2" "$3" "$4" "$5" "$5" auto 0)
  echo "model=$1 ctx=$2 batch=$3 ubatch=$4 kv_type=$5 $line" | tee -a "$OUT.tmp"
}

while read -r m trained; do
  if [ "$m" = llama3-8b-shape ]; then   # the real shapes: two contexts keep the run small
    run "$m" 4096 2048 512 f16
    run "$m" "$trained" 2048 512 q8_0
    continue
  fi
  for ctx in 4096 8192 32768 131072; do
    if [ "$ctx" -lt "$trained" ]; then run "$m" "$ctx" 2048 512 f16; fi
  done
  run "$m" "$trained" 2048 512 f16
  run "$m" 8192 2048 512 q8_0
  run "$m" 8192 2048 512 q4_0
  run "$m" 5000 256 256 f16      # a context that is not a multiple of 256, a smaller batch
done <<< "$MODELS"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT"
