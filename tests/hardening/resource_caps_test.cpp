// Count caps, each refused with one line naming the file, the offset and the cap:
// zip64 entry count (core/formats/zip_reader.cpp), Ollama manifest layers (core/formats/ollama.cpp),
// pickle bytes, stack, marks, memo and tensors built (core/formats/pickle_vm.cpp), GGUF tensor and metadata counts
// (core/formats/gguf.cpp: refused whatever the file's size, before anything is reserved).
// The caps already in place (header bytes, tensor counts, dims, strings, arrays, nesting, pickle stack
// and memo) have their negative tests beside their formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/formats/format.hpp"
#include "core/formats/ollama.hpp"
#include "core/formats/pickle_vm.hpp"
#include "core/formats/zip_reader.hpp"
#include "tests/cli/run_process.hpp"
#include "tests/common/sanitizer.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview::testing {
namespace {

using namespace std::string_view_literals;

void put_u16(std::vector<uint8_t>& b, uint16_t v) { b.insert(b.end(), {uint8_t(v), uint8_t(v >> 8)}); }
void put_u32(std::vector<uint8_t>& b, uint32_t v) { put_u16(b, uint16_t(v)), put_u16(b, uint16_t(v >> 16)); }
void put_u64(std::vector<uint8_t>& b, uint64_t v) { put_u32(b, uint32_t(v)), put_u32(b, uint32_t(v >> 32)); }

// A zip64 end record (at 0) claiming `entries`, its locator and a saturated classic end record.
std::vector<uint8_t> zip64_claiming(uint64_t entries) {
  std::vector<uint8_t> b;
  put_u32(b, 0x06064b50);   // zip64 end of central directory
  put_u64(b, 44);           // size of the rest of the record
  put_u16(b, 45), put_u16(b, 45), put_u32(b, 0), put_u32(b, 0);
  put_u64(b, entries), put_u64(b, entries);                              // entries on this disk, total (at 32)
  put_u64(b, 0), put_u64(b, 0);                                          // directory size and offset
  put_u32(b, 0x07064b50), put_u32(b, 0), put_u64(b, 0), put_u32(b, 1);   // locator -> record at 0
  put_u32(b, 0x06054b50), put_u16(b, 0), put_u16(b, 0);
  put_u16(b, 0xffff), put_u16(b, 0xffff), put_u32(b, 0xffffffff), put_u32(b, 0xffffffff), put_u16(b, 0);
  return b;
}

TEST(ResourceCaps, ZipEntryCountOverTheCapIsRefusedNamingTheCap) {
  const auto bytes = zip64_claiming((uint64_t{1} << 22) + 1);
  auto r = read_zip_directory(bytes, "big.zip");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().file, "big.zip");
  EXPECT_EQ(r.error().offset, 32u);
  EXPECT_NE(r.error().message.find("cap of 4194304 entries"), std::string::npos) << r.error().message;
  // At the cap, the count is judged by the directory's size instead (here: empty, so too many).
  auto at_cap = read_zip_directory(zip64_claiming(uint64_t{1} << 22), "big.zip");
  ASSERT_FALSE(at_cap);
  EXPECT_EQ(at_cap.error().message.find("cap"), std::string::npos) << at_cap.error().message;
}

TEST(ResourceCaps, GgufCountsOverTheCapsAreRefusedNamingTheCap) {
  TempDir dir;
  struct Case {
    bool tensors;
    int64_t count;
    uint64_t offset;
    const char* cap;
  };
  for (const Case& c : {Case{true, (int64_t{1} << 24) + 1, 8, "cap of 16777216 tensors"},
                        Case{false, (int64_t{1} << 20) + 1, 16, "cap of 1048576 keys"}}) {
    GgufWriter w;
    w.set("general.architecture", gguf_string("llama"));
    if (c.tensors) w.options().n_tensors = c.count;
    else w.options().n_kv = c.count;
    const std::string path = dir.file(c.tensors ? "tensors.gguf" : "keys.gguf");
    ASSERT_TRUE(w.write(path));
    auto m = open_model(path);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ErrorCode::count_too_large);
    EXPECT_EQ(m.error().offset, c.offset);
    EXPECT_NE(m.error().message.find(c.cap), std::string::npos) << m.error().message;
    // The command line: one line naming the file, the offset and the cap; exit 1.
    auto r = run_akview({"info", path});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.cap), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

std::string manifest_with_layers(const TempDir& dir, size_t n) {
  const std::string path = dir.path() + "/manifest-" + std::to_string(n);
  std::ofstream out(path);
  out << "{\"layers\":[";
  for (size_t i = 0; i < n; ++i) out << (i ? ",{}" : "{}");
  out << "]}";
  return path;
}

