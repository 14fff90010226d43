// A standalone driver for the fuzz targets (any compiler, no libFuzzer): runs
// LLVMFuzzerTestOneInput over every file under the given paths, and over deterministic mutations
// of each: truncations at every 1/64 of the length, byte flips at fixed-seed positions, and
// length-like fields overwritten with 0, 2^32, 2^63 and all ones. Each input gets its own
// exact-size buffer, so a read past its end is an ASan report. --max-len N cuts each file to its
// first N bytes first, for a target that reads no more (the mutations then fall where it reads,
// and a 500 KB oracle file is not copied for each of its ~100 inputs).
//   replay [--no-mutate] [--max-len N] PATH...
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

uint64_t runs = 0;
const char* dump_path = nullptr;   // $AKVIEW_REPLAY_DUMP: each input is written there first (to keep a crasher)

void run(const std::vector<uint8_t>& bytes, size_t size) {
  std::vector<uint8_t> exact(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(size));
  if (dump_path)
    std::ofstream(dump_path, std::ios::binary)
        .write(reinterpret_cast<const char*>(exact.data()), static_cast<std::streamsize>(size));
  LLVMFuzzerTestOneInput(exact.data(), exact.size());
  ++runs;
}

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t load_u64(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

void mutate(std::vector<uint8_t> b) {
  const size_t n = b.size();
  // Truncations at every 1/64 of the length (distinct lengths only).
  for (size_t k = 0, last = SIZE_MAX; k < 64; ++k)
    if (size_t len = n * k / 64; len != last) run(b, last = len);
  if (n == 0) return;
  uint64_t seed = 0x5eedf00dull ^ n;
  // Single byte flips at 24 positions, half of them in the first 256 bytes (where headers live).
  for (int i = 0; i < 24; ++i) {
    const size_t at = static_cast<size_t>(splitmix(seed) % (i % 2 ? n : std::min<size_t>(n, 256)));
    const uint8_t flip = static_cast<uint8_t>(splitmix(seed) | 1);
    b[at] ^= flip;
    run(b, n);
    b[at] ^= flip;
  }
  // Length-like fields: the first three 8-byte words, plus up to 8 fixed-seed picks among the
  // 8-byte words (any alignment, first 64 KiB) whose value is a plausible length (1..n).
  if (n < 8) return;
  std::vector<size_t> spots;
  for (size_t at : {size_t{0}, size_t{8}, size_t{16}})
    if (at + 8 <= n) spots.push_back(at);
  std::vector<size_t> lengths;
  for (size_t at = 0; at + 8 <= std::min<size_t>(n, 65536); ++at)
    if (uint64_t v = load_u64(b, at); v >= 1 && v <= n) lengths.push_back(at);
  for (int i = 0; i < 8 && !lengths.empty(); ++i) spots.push_back(lengths[splitmix(seed) % lengths.size()]);
  for (size_t at : spots) {
    const uint64_t saved = load_u64(b, at);
    for (uint64_t v : {uint64_t{0}, uint64_t{1} << 32, uint64_t{1} << 63, ~uint64_t{0}, uint64_t{0xffffffff}}) {
      std::memcpy(b.data() + at, &v, 8);
      run(b, n);
    }
    std::memcpy(b.data() + at, &saved, 8);
  }
}

}   // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  bool mutations = true;
  size_t max_len = SIZE_MAX;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-mutate") == 0) {
      mutations = false;
      continue;
    }
    if (std::strcmp(argv[i], "--max-len") == 0 && i + 1 < argc) {
      max_len = std::strtoull(argv[++i], nullptr, 10);
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& e : fs::recursive_directory_iterator(argv[i], ec))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.push_back(argv[i]);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--no-mutate] [--max-len N] PATH...  (no input files found)\n", argv[0]);
    return 2;
  }
  std::sort(files.begin(), files.end());
  dump_path = std::getenv("AKVIEW_REPLAY_DUMP");
  const auto start = std::chrono::steady_clock::now();
  for (const auto& f : files) {
    std::fprintf(stderr, "replay: %s\n", f.c_str());   // shown by ctest --output-on-failure
    std::ifstream in(f, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() > max_len) bytes.resize(max_len);
    run(bytes, bytes.size());
    if (mutations) mutate(std::move(bytes));
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("replayed %zu files, %llu inputs in %.2f s\n", files.size(), static_cast<unsigned long long>(runs), secs);
  return 0;
}
