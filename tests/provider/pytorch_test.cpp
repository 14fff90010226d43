// PyTorch checkpoints against the oracle manifest: names, dtypes, shapes, strides, storage offsets,
// byte offsets, shared storages and values; the malicious pickle is refused and never executed.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "core/formats/format.hpp"
#include "core/formats/pickle_vm.hpp"
#include "core/formats/pytorch.hpp"
#include "core/formats/zip_reader.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/provider/oracle_util.hpp"

namespace akview {
namespace {

using test::manifest;
using test::oracle;

TypeId type_of(const std::string& dtype) {
  static const std::map<std::string, TypeId> k = {
      {"float32", TypeId::f32}, {"float16", TypeId::f16}, {"bfloat16", TypeId::bf16}, {"int64", TypeId::i64}};
  return k.at(dtype);
}

const nlohmann::json& file_entry(const std::string& kind_path) {
  for (const auto& f : manifest()["pytorch"]["files"])
    if (f["path"] == kind_path) return f;
  throw std::runtime_error("no manifest entry " + kind_path);
}

void check_checkpoint(const std::string& rel) {
  const auto& entry = file_entry(rel);
  auto model = open_model(oracle(rel));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  EXPECT_EQ(model->format, entry["kind"].get<std::string>());
  const auto& tensors = entry["tensors"];
  ASSERT_EQ(model->tensors.size(), tensors.size());
  // storage index -> absolute offset of the storage's first byte, from the manifest
  std::map<int, uint64_t> storage_at;
  if (entry.contains("zip_records")) {
    for (const auto& r : entry["zip_records"]) {
      std::string name = r["name"];
      auto p = name.find("/data/");
      if (p != std::string::npos) storage_at[std::stoi(name.substr(p + 6))] = r["data_offset"];
    }
  } else {
    for (const auto& s : entry["storages"]) storage_at[std::stoi(s["key"].get<std::string>())] = s["data_offset"];
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& want = tensors[i];
    const Tensor& t = model->tensors[i];
    SCOPED_TRACE(want["name"].get<std::string>());
    EXPECT_EQ(t.name, want["name"].get<std::string>());
    EXPECT_EQ(t.type, type_of(want["dtype"]));
    auto shape = model->shape(t);
    EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()), want["shape"].get<std::vector<int64_t>>());
    auto stride = torch_strides(*model, static_cast<uint32_t>(i));
    EXPECT_EQ(std::vector<int64_t>(stride.begin(), stride.end()), want["stride"].get<std::vector<int64_t>>());
    EXPECT_EQ(model->torch_tensors[i].storage_offset, want["storage_offset"].get<uint64_t>());
    EXPECT_EQ(model->torch_tensors[i].is_parameter, want["is_parameter"].get<bool>());
    EXPECT_EQ(model->torch_tensors[i].requires_grad, want["requires_grad"].get<bool>());
    const auto& storage = model->torch_storages[model->torch_tensors[i].storage];
    EXPECT_EQ(std::string(storage.key), std::to_string(want["storage_index"].get<int>()));
    EXPECT_EQ(storage.nbytes, want["storage_numel"].get<uint64_t>() * want["element_size"].get<uint64_t>());
    EXPECT_EQ(t.offset, storage_at.at(want["storage_index"]) + want["byte_offset_in_storage"].get<uint64_t>());
    EXPECT_EQ(bool(t.flags & kTensorNonContiguous), !want["contiguous"].get<bool>());

    auto bytes = torch_tensor_bytes(*model, static_cast<uint32_t>(i));
    ASSERT_TRUE(bytes.ok()) << bytes.error().to_string();
    const std::string ref = oracle(want["values"]["path"]);
    if (t.type == TypeId::i64) {
      auto r = test::read_values<int64_t>(ref);
      ASSERT_EQ(bytes->size(), r.size() * 8);
      EXPECT_EQ(std::memcmp(bytes->data(), r.data(), bytes->size()), 0);
      continue;
    }
    auto r = test::read_values<float>(ref);
    const size_t elem = type_info(t.type).block_bytes;
    ASSERT_EQ(bytes->size(), r.size() * elem);
    for (size_t k = 0; k < r.size(); ++k) {
      float v;
      uint16_t h;
      if (elem == 4) std::memcpy(&v, bytes->data() + 4 * k, 4);
      else {
        std::memcpy(&h, bytes->data() + 2 * k, 2);
        v = t.type == TypeId::f16 ? test::widen_f16(h) : test::widen_bf16(h);
      }
      EXPECT_EQ(v, r[k]) << "element " << k;
    }
  }
  // shared storages: every group equals the manifest's shares_storage_with sets
  std::map<std::string, std::set<std::string>> shares;
  for (const auto& group : torch_shared_storages(*model))
    for (uint32_t a : group)
      for (uint32_t b : group)
        if (a != b) shares[std::string(model->tensors[a].name)].insert(std::string(model->tensors[b].name));
  for (const auto& want : tensors) {
    auto list = want["shares_storage_with"].get<std::vector<std::string>>();
    EXPECT_EQ(shares[want["name"]], std::set<std::string>(list.begin(), list.end())) << want["name"];
  }
}

