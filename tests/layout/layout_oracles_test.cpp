// Layout over every model in the oracles (tests/oracles): the regions tile each file at every depth, each
// tensor's data region sits at the manifest's offset with its byte count, GGUF key/value and
// tensor-info regions agree with the parser, and block fields reproduce the `deq` references.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/formats/format.hpp"
#include "core/layout/block_fields.hpp"
#include "tests/common/oracle_data.hpp"
#include "tests/layout/layout_check.hpp"

namespace akview {
namespace {

namespace fs = std::filesystem;
using testing::collect_regions;
using testing::coverage_problem;

const std::string kOracles = AKVIEW_ORACLES_DIR;

// Read once; the loops below hold references into it.
const nlohmann::json& manifest() {
  static const nlohmann::json kManifest = testing::oracle_json("manifest.json");
  return kManifest;
}

// Every model the oracles hold that akview opens: GGUF files, SafeTensors folders and the edge
// file, both Ollama stores, the PyTorch checkpoints and the malformed set's valid controls.
std::vector<std::string> oracle_models() {
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(kOracles + "/gguf"))
    if (e.path().extension() == ".gguf") paths.push_back(e.path());
  for (const auto& e : fs::directory_iterator(kOracles + "/st"))
    if (e.path().filename() != "ref") paths.push_back(e.path());
  paths.push_back(kOracles + "/ollama");
  paths.push_back(kOracles + "/ollama_st");
  paths.push_back(kOracles + "/pytorch/conv_linear_zip.pt");
  paths.push_back(kOracles + "/pytorch/conv_linear_legacy.pt");
  paths.push_back(kOracles + "/malformed/st_valid_control.safetensors");
  paths.push_back(kOracles + "/malformed/gguf_valid_control.gguf");
  std::sort(paths.begin(), paths.end());
  return paths;
}

// The regions of the file at `path` within its opened model.
struct FileLayout {
  Model model;
  uint32_t file = 0;
  std::vector<Region> regions;
};
FileLayout layout_of(const std::string& model_path, const std::string& file_path) {
  auto model = open_model(model_path);
  EXPECT_TRUE(model.ok()) << model_path;
  FileLayout l{std::move(*model), 0, {}};
  bool found = false;
  for (uint32_t i = 0; i < l.model.files.size(); ++i)
    if (fs::equivalent(l.model.files[i].path, file_path)) l.file = i, found = true;
  EXPECT_TRUE(found) << file_path << " is not a file of " << model_path;
  l.regions = collect_regions(l.model, l.file);
  return l;
}

const Region* find_region(const std::vector<Region>& regions, std::string_view label, RegionKind kind) {
  for (const Region& r : regions)
    if (r.label == label && r.kind == kind) return &r;
  return nullptr;
}

TEST(LayoutOracles, RegionsTileEveryFileAtEveryDepth) {
  size_t files = 0;
  for (const std::string& path : oracle_models()) {
    auto model = open_model(path);
    if (!model) {
      // kv_nested_array.gguf may be refused (the oracle README allows it); nothing else may.
      EXPECT_NE(path.find("kv_nested_array"), std::string::npos) << model.error().to_string();
      continue;
    }
    for (uint32_t f = 0; f < model->files.size(); ++f) {
      const auto regions = collect_regions(*model, f);
      EXPECT_FALSE(regions.empty()) << model->files[f].path;
      EXPECT_EQ(coverage_problem(regions, model->files[f].map.size()), "") << model->files[f].path;
      for (const Region& r : regions)
        EXPECT_TRUE((r.kind != RegionKind::gap && r.kind != RegionKind::overlap && r.kind != RegionKind::shared) ||
                    model->format.starts_with("pytorch"))
            << model->files[f].path << ": unexpected " << region_kind_name(r.kind) << " " << r.label << " @"
            << r.offset;
      ++files;
    }
  }
  EXPECT_GE(files, 40u);
}

TEST(LayoutOracles, GgufTensorRegionsSitAtManifestOffsets) {
  for (const auto& entry : manifest()["gguf"]["files"]) {
    const std::string path = kOracles + "/" + entry["path"].get<std::string>();
    if (!open_model(path)) continue;   // kv_nested_array.gguf may be refused
    const FileLayout l = layout_of(path, path);
    for (const auto& t : entry["tensors"]) {
      const Region* r = find_region(l.regions, t["name"].get<std::string>(), RegionKind::tensor);
      ASSERT_NE(r, nullptr) << path << " " << t["name"];
      EXPECT_EQ(r->offset, t["abs_offset"].get<uint64_t>()) << path << " " << t["name"];
      EXPECT_EQ(r->size, t["nbytes"].get<uint64_t>()) << path << " " << t["name"];
      EXPECT_EQ(r->depth, 1);
    }
    if (entry["n_tensors"] == 0) continue;   // kv_nested_array.gguf: no data section
    const Region* data = find_region(l.regions, "data section", RegionKind::data);
    ASSERT_NE(data, nullptr) << path;
    EXPECT_EQ(data->offset, entry["data_section_offset"].get<uint64_t>()) << path;
  }
}

TEST(LayoutOracles, GgufKeyValueAndTensorInfoRegionsAgreeWithTheParser) {
  for (const auto& entry : manifest()["gguf"]["files"]) {
    const std::string path = kOracles + "/" + entry["path"].get<std::string>();
    if (!open_model(path)) continue;
    const FileLayout l = layout_of(path, path);
    std::vector<const Region*> kvs, infos;
    for (const Region& r : l.regions) {
      if (r.kind == RegionKind::kv) kvs.push_back(&r);
      if (r.kind == RegionKind::tensor_info) infos.push_back(&r);
    }
    std::vector<const MetaEntry*> meta;
    for (const MetaEntry& m : l.model.meta)
      if (m.file == l.file) meta.push_back(&m);
    ASSERT_EQ(kvs.size(), meta.size()) << path;
    EXPECT_EQ(kvs.size(), entry["n_kv"].get<size_t>()) << path;
    for (size_t i = 0; i < kvs.size(); ++i) {
      EXPECT_EQ(kvs[i]->label, meta[i]->key) << path;
      EXPECT_EQ(kvs[i]->offset, meta[i]->offset) << path;
    }
    ASSERT_EQ(infos.size(), entry["n_tensors"].get<size_t>()) << path;
    size_t i = 0;
    for (const Tensor& t : l.model.tensors)
      if (t.file == l.file && i < infos.size()) {
        EXPECT_EQ(infos[i++]->label, t.name) << path;
      }
    // The manifest's value of a scalar key appears as the value of its region.
    for (const Region* kv : kvs) {
      const auto& m = entry["metadata"];
      if (!m.contains(kv->label)) continue;
      const auto& v = m[kv->label];
      if (v["type"] == "UINT32" || v["type"] == "INT32") {
        EXPECT_EQ(kv->value, std::to_string(v["value"].get<int64_t>())) << kv->label;
      }
      if (v["type"] == "STRING" && v["value"].get<std::string>().size() < 90) {
        EXPECT_EQ(kv->value, v["value"].get<std::string>());
      }
    }
  }
}

TEST(LayoutOracles, SafeTensorsRegionsSitAtManifestOffsets) {
  size_t checked = 0;
  for (const auto& model : manifest()["safetensors"]["models"]) {
    std::string first_st;   // MLX entries name their parts without a file: the model's one .safetensors
    if (!model.contains("files")) continue;   // ollama_st: blobs without offsets in the manifest (tiled above)
    for (const auto& f : model["files"])
      if (f["path"].get<std::string>().ends_with(".safetensors") && first_st.empty()) first_st = f["path"];
    for (const auto& entry : model["tensors"]) {
      std::vector<nlohmann::json> parts;
      if (entry.contains("abs_offset")) parts.push_back(entry);
      for (const char* part : {"weight", "scales", "biases"})
        if (entry.contains(part) && entry[part].is_object() && entry[part].contains("abs_offset"))
          parts.push_back(entry[part]);
      for (const auto& t : parts) {
        const std::string file = kOracles + "/" + (t.contains("file") ? t["file"].get<std::string>() : first_st);
        const std::string model_path = model.contains("dir") ? kOracles + "/" + model["dir"].get<std::string>() : file;
        const FileLayout l = layout_of(model_path, file);
        const auto& off = t["data_offsets"];
        const uint64_t size = off[1].get<uint64_t>() - off[0].get<uint64_t>();
        bool found = false;
        for (const Region& r : l.regions)
          if (r.label == t["name"].get<std::string>() &&
              (r.kind == RegionKind::tensor || r.kind == RegionKind::companion)) {
            EXPECT_EQ(r.offset, t["abs_offset"].get<uint64_t>()) << file << " " << r.label;
            EXPECT_EQ(r.size, size) << file << " " << r.label;
            found = true;
          }
        EXPECT_TRUE(found) << file << " " << t["name"];
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 50u);
}

TEST(LayoutOracles, PyTorchStoragesSitAtTheirRecords) {
  for (const auto& f : manifest()["pytorch"]["files"]) {
    if (f["expect"] != "accept") continue;
    const std::string path = kOracles + "/" + f["path"].get<std::string>();
    const FileLayout l = layout_of(path, path);
    std::map<uint64_t, const Region*> storages;
    for (const Region& r : l.regions)
      if (r.kind == RegionKind::storage) storages[r.offset] = &r;
    if (f.contains("zip_records")) {
      size_t n = 0;
      for (const auto& rec : f["zip_records"]) {
        const std::string name = rec["name"];
        const Region* record = find_region(l.regions, name, RegionKind::record);
        ASSERT_NE(record, nullptr) << name;
        if (name.find("/data/") == std::string::npos) continue;
        auto it = storages.find(rec["data_offset"].get<uint64_t>());
        ASSERT_NE(it, storages.end()) << name;
        EXPECT_EQ(it->second->size, rec["size"].get<uint64_t>()) << name;
        ++n;
      }
      EXPECT_EQ(n, storages.size());
    } else {
      ASSERT_TRUE(f.contains("storages"));
      for (const auto& s : f["storages"]) {
        auto it = storages.find(s["count_offset"].get<uint64_t>());
        ASSERT_NE(it, storages.end()) << s["key"];
        EXPECT_EQ(it->second->size, 8 + s["nbytes"].get<uint64_t>());
      }
      size_t pickles = 0;
      for (const Region& r : l.regions) pickles += r.kind == RegionKind::pickle && r.depth == 0;
      EXPECT_EQ(pickles, 5u);
    }
    // data.pkl / the state_dict pickle is laid out as opcodes ending in STOP.
    size_t stops = 0;
    for (const Region& r : l.regions) stops += r.kind == RegionKind::opcode && r.label == "STOP";
    EXPECT_GE(stops, 1u) << path;
  }
}

// A tied weight (encoder.layers.1.linear.weight is encoder.layers.0.linear.weight) and views into
// one storage are a normal thing in PyTorch: their bytes are `shared` by the views, never an overlap.
TEST(LayoutOracles, PyTorchViewsShareTheirStorageWithoutAnOverlap) {
  for (const std::string name : {"conv_linear_zip.pt", "conv_linear_legacy.pt"}) {
    const std::string path = kOracles + "/pytorch/" + name;
    const FileLayout l = layout_of(path, path);
    size_t shared = 0;
    bool tied = false;
    for (const Region& r : l.regions) {
      EXPECT_NE(r.kind, RegionKind::overlap) << name << ": " << r.label << " " << r.value;
      if (r.kind != RegionKind::shared) continue;
      ++shared;
      EXPECT_NE(r.value.find("shared by"), std::string::npos) << r.value;
      tied = tied || (r.label.find("encoder.layers.0.linear.weight") != std::string::npos &&
                      r.label.find("encoder.layers.1.linear.weight") != std::string::npos);
    }
    EXPECT_GE(shared, 2u) << name;
    EXPECT_TRUE(tied) << name;
  }
}

TEST(LayoutOracles, EveryBlockTableTilesItsBlock) {
  size_t tables = 0;
  for (const TypeInfo& info : all_types()) {
    const auto fields = block_fields(info.id);
    if (info.kind == TypeKind::composite) {
      EXPECT_TRUE(fields.empty()) << info.name;
      continue;
    }
    ASSERT_FALSE(fields.empty()) << info.name << " has no block table";
    uint64_t at = 0;
    for (const BlockField& f : fields) {
      EXPECT_EQ(f.offset, at) << info.name << " field " << f.name;
      EXPECT_GT(f.size, 0) << info.name << " field " << f.name;
      at = f.offset + f.size;
    }
    EXPECT_EQ(at, info.block_bytes) << info.name;
    ++tables;
  }
  EXPECT_GT(tables, 40u);
}

// Reads the reference f32 file of a manifest tensor.
std::vector<float> read_ref(const nlohmann::json& ref) {
  std::ifstream in(kOracles + "/" + ref["path"].get<std::string>(), std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

std::vector<double> numbers(const std::string& text) {
  std::vector<double> out;
  std::string token;
  for (char c : text + " ") {
    if (c == ' ' || c == '/') {
      if (!token.empty()) out.push_back(std::stod(token));
      token.clear();
    } else {
      token += c;
    }
  }
  return out;
}

const FieldReport& field(const BlockReport& r, std::string_view name) {
  for (const auto& f : r.fields)
    if (f.name == name) return f;
  ADD_FAILURE() << "no field " << name;
  return r.fields.front();
}

TEST(LayoutOracles, EveryGgufTensorsBlocksAreDescribed) {
  size_t tensors = 0;
  for (const auto& entry : manifest()["gguf"]["files"]) {
    const std::string path = kOracles + "/" + entry["path"].get<std::string>();
    auto model = open_model(path);
    if (!model) continue;
    for (uint32_t i = 0; i < model->tensors.size(); ++i) {
      const Tensor& t = model->tensors[i];
      auto first = describe_block(*model, i, 0);
      ASSERT_TRUE(first.ok()) << path << " " << t.name << ": " << first.error().to_string();
      for (uint64_t b : {uint64_t{0}, first->n_blocks - 1}) {
        auto r = describe_block(*model, i, b);
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r->n_blocks * r->block_bytes, t.nbytes);
        uint64_t sum = 0;
        for (const auto& f : r->fields) {
          EXPECT_EQ(f.offset, t.offset + b * r->block_bytes + sum) << t.name << " " << f.name;
          EXPECT_EQ(f.hex.size(), 2 * f.size);
          sum += f.size;
        }
        EXPECT_EQ(sum, r->block_bytes) << type_info(t.type).name;
      }
      auto past = describe_block(*model, i, first->n_blocks);
      ASSERT_FALSE(past.ok());
      EXPECT_EQ(past.error().code, ErrorCode::not_found);
      ++tensors;
    }
  }
  EXPECT_GE(tensors, 100u);
}

// Block 0 of token_embd: the decoded fields give y[0] and y[16] of the `deq` reference exactly.
TEST(LayoutOracles, BlockFieldValuesReproduceTheReference) {
  const auto& gguf = manifest()["gguf"]["files"];
  auto ref_of = [&](std::string_view file) {
    for (const auto& e : gguf)
      if (e["path"] == std::string(file))
        for (const auto& t : e["tensors"])
          if (t["name"] == "token_embd.weight") return read_ref(t["deq"]);
    return std::vector<float>{};
  };
  auto block0 = [&](std::string_view file) {
    auto model = open_model(kOracles + "/" + std::string(file));
    EXPECT_TRUE(model.ok());
    auto r = describe_block(*model, static_cast<uint32_t>(model->find("token_embd.weight") - model->tensors.data()), 0);
    EXPECT_TRUE(r.ok());
    return *r;
  };
  {
    const auto y = ref_of("gguf/q4_0.gguf");
    const BlockReport r = block0("gguf/q4_0.gguf");
    const float d = static_cast<float>(numbers(field(r, "d").value)[0]);
    const auto qs = numbers(field(r, "qs").value);   // low then high nibble of each byte
    ASSERT_EQ(qs.size(), 32u);
    EXPECT_EQ(static_cast<float>(qs[0] - 8) * d, y[0]);
    EXPECT_EQ(static_cast<float>(qs[1] - 8) * d, y[16]);
  }
  {
    const auto y = ref_of("gguf/q8_0.gguf");
    const BlockReport r = block0("gguf/q8_0.gguf");
    const float d = static_cast<float>(numbers(field(r, "d").value)[0]);
    const auto qs = numbers(field(r, "qs").value);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(static_cast<float>(qs[j]) * d, y[j]) << j;
  }
  {
    const auto y = ref_of("gguf/lq_q4_k_m.gguf");
    const BlockReport r = block0("gguf/lq_q4_k_m.gguf");
    ASSERT_EQ(r.type, "q4_k");
    EXPECT_EQ(r.block_bytes, 144u);
    const float d = static_cast<float>(numbers(field(r, "d").value)[0]);
    const float dmin = static_cast<float>(numbers(field(r, "dmin").value)[0]);
    const auto sm = numbers(field(r, "scales").value);   // sc0/m0 sc1/m1 ...
    const auto qs = numbers(field(r, "qs").value);
    ASSERT_EQ(sm.size(), 16u);
    ASSERT_EQ(qs.size(), 256u);
    const float d1 = d * static_cast<float>(sm[0]), m1 = dmin * static_cast<float>(sm[1]);
    const float d2 = d * static_cast<float>(sm[2]), m2 = dmin * static_cast<float>(sm[3]);
    EXPECT_EQ(d1 * static_cast<float>(qs[0]) - m1, y[0]);    // element 0: low nibble of qs[0]
    EXPECT_EQ(d2 * static_cast<float>(qs[1]) - m2, y[32]);   // element 32: high nibble of qs[0]
  }
}

TEST(LayoutOracles, MlxGroupFieldsReproduceTheReference) {
  for (const auto& model_entry : manifest()["safetensors"]["models"]) {
    if (model_entry["kind"] != "safetensors-mlx-affine") continue;
    const std::string dir = kOracles + "/" + model_entry["dir"].get<std::string>();
    auto model = open_model(dir);
    ASSERT_TRUE(model.ok());
    const Tensor* t = model->find("model.layers.0.self_attn.q_proj.weight");
    ASSERT_NE(t, nullptr);
    auto r = describe_block(*model, static_cast<uint32_t>(t - model->tensors.data()), 1);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    const auto codes = numbers(field(*r, "words").value);
    const float scale = static_cast<float>(numbers(field(*r, "scale").value)[0]);
    const float bias = static_cast<float>(numbers(field(*r, "bias").value)[0]);
    ASSERT_EQ(codes.size(), r->block_elems);
    size_t compared = 0;
    for (const auto& te : model_entry["tensors"]) {
      if (te["name"] != "model.layers.0.self_attn.q_proj" || !te.contains("deq")) continue;
      ++compared;
      const auto y = read_ref(te["deq"]);
      for (uint64_t j = 0; j < r->block_elems; ++j) {
        const float q = static_cast<float>(codes[j]);
        const float scaled = scale * q;
        EXPECT_EQ(scaled + bias, y[r->block_elems + j]) << j;
      }
    }
    EXPECT_EQ(compared, 1u);
  }
}

}   // namespace
}   // namespace akview