TEST(ResourceCaps, ManifestLayersOverTheCapAreRefusedNamingTheCap) {
  TempDir dir;
  const std::string over = manifest_with_layers(dir, (size_t{1} << 17) + 1);
  auto r = read_ollama_manifest(over);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().file, over);
  EXPECT_EQ(r.error().offset, 0u);
  EXPECT_NE(r.error().message.find("over the cap of 131072 layers"), std::string::npos) << r.error().message;
  // At the cap the layers are read (and here refused one by one for having no digest).
  auto at_cap = read_ollama_manifest(manifest_with_layers(dir, size_t{1} << 17));
  ASSERT_FALSE(at_cap);
  EXPECT_EQ(at_cap.error().message.find("cap"), std::string::npos) << at_cap.error().message;
}

// A protocol-4 pickle: PROTO 4, then `body` (no STOP: the cap must bite before the end).
std::vector<uint8_t> pickle_of(std::vector<uint8_t> body) {
  body.insert(body.begin(), {0x80, 0x04});
  return body;
}

TEST(ResourceCaps, PickleStackMarksAndMemoOverTheirCapsAreRefusedNamingTheCap) {
  constexpr size_t kStack = size_t{1} << 20, kMemo = size_t{1} << 22;
  struct Case {
    std::vector<uint8_t> body;
    uint64_t offset;
    const char* cap;
  };
  std::vector<uint8_t> memo_body{'N'};
  memo_body.insert(memo_body.end(), kMemo + 1, 0x94);   // MEMOIZE the None again and again
  const Case cases[] = {
      {std::vector<uint8_t>(kStack + 1, 'N'), 2 + kStack, "deeper than the cap of 1048576 entries"},
      {std::vector<uint8_t>(kStack + 1, '('), 2 + kStack, "more pickle marks than the cap of 1048576"},
      {memo_body, 3 + kMemo, "memo larger than the cap of 4194304 entries"},
  };
  for (const Case& c : cases) {
    auto r = run_pickle(pickle_of(c.body), "data.pkl", 0, PersistentIds::refuse);
    ASSERT_FALSE(r) << c.cap;
    EXPECT_EQ(r.error().file, "data.pkl");
    EXPECT_EQ(r.error().offset, c.offset) << r.error().message;
    EXPECT_NE(r.error().message.find(c.cap), std::string::npos) << r.error().message;
  }
}

// A legacy checkpoint whose main pickle is `main` (after the magic number, the protocol and
// sys_info pickles); `main_at`: where it starts.
std::string legacy_checkpoint(const TempDir& dir, const std::string& name, const std::vector<uint8_t>& main,
                              uint64_t& main_at) {
  std::vector<uint8_t> file{0x80, 0x02, 0x8a, 0x0a};
  const std::string_view magic = "\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"sv;
  file.insert(file.end(), magic.begin(), magic.end());
  for (uint8_t c : {uint8_t{'.'}, uint8_t{0x80}, uint8_t{0x02}, uint8_t{'M'}, uint8_t{0xe9}, uint8_t{0x03},
                    uint8_t{'.'}, uint8_t{0x80}, uint8_t{0x02}, uint8_t{'}'}, uint8_t{'.'}})
    file.push_back(c);
  main_at = file.size();
  const std::string path = dir.file(name);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  out.write(reinterpret_cast<const char*>(main.data()), static_cast<std::streamsize>(main.size()));
  return path;
}