TEST(PyTorch, ZipCheckpointMatchesManifest) { check_checkpoint("pytorch/conv_linear_zip.pt"); }
TEST(PyTorch, LegacyCheckpointMatchesManifest) { check_checkpoint("pytorch/conv_linear_legacy.pt"); }

TEST(PyTorch, ZipRecordsMatchManifest) {
  const auto& entry = file_entry("pytorch/conv_linear_zip.pt");
  auto bytes = test::read_file(oracle("pytorch/conv_linear_zip.pt"));
  auto entries = read_zip_directory(bytes, "conv_linear_zip.pt");
  ASSERT_TRUE(entries.ok()) << entries.error().to_string();
  std::map<std::string, ZipEntry> by_name;
  for (const auto& e : *entries) by_name[e.name] = e;
  for (const auto& r : entry["zip_records"]) {
    auto it = by_name.find(r["name"]);
    ASSERT_NE(it, by_name.end()) << r["name"];
    EXPECT_EQ(it->second.data_offset, r["data_offset"].get<uint64_t>());
    EXPECT_EQ(it->second.size, r["size"].get<uint64_t>());
    EXPECT_EQ(it->second.method, r["compress_type"].get<int>());
  }
}

TEST(PyTorch, MaliciousPickleIsRefusedNamingTheGlobal) {
  const auto& entry = file_entry("pytorch/malicious_os_system.pt");
  auto model = open_model(oracle("pytorch/malicious_os_system.pt"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::refused);
  const std::string quoted = std::string("'").append(entry["offending_global"].get<std::string>()).append("'");
  EXPECT_NE(model.error().message.find(quoted), std::string::npos) << model.error().to_string();
  EXPECT_NE(model.error().offset, kNoOffset);
}

TEST(PyTorch, MaliciousPickleIsNeverExecutedByTheBinary) {
  const auto& entry = file_entry("pytorch/malicious_os_system.pt");
  const std::string sentinel = "/tmp/akview_oracle_pickle_executed";
  ASSERT_NE(entry["payload_command"].get<std::string>().find(sentinel), std::string::npos);
  std::filesystem::remove(sentinel);
  ASSERT_FALSE(std::filesystem::exists(sentinel));
  const testing::TempDir dir;
  const std::string out = dir.file("malicious.txt");
  const std::string cmd = std::string("'") + AKVIEW_BINARY + "' info '" + oracle("pytorch/malicious_os_system.pt") +
                          "' >'" + out + "' 2>&1";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  auto text = test::read_file(out);
  std::string message(text.begin(), text.end());
  EXPECT_NE(message.find("posix.system"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(sentinel));
}

// Hand-written pickles: each refusal names the global or opcode; bounded failures, no crash.
Result<PickleResult> run(std::string_view p) {
  return run_pickle({reinterpret_cast<const uint8_t*>(p.data()), p.size()}, "t.pkl", 0, PersistentIds::zip_5_tuple);
}

TEST(Pickle, RefusesUnknownGlobalAtItsOffset) {
  auto r =
      run(std::string_view("\x80\x02}q\x00"
                           "cbuiltins\neval\nq\x01.",
                           24));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::refused);
  EXPECT_EQ(r.error().offset, 5u);
  EXPECT_EQ(r.error().message, "pickle global 'builtins.eval' is not allowed (only plain tensor data is read)");
}

TEST(Pickle, RefusesStackGlobalOutsideTheAllowlist) {
  std::string p = "\x80\x04\x8c\x05posix\x8c\x06system\x93.";
  auto r = run(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'posix.system'"), std::string::npos);
}

TEST(Pickle, RefusesExecutingOpcodes) {
  auto r = run(std::string_view("\x80\x02(i os\nsystem\n.", 20));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::refused);
  EXPECT_EQ(r.error().offset, 3u);
}

TEST(Pickle, TruncatedAndUnderflowAreErrors) {
  EXPECT_FALSE(run(std::string_view("\x80\x02}", 3)).ok());
  EXPECT_FALSE(run("t.").ok());
  EXPECT_FALSE(run("X\xff\xff\xff\x7f").ok());
  EXPECT_FALSE(run("h\x05.").ok());
  EXPECT_FALSE(run(std::string_view("\x95\xff\xff\xff\xff\xff\xff\xff\xff", 9)).ok());
}

TEST(Pickle, PlainDataRoundTrips) {
  // {'a': [1, -2, 3.5], 'b': 'x'} with protocol 4 opcodes
  const uint8_t bytes[] = {0x80, 0x04, 0x95, 0,    0,   0,   0,    0,   0,    0,    0,    '}',  0x94, '(',  0x8c, 1,
                           'a',  0x94, ']',  0x94, '(', 'K', 1,    'J', 0xfe, 0xff, 0xff, 0xff, 'G',  0x40, 0x0c, 0,
                           0,    0,    0,    0,    0,   'e', 0x8c, 1,   'b',  0x8c, 1,    'x',  'u',  '.'};
  std::string p(reinterpret_cast<const char*>(bytes), sizeof bytes);
  auto r = run(p);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const auto& root = r->values[r->root];
  ASSERT_EQ(root.kind, PyKind::dict);
  ASSERT_EQ(root.items.size(), 4u);
  const auto& list = r->values[root.items[1]];
  ASSERT_EQ(list.items.size(), 3u);
  EXPECT_EQ(r->values[list.items[1]].integer, -2);
  EXPECT_EQ(r->values[list.items[2]].floating, 3.5);
  EXPECT_EQ(r->values[root.items[3]].text, "x");
}

}   // namespace
}   // namespace akview

