#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test twice:
# a release build, then an AddressSanitizer + UndefinedBehaviorSanitizer build with clang (any report
# fails), then every libFuzzer target, built in that same tree, for AKVIEW_FUZZ_SECONDS each
# (tests/fuzz/run_fuzz.sh; any finding fails).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
./.ci/install-deps

jobs="$(nproc)"
export POCL_CACHE_DIR="$root/build/pocl-cache"
mkdir -p "$POCL_CACHE_DIR"

echo "== release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 600)

# One sanitizer build serves the tests and the fuzzing: with clang (installed by .ci/install-deps) it
# also holds the libFuzzer binaries (AKVIEW_FUZZ: core instrumented for coverage); without clang it is
# a gcc ASan + UBSan build and the fuzzing step says SKIPPED.
cxx="$(command -v clang++-14 || true)"
fuzz_flags=()
if [ -n "$cxx" ]; then
  fuzz_flags=(-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$(command -v clang-14)" -DAKVIEW_FUZZ=ON)
  echo "== ASan + UBSan build ($cxx, with the libFuzzer targets)"
else
  echo "== ASan + UBSan build (no clang: the libFuzzer targets are skipped)"
fi
# handle_sigbus stays on: core/fault_guard installs its SIGBUS handler after ASan's and passes every
# fault outside a guard on to it, so guarded reads of a truncated file work and stray faults still report.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# LeakSanitizer's walk of dynamic TLS crashes its tracer ("Tracer caught signal 11", DTLS entries it
# misreads) on this glibc once the OpenCL ICD (PoCL, LLVM) is loaded beside libcurl's libraries:
# leaks are still found, thread-local storage is just not scanned for pointers.
export LSAN_OPTIONS="use_tls=0:suppressions=$root/tests/lsan.supp"
export POCL_CACHE_DIR="$root/build-asan/pocl-cache"
mkdir -p "$POCL_CACHE_DIR"
# -O1 without debug info keeps the sanitizer build quick; reports still name the functions.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1 -DAKVIEW_SANITIZE=ON -DAKVIEW_BENCH=OFF \
  "${fuzz_flags[@]}" >/dev/null
ninja -C build-asan -j"$jobs"
(cd build-asan && ctest --output-on-failure -j"$jobs" --timeout 900)

echo "== libFuzzer targets"
rc=0
AKVIEW_FUZZ_BUILD=build-asan ./tests/fuzz/run_fuzz.sh || rc=$?
[ "$rc" -eq 77 ] && echo "== libFuzzer targets SKIPPED (no clang), not passed"
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit "$rc"