// `akview info path`: exit 1 and one line naming the file, `offset` (as file@0x...) and `cap`.
void expect_cli_names_cap(const std::string& path, uint64_t offset, const char* cap) {
  auto r = run_akview({"info", path});
  EXPECT_EQ(r.exit_code, 1);
  char where[40];
  std::snprintf(where, sizeof where, "@0x%llx:", static_cast<unsigned long long>(offset));
  EXPECT_NE(r.err.find(path + where), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(cap), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The main pickle of a legacy checkpoint building `n` 0-dim tensors of one storage: the callable
// and its arguments are memoized once, then each tensor is BINGET 0, BINGET 1, REDUCE, APPEND
// (6 bytes) onto one list, so neither the stack nor the memo grows. `reduce_at[i]`: where the i-th
// REDUCE is, from the start of the pickle.
std::vector<uint8_t> pickle_building_tensors(size_t n, std::vector<uint64_t>* reduce_at) {
  auto text = [](std::vector<uint8_t>& b, std::string_view s) {
    b.push_back('X');
    put_u32(b, static_cast<uint32_t>(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  };
  auto raw = [](std::vector<uint8_t>& b, std::string_view s) { b.insert(b.end(), s.begin(), s.end()); };
  std::vector<uint8_t> b{0x80, 0x02};
  raw(b, "ctorch._utils\n_rebuild_tensor_v2\nq\x00"sv);
  b.push_back('(');   // the arguments: (storage, 0, (), ())
  b.push_back('(');
  text(b, "storage");
  raw(b, "ctorch\nFloatStorage\n");
  text(b, "0"), text(b, "cpu");
  raw(b, "K\x01Nt"sv);           // 1 element, no view: a 6-tuple
  raw(b, "QK\x00))tq\x01]"sv);   // BINPERSID, offset 0, size (), stride (); BINPUT 1; a list
  for (size_t i = 0; i < n; ++i) {
    if (reduce_at) reduce_at->push_back(b.size() + 4);
    raw(b, "h\x00h\x01Ra"sv);
  }
  b.push_back('.');
  return b;
}

TEST(ResourceCaps, PickleTensorsOverTheCapAreRefusedNamingTheCap) {
  constexpr size_t kTensors = size_t{1} << 20;
  std::vector<uint64_t> reduce_at;
  const std::vector<uint8_t> main = pickle_building_tensors(kTensors + 1, &reduce_at);
  // At the cap the pickle runs to its end; one tensor more is refused at its REDUCE.
  auto at_cap = run_pickle(pickle_building_tensors(kTensors, nullptr), "data.pkl", 0, PersistentIds::legacy_6_tuple);
  ASSERT_TRUE(at_cap) << at_cap.error().message;
  EXPECT_EQ(at_cap->tensors.size(), kTensors);
  auto over = run_pickle(main, "data.pkl", 0, PersistentIds::legacy_6_tuple);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::count_too_large);
  EXPECT_EQ(over.error().offset, reduce_at.back());
  EXPECT_NE(over.error().message.find("cap of 1048576 tensors"), std::string::npos) << over.error().message;

  // The same pickle as a legacy checkpoint's main pickle: the command line names the file, the
  // offset in it and the cap; exit 1.
  TempDir dir;
  uint64_t main_at = 0;
  const std::string path = legacy_checkpoint(dir, "tensors.pt", main, main_at);
  expect_cli_names_cap(path, main_at + reduce_at.back(), "cap of 1048576 tensors");
}

TEST(ResourceCaps, PickleBytesOverTheCapAreRefusedNamingTheCap) {
  // Three runs of 2^27 ops that allocate nothing: a minute under AddressSanitizer, which has nothing
  // to find there that the short pickles of the other tests do not show; the release build runs it.
  if (kAddressSanitizer) GTEST_SKIP() << "2^27 pickle ops three times: run by the release build";
  constexpr uint64_t kBytes = uint64_t{1} << 28;
  // PROTO 4, None, MEMOIZE, then BINPUT 0 again and again (nothing grows; ops start at even offsets)
  // up to or at the cap, and STOP.
  auto pickle_with_ops = [](uint64_t binputs) {
    std::vector<uint8_t> b{0x80, 0x04, 'N', 0x94};
    b.reserve(4 + 2 * binputs + 1);
    for (uint64_t i = 0; i < binputs; ++i) b.push_back('q'), b.push_back(0);
    b.push_back('.');
    return b;
  };
  // A STOP at kBytes - 2 ends the pickle; a STOP at kBytes is refused where it starts.
  auto under = run_pickle(pickle_with_ops((kBytes - 6) / 2), "data.pkl", 0, PersistentIds::refuse);
  ASSERT_TRUE(under) << under.error().message;
  auto over = run_pickle(pickle_with_ops((kBytes - 4) / 2), "data.pkl", 100, PersistentIds::refuse);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::header_too_large);
  EXPECT_EQ(over.error().file, "data.pkl");
  EXPECT_EQ(over.error().offset, 100 + kBytes);
  EXPECT_NE(over.error().message.find("cap of 268435456 bytes"), std::string::npos) << over.error().message;
  // The bytes are counted from the pickle's start: a legacy checkpoint's main pickle is refused at
  // its own kBytes, whatever came before it.
  TempDir dir;
  uint64_t main_at = 0;
  const std::string path = legacy_checkpoint(dir, "long.pt", pickle_with_ops((kBytes - 4) / 2), main_at);
  expect_cli_names_cap(path, main_at + kBytes, "cap of 268435456 bytes");
}

}   // namespace
}   // namespace akview::testing
