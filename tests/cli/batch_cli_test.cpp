// The batch commands through the real binary: JSON tables equal the oracle manifest, malformed
// files exit 1 with one line naming file and offset, usage errors exit 2, no escape bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/cli/cli_util.hpp"
#include "tests/cli/run_process.hpp"

namespace akview::testing {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(BatchCli, GgufTensorsJsonMatchesManifest) {
  auto manifest = load_json(kOracles + "/manifest.json");
  int files = 0;
  for (const auto& f : manifest["gguf"]["files"]) {
    std::string path = kOracles + "/" + f["path"].get<std::string>();
    auto r = run_akview({"tensors", path, "--json"});
    ASSERT_EQ(r.exit_code, 0) << path << ": " << r.err;
    auto rows = nlohmann::json::parse(r.out);
    ASSERT_EQ(rows.size(), f["tensors"].size()) << path;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& want = f["tensors"][i];
      const auto& got = rows[i];
      EXPECT_EQ(got["name"], want["name"]) << path;
      EXPECT_EQ(got["type"], lower(want["type"].get<std::string>())) << path;
      EXPECT_EQ(got["shape"], want["shape"]) << path;
      EXPECT_EQ(got["offset"], want["abs_offset"]) << path;
      EXPECT_EQ(got["nbytes"], want["nbytes"]) << path;
      EXPECT_TRUE(got.contains("canonical")) << path;
      EXPECT_EQ(got["file"], path);
    }
    ++files;
  }
  EXPECT_GE(files, 27);
}

TEST(BatchCli, GgufMetaJsonMatchesManifest) {
  auto manifest = load_json(kOracles + "/manifest.json");
  int files = 0, keys = 0;
  for (const auto& f : manifest["gguf"]["files"]) {
    if (f["path"] != "gguf/kv_types.gguf") continue;   // one file covers every type; the rest repeat keys
    ++files;
    std::string path = kOracles + "/" + f["path"].get<std::string>();
    for (const auto& [key, want] : f["metadata"].items()) {
      auto r = run_akview({"meta", path, key, "--json"});
      ASSERT_EQ(r.exit_code, 0) << path << " " << key << ": " << r.err;
      auto got = nlohmann::json::parse(r.out);
      EXPECT_EQ(got["key"], key);
      if (want["type"] == "ARRAY") {
        EXPECT_EQ(got["type"].get<std::string>().rfind("ARRAY", 0), 0u) << key;
      } else {
        EXPECT_EQ(got["type"], want["type"]) << path << " " << key;
      }
      EXPECT_EQ(got["value"], want["value"]) << path << " " << key;
      ++keys;
    }
  }
  EXPECT_EQ(files, 1);
  EXPECT_GE(keys, 20);
}

// The key written after a nested array is read at the right offset (the nested array is skipped whole).
TEST(BatchCli, GgufMetaReadsTheKeyAfterANestedArray) {
  auto manifest = load_json(kOracles + "/manifest.json");
  int found = 0;
  for (const auto& f : manifest["gguf"]["files"]) {
    if (f["path"] != "gguf/kv_nested_array.gguf") continue;
    ++found;
    const auto& want = f["metadata"]["test.after_nested"];
    ASSERT_EQ(want["type"], "UINT32");
    ASSERT_EQ(want["value"], 7);
    std::string path = kOracles + "/" + f["path"].get<std::string>();
    auto r = run_akview({"meta", path, "test.after_nested", "--json"});
    ASSERT_EQ(r.exit_code, 0) << path << ": " << r.err;
    auto got = nlohmann::json::parse(r.out);
    EXPECT_EQ(got["key"], "test.after_nested");
    EXPECT_EQ(got["type"], want["type"]);
    EXPECT_EQ(got["value"], want["value"]);
  }
  EXPECT_EQ(found, 1);
}

TEST(BatchCli, SafetensorsTensorsJsonMatchesManifest) {
  auto manifest = load_json(kOracles + "/manifest.json");
  int models = 0;
  for (const auto& m : manifest["safetensors"]["models"]) {
    if (m["kind"] != "safetensors-hf" && m["kind"] != "safetensors-hf-sharded") continue;
    ++models;
    std::string dir = kOracles + "/" + m["dir"].get<std::string>();
    auto r = run_akview({"tensors", dir, "--json", "--sort", "name"});
    ASSERT_EQ(r.exit_code, 0) << dir << ": " << r.err;
    auto rows = nlohmann::json::parse(r.out);
    ASSERT_EQ(rows.size(), m["tensors"].size()) << dir;
    std::map<std::string, nlohmann::json> by_name;
    for (const auto& row : rows) by_name[row["name"]] = row;
    for (const auto& want : m["tensors"]) {
      auto it = by_name.find(want["name"]);
      ASSERT_NE(it, by_name.end()) << want["name"];
      EXPECT_EQ(it->second["type"], lower(want["dtype"].get<std::string>()));
      EXPECT_EQ(it->second["shape"], want["shape"]);
      EXPECT_EQ(it->second["offset"], want["abs_offset"]);
      EXPECT_EQ(it->second["file"], kOracles + "/" + want["file"].get<std::string>());
    }
  }
  EXPECT_EQ(models, 4);   // the HF models of the oracle manifest (plain and sharded)
}

