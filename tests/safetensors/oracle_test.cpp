// SafeTensors against the oracles: every file of manifest.json → safetensors lists exactly
// the manifest's tensors, and every malformed st_* case gets the verdict of malformed.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/formats/format.hpp"
#include "core/formats/safetensors.hpp"
#include "tests/common/oracle_data.hpp"

namespace akview {
namespace {

const std::string kOracles = AKVIEW_ORACLES_DIR;

const nlohmann::json& manifest() {
  static const nlohmann::json m = testing::oracle_json("manifest.json");
  return m;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

struct Expected {
  std::string name, dtype, file;
  std::vector<int64_t> shape;
  uint64_t abs_offset = 0, nbytes = 0;
  std::string values_hex;
};

void add_expected(std::vector<Expected>& out, const nlohmann::json& t, const std::string& file) {
  Expected e;
  e.name = t["name"].get<std::string>();
  e.dtype = t["dtype"].get<std::string>();
  e.file = t.contains("file") ? t["file"].get<std::string>() : file;
  e.shape = t["shape"].get<std::vector<int64_t>>();
  e.abs_offset = t["abs_offset"].get<uint64_t>();
  e.nbytes = t["data_offsets"][1].get<uint64_t>() - t["data_offsets"][0].get<uint64_t>();
  if (t.contains("values_hex")) e.values_hex = t["values_hex"].get<std::string>();
  out.push_back(e);
}

// The plain tensors a manifest model lists; MLX entries group weight/scales/biases.
std::vector<Expected> expected_tensors(const nlohmann::json& model, const std::string& single_file) {
  std::vector<Expected> out;
  for (const auto& t : model["tensors"]) {
    if (t.contains("weight")) {
      for (const char* part : {"weight", "scales", "biases"})
        if (t.contains(part)) add_expected(out, t[part], single_file);
    } else {
      add_expected(out, t, single_file);
    }
  }
  return out;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

void expect_model_lists(const Model& model, const std::vector<Expected>& expected) {
  ASSERT_EQ(model.tensors.size(), expected.size());
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    const Tensor* t = model.find(e.name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(std::string(type_info(t->type).name), lower(e.dtype));
    auto shape = model.shape(*t);
    EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()), e.shape);
    EXPECT_EQ(t->offset, e.abs_offset);
    EXPECT_EQ(t->nbytes, e.nbytes);
    EXPECT_EQ(model.files[t->file].path, kOracles + "/" + e.file);
    if (!e.values_hex.empty()) {
      EXPECT_EQ(to_hex(model.data(*t)), e.values_hex);
    }
  }
}

TEST(SafetensorsOracles, ManifestHasSafetensorsModels) {
  ASSERT_TRUE(manifest().is_object()) << "cannot read " << kOracles << "/manifest.json";
  EXPECT_GE(manifest()["safetensors"]["models"].size(), 5u);
}

TEST(SafetensorsOracles, EverySingleFileListsTheManifestTensors) {
  int checked = 0;
  for (const auto& model : manifest()["safetensors"]["models"]) {
    const std::string kind = model["kind"].get<std::string>();
    if (kind == "safetensors-hf-sharded" || kind.rfind("ollama", 0) == 0) continue;
    std::string file;
    for (const auto& f : model["files"]) {
      const std::string p = f["path"].get<std::string>();
      if (p.size() > 12 && p.substr(p.size() - 12) == ".safetensors") file = p;
    }
    ASSERT_FALSE(file.empty()) << model["name"];
    SCOPED_TRACE(file);
    auto opened = open_model(kOracles + "/" + file);
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    EXPECT_EQ(opened->format, "safetensors");
    for (const auto& f : model["files"]) {
      if (f["path"] != file) continue;
      EXPECT_EQ(opened->files[0].data_offset, 8 + f["header_len"].get<uint64_t>());
      EXPECT_EQ(opened->files[0].map.size(), f["size"].get<uint64_t>());
    }
    expect_model_lists(*opened, expected_tensors(model, file));
    ++checked;
  }
  EXPECT_GE(checked, 6);   // three plain, two MLX, edge_valid
}

TEST(SafetensorsOracles, EdgeValidCarriesEveryCommonDtype) {
  for (const auto& model : manifest()["safetensors"]["models"]) {
    if (model["kind"] != "safetensors-edge") continue;
    auto opened = open_model(kOracles + "/" + model["files"][0]["path"].get<std::string>());
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    EXPECT_TRUE(opened->notes.empty());
    int with_values = 0;
    for (const auto& t : model["tensors"]) with_values += t.contains("values_hex");
    EXPECT_GT(with_values, 10);
    return;
  }
  FAIL() << "manifest has no safetensors-edge model";
}

TEST(SafetensorsOracles, ShardedDirectoryAndIndexFileOpenTheSet) {
  for (const auto& model : manifest()["safetensors"]["models"]) {
    if (model["kind"] != "safetensors-hf-sharded") continue;
    const std::string dir = kOracles + "/" + model["dir"].get<std::string>();
    for (const std::string& path : {dir, dir + "/model.safetensors.index.json"}) {
      SCOPED_TRACE(path);
      auto opened = open_model(path);
      ASSERT_TRUE(opened.ok()) << opened.error().to_string();
      EXPECT_EQ(opened->format, "safetensors-sharded");
      expect_model_lists(*opened, expected_tensors(model, ""));
      const MetaEntry* total = opened->find_meta("total_size");
      ASSERT_NE(total, nullptr);
      EXPECT_EQ(total->source, "index");
      EXPECT_EQ(total->value.type, MetaType::u64);
      size_t shards = 0;
      for (const auto& f : opened->files) shards += f.role.rfind("shard ", 0) == 0;
      EXPECT_EQ(shards, opened->files.size() - 1);
      EXPECT_EQ(opened->files[0].role, "index");
      for (const auto& n : opened->notes) EXPECT_FALSE(n.fails_check) << n.message;
    }
    return;
  }
  FAIL() << "manifest has no sharded model";
}

TEST(SafetensorsOracles, MalformedCasesGetTheirVerdict) {
  const auto listing = testing::oracle_json(manifest()["malformed"]["listing"].get<std::string>());
  ASSERT_TRUE(listing.is_object());
  int cases = 0;
  for (const auto& c : listing["cases"]) {
    const std::string rel = c["path"].get<std::string>();
    if (rel.find("/st_") == std::string::npos) continue;
    const std::string path = kOracles + "/" + rel;
    const std::string expect = c["expect"].get<std::string>();
    SCOPED_TRACE(rel + " (" + expect + ": " + c["reason"].get<std::string>() + ")");
    auto opened = open_model(path);
    if (expect == "accept") {
      EXPECT_TRUE(opened.ok()) << opened.error().to_string();
    } else if (expect == "reject") {
      ASSERT_FALSE(opened.ok());
    } else {
      ASSERT_EQ(expect, "reject_strict");
      if (opened.ok()) {
        EXPECT_TRUE(std::any_of(opened->notes.begin(), opened->notes.end(), [](const Note& n) {
          return n.fails_check;
        })) << "accepted without a failing note";
      }
    }
    if (!opened.ok()) {
      const Error& e = opened.error();
      EXPECT_EQ(e.file, path);
      EXPECT_NE(e.offset, kNoOffset);
      EXPECT_EQ(e.to_string().rfind(path + "@0x", 0), 0u) << e.to_string();
      EXPECT_NE(e.code, ErrorCode::not_recognized) << e.to_string();
    }
    if (!opened.ok()) std::printf("  %s\n", opened.error().to_string().c_str());
    ++cases;
  }
  EXPECT_GE(cases, 2);   // the listing holds the control and broken cases
}

}   // namespace
}   // namespace akview