namespace akview {
namespace {

// Every truncation of both checkpoints is refused (the last storage's data ends at the end of the
// file); a sweep of single-byte corruptions opens with every tensor inside the file, or is refused
// with a message and an offset inside the file. Never a crash (run under ASan/UBSan).
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  // Unlinked first: rewriting a file in place makes ext4 flush it on close (slow here).
  std::remove(path.c_str());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  if (!bytes.empty()) {
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size()) << path;
  }
  ASSERT_EQ(std::fclose(f), 0) << path;
}

void expect_clean_refusal(const Error& e, size_t file_size, const std::string& what) {
  EXPECT_FALSE(e.message.empty()) << what;
  if (e.offset != kNoOffset) {
    EXPECT_LE(e.offset, file_size) << what << ": " << e.to_string();
  }
}

TEST(PyTorch, DamagedCheckpointsFailCleanly) {
  const testing::TempDir dir;   // unique, removed with its files at the end
  for (const char* rel : {"pytorch/conv_linear_zip.pt", "pytorch/conv_linear_legacy.pt"}) {
    const auto good = test::read_file(test::oracle(rel));
    ASSERT_GT(good.size(), 0u) << rel;
    const std::string path = dir.file("damaged.pt");
    size_t refused = 0;
    for (size_t n = 0; n < good.size(); ++n) {
      ASSERT_NO_FATAL_FAILURE(
          write_bytes(path, std::vector<uint8_t>(good.begin(), good.begin() + static_cast<ptrdiff_t>(n))));
      auto m = open_model(path);
      EXPECT_FALSE(m.ok()) << rel << " truncated to " << n << " of " << good.size() << " bytes opened";
      if (m.ok()) continue;
      ++refused;
      expect_clean_refusal(m.error(), n, std::string(rel) + " truncated to " + std::to_string(n));
    }
    EXPECT_EQ(refused, good.size()) << rel;
    size_t opened = 0;
    for (size_t at = 0; at < good.size(); at += 3) {
      auto bad = good;
      bad[at] ^= 0xff;
      ASSERT_NO_FATAL_FAILURE(write_bytes(path, bad));
      auto m = open_model(path);
      const std::string what = std::string(rel) + " byte " + std::to_string(at) + " flipped";
      if (!m.ok()) {
        expect_clean_refusal(m.error(), bad.size(), what);
        continue;
      }
      ++opened;
      for (const auto& st : m->torch_storages)
        EXPECT_LE(st.offset + st.nbytes, bad.size()) << what << " storage " << st.key;
      for (uint32_t i = 0; i < m->tensors.size(); ++i) {
        const auto& t = m->tensors[i];
        EXPECT_LE(t.offset + t.nbytes, bad.size()) << what << " " << t.name;
        EXPECT_EQ(m->data(t).size(), t.nbytes) << what << " " << t.name;   // data inside the file
        auto bytes = torch_tensor_bytes(*m, i);
        if (!bytes.ok()) {
          EXPECT_FALSE(bytes.error().message.empty()) << what << " " << t.name;
        }
      }
    }
    EXPECT_GT(opened, 0u) << rel << ": some flips land in tensor data and must still open";
  }
}

}   // namespace
}   // namespace akview