TEST(BatchCli, MalformedFilesGetTheirVerdict) {
  auto cases = load_json(kOracles + "/malformed/malformed.json");
  for (const auto& c : cases["cases"]) {
    std::string path = kOracles + "/" + c["path"].get<std::string>();
    auto r = run_akview({"info", path});
    const std::string expect = c["expect"];
    if (expect == "accept") {
      EXPECT_EQ(r.exit_code, 0) << path << ": " << r.err;
      continue;
    }
    if (expect == "reject_strict" && r.exit_code == 0) {
      auto check = run_akview({"check", path});   // tolerated when browsing, but check must fail
      EXPECT_EQ(check.exit_code, 1) << path;
      continue;
    }
    EXPECT_EQ(r.exit_code, 1) << path << " (" << c["reason"] << "): " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(path + "@0x"), std::string::npos) << "names file and offset: " << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(BatchCli, ExitCodes) {
  EXPECT_EQ(run_akview({"info"}).exit_code, 2);              // missing PATH
  EXPECT_EQ(run_akview({"frobnicate", "x"}).exit_code, 2);   // unknown command
  EXPECT_EQ(run_akview({"tensors", kOracles + "/gguf/f32.gguf", "--sort", "nope"}).exit_code, 2);
  EXPECT_EQ(run_akview({"tensors", kOracles + "/gguf/f32.gguf", "--filter", "("}).exit_code, 2);
  EXPECT_EQ(run_akview({"info", kOracles + "/README.md"}).exit_code, 1);   // not a weight file
  EXPECT_EQ(run_akview({"info", "/nonexistent/model.gguf"}).exit_code, 1);
  EXPECT_EQ(run_akview({"meta", kOracles + "/gguf/f32.gguf", "no.such.key"}).exit_code, 1);
  EXPECT_EQ(run_akview({"check", kOracles + "/gguf/f32.gguf"}).exit_code, 0);
  EXPECT_EQ(run_akview({"check", kOracles + "/malformed/gguf_bad_magic.gguf"}).exit_code, 1);
}

TEST(BatchCli, FilterSortAndCsv) {
  std::string path = kOracles + "/gguf/q8_0.gguf";
  auto r = run_akview({"tensors", path, "--json", "--filter", "attn_[kv]", "--sort", "name"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["name"], "blk.0.attn_k.weight");
  EXPECT_EQ(rows[1]["name"], "blk.0.attn_v.weight");
  auto inv = run_akview({"tensors", path, "--json", "--filter", "attn_[kv]", "--invert"});
  EXPECT_EQ(nlohmann::json::parse(inv.out).size(), 3u);
  auto by_bytes = nlohmann::json::parse(run_akview({"tensors", path, "--json", "--sort", "bytes", "--desc"}).out);
  for (size_t i = 1; i < by_bytes.size(); ++i) EXPECT_GE(by_bytes[i - 1]["nbytes"], by_bytes[i]["nbytes"]);
  auto csv = run_akview({"tensors", path, "--csv"});
  EXPECT_EQ(csv.out.rfind("name,canonical,type,shape", 0), 0u);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 6);
}

// MLX scales/biases are listed right beneath their weight: in the default (model) order and when
// a sort moves the weights.
TEST(BatchCli, MlxCompanionsStayBeneathTheirTensor) {
  auto manifest = load_json(kOracles + "/manifest.json");
  int models = 0;
  for (const auto& m : manifest["safetensors"]["models"]) {
    if (m["kind"] != "safetensors-mlx-affine") continue;
    std::string dir = kOracles + "/" + m["dir"].get<std::string>();
    for (std::vector<std::string> sort :
         {std::vector<std::string>{}, {"--sort", "bytes"}, {"--sort", "bytes", "--desc"}}) {
      std::vector<std::string> args = {"tensors", dir, "--json"};
      args.insert(args.end(), sort.begin(), sort.end());
      auto r = run_akview(args);
      ASSERT_EQ(r.exit_code, 0) << dir << ": " << r.err;
      auto rows = nlohmann::json::parse(r.out);
      std::map<std::string, size_t> index;
      for (size_t i = 0; i < rows.size(); ++i) index[rows[i]["name"].get<std::string>()] = i;
      int quantized = 0;
      for (const auto& want : m["tensors"]) {
        if (!want.value("quantized", false)) continue;
        ++quantized;
        auto w = index.find(want["weight"]["name"].get<std::string>());
        ASSERT_NE(w, index.end()) << want["name"];
        ASSERT_LT(w->second + 2, rows.size()) << want["name"];
        std::set<std::string> next = {rows[w->second + 1]["name"].get<std::string>(),
                                      rows[w->second + 2]["name"].get<std::string>()};
        std::set<std::string> companions = {want["scales"]["name"].get<std::string>(),
                                            want["biases"]["name"].get<std::string>()};
        EXPECT_EQ(next, companions) << dir << " " << want["name"] << " sort " << sort.size();
        EXPECT_EQ(rows[w->second + 1].value("companion", false), true);
        EXPECT_EQ(rows[w->second + 2].value("companion", false), true);
      }
      EXPECT_GT(quantized, 0) << dir;
      if (!sort.empty()) {   // the logical tensors are in byte order
        std::vector<uint64_t> bytes;
        for (const auto& row : rows)
          if (!row.value("companion", false)) bytes.push_back(row["nbytes"].get<uint64_t>());
        if (sort.size() == 3) std::reverse(bytes.begin(), bytes.end());
        EXPECT_TRUE(std::is_sorted(bytes.begin(), bytes.end())) << dir;
      }
    }
    ++models;
  }
  EXPECT_GT(models, 0);
}

TEST(BatchCli, BatchOutputHasNoEscapeBytes) {
  for (const char* cmd : {"info", "tensors", "meta"}) {
    auto r = run_akview({cmd, kOracles + "/gguf/kv_types.gguf"}, {"TERM=xterm-256color"});
    EXPECT_EQ(r.exit_code, 0) << cmd << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << cmd;
  }
}

}   // namespace
}   // namespace akview::testing
