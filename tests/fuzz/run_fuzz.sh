#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/, ASan + UBSan + coverage) and runs each for a
# fixed budget, seeded with the oracle files and tests/fuzz/corpus/<target>. Prints one row per
# target: executions, new corpus inputs, findings. Any finding (crash, leak, timeout, OOM) fails the
# run; its input is kept in build-fuzz/findings/<target>/ — turn it into a unit test and copy it
# into tests/fuzz/corpus/<target>/ so every ctest run replays it.
#   tests/fuzz/run_fuzz.sh                         # CI: 10 s per target (15 targets, 2 at once: 1.3 min)
#   AKVIEW_FUZZ_SECONDS=3600 tests/fuzz/run_fuzz.sh [TARGET...]   # long run
# Long runs accumulate: the corpus ($build/corpus/<target>) persists between runs, so repeated runs
# add up executions; at idle priority on a shared machine, e.g.
#   AKVIEW_FUZZ_SEED=0 AKVIEW_FUZZ_SECONDS=1800 nice -n 19 tests/fuzz/run_fuzz.sh
# (AKVIEW_FUZZ_SEED=0: a fresh random seed per run, so repeated runs do not replay the same mutations;
# AKVIEW_FUZZ_TIMEOUT=60 for runs at idle priority beside other work: libFuzzer's per-input timeout is
# wall-clock time, and a fuzzer starved by a build for 5 s reports a timeout that is none).
# The table gives per target: executions, wall seconds, executions per second, corpus size, findings.
# AKVIEW_FUZZ_JOBS (default 1) runs that many fuzzing processes per target in parallel.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
seconds="${AKVIEW_FUZZ_SECONDS:-10}"
# A fixed seed by default, so the CI step explores the same inputs on every run (AKVIEW_FUZZ_SEED=0: random).
seed="${AKVIEW_FUZZ_SEED:-1}"
jobs="${AKVIEW_FUZZ_JOBS:-1}"
timeout="${AKVIEW_FUZZ_TIMEOUT:-5}"
build="${AKVIEW_FUZZ_BUILD:-build-fuzz}"
oracles="tests/oracles"   # relative, like the corpus folders (the script runs from the root)

cxx="${CXX:-}"
if [ -z "$cxx" ] || ! "$cxx" --version 2>/dev/null | grep -q clang; then
  cxx="$(command -v clang++-14 || command -v clang++ || true)"
fi
if [ -z "$cxx" ]; then
  echo "run_fuzz: SKIPPED: no clang++ (install clang-14 and libclang-rt-14-dev: .ci/install-deps)" >&2
  exit 77
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n '/^set(AKVIEW_FUZZ_TARGETS/,/)/p' tests/fuzz/CMakeLists.txt | tr ' ()' '\n\n\n' |
    grep -v -e '^$' -e '^set$' -e '^AKVIEW_FUZZ_TARGETS$')
fi

if grep -q '^AKVIEW_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && grep -q '^CMAKE_CXX_COMPILER:.*clang' "$build/CMakeCache.txt"; then
  echo "== fuzz targets in $build (configured already)"   # tests/run.sh's sanitizer build
else
  echo "== fuzz build ($cxx)"
  CXX="$cxx" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAKVIEW_FUZZ=ON -DAKVIEW_BENCH=OFF \
    -DAKVIEW_NATIVE=OFF >/dev/null
fi
ninja -C "$build" -j"$(nproc)" "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:handle_sigbus=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Targets run side by side, AKVIEW_FUZZ_PARALLEL at once (default: the cores over AKVIEW_FUZZ_JOBS),
# each for its own budget: with 2 cores the step takes half the wall time. Rows print in order.
parallel="${AKVIEW_FUZZ_PARALLEL:-$(( $(nproc) / jobs > 0 ? $(nproc) / jobs : 1 ))}"

fuzz_one() {
  local t="$1"
  local corpus="$build/corpus/$t"
  local findings="$build/findings/$t"
  mkdir -p "$corpus" "$findings"
  # Targets that read a file get the oracles as seeds; the three that read raw bytes (every block type,
  # canvas text, key codes) start from small inputs, which is what they need (oracle-sized seeds only
  # slow them).
  local seeds=()
  local max_len=65536
  case "$t" in
    decode_blocks | canvas_text | tui_input) max_len=4096 ;;
    *) [ -n "$oracles" ] && seeds+=("$oracles") ;;
  esac
  [ -d "tests/fuzz/corpus/$t" ] && seeds+=("tests/fuzz/corpus/$t")
  local log="$build/fuzz-$t.log"
  local rc=0
  local started=$SECONDS
  if [ "$jobs" -gt 1 ]; then
    # -jobs writes fuzz-N.log per worker in the current folder: run from the findings folder.
    (cd "$findings" && "$root/$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -seed="$seed" -rss_limit_mb=2048 -timeout="$timeout" \
      -max_len="$max_len" -print_final_stats=1 -jobs="$jobs" -workers="$jobs" -artifact_prefix="$root/$findings/" \
      "$root/$corpus" "${seeds[@]/#/$root/}") >"$log" 2>&1 || rc=$?
    cat "$findings"/fuzz-*.log >>"$log" 2>/dev/null || true
    rm -f "$findings"/fuzz-*.log
  else
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -seed="$seed" -rss_limit_mb=2048 -timeout="$timeout" -max_len="$max_len" \
      -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  fi
  local execs found took
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')"
  found="$(find "$findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'slow-unit-*' \) | wc -l)"
  [ "$rc" -ne 0 ] && [ "$found" -eq 0 ] && found=1   # died without writing an input
  took=$((SECONDS - started))
  printf '%-18s %12s %8s %8s %8s %9s\n' "$t" "$execs" "$took" "$((execs / (took > 0 ? took : 1)))" \
    "$(find "$corpus" -type f | wc -l)" "$found" >"$build/fuzz-$t.row"
  [ "$found" -eq 0 ] || echo "   fuzz_$t: see $log and $findings/" >>"$build/fuzz-$t.row"
  [ "$found" -eq 0 ]
}

running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  rm -f "$build/fuzz-$t.row"
  fuzz_one "$t" &
  running=$((running + 1))
done
wait || true

printf '\n%-18s %12s %8s %8s %8s %9s\n' target executions seconds exec/s corpus findings
failed=0
for t in "${targets[@]}"; do
  if [ ! -f "$build/fuzz-$t.row" ]; then
    echo "$t: ended without a result (see $build/fuzz-$t.log)"
    failed=1
    continue
  fi
  cat "$build/fuzz-$t.row"
  if grep -q "fuzz_$t: see" "$build/fuzz-$t.row"; then failed=1; fi
done
[ "$failed" -eq 0 ] || { echo "run_fuzz: FAILED: findings above" >&2; exit 1; }
echo "run_fuzz: ${#targets[@]} targets, ${seconds} s each (${parallel} at once), no findings"
