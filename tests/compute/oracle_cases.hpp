// Builds TensorViews for every oracle tensor that has a `matvec` reference (manifest.json), each
// over a read-only mapping of its file: GGUF tensors, SafeTensors / MLX affine models, and Ollama
// tensor blobs (whose offsets come from the blob's own safetensors header).
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "core/tensor_view.hpp"
#include "core/types.hpp"
#include "tests/common/oracle_data.hpp"

namespace akview::testing {

inline std::string oracle_path(const std::string& rel) { return std::string(AKVIEW_ORACLES_DIR) + "/" + rel; }

inline std::vector<float> read_f32(const std::string& rel) {
  std::ifstream in(oracle_path(rel), std::ios::binary | std::ios::ate);
  std::vector<float> v(in ? static_cast<size_t>(in.tellg()) / 4 : 0);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  return v;
}

struct OracleCase {
  std::string label;              // "gguf/q4_k...: blk.0.attn_k.weight"
  std::shared_ptr<Model> model;   // owns the mapping the view points into
  TensorView view;
  std::vector<float> x, y_ref, deq;   // deq: the reference dequantization, row-major
  std::string error;                  // why the case could not be built
};

namespace detail {

inline std::shared_ptr<Model> model_over(const std::string& rel, std::string& error) {
  auto m = std::make_shared<Model>();
  auto map = MappedFile::open(oracle_path(rel));
  if (!map) {
    error = map.error().to_string();
    return nullptr;
  }
  SourceFile f;
  f.path = rel;
  f.map = std::move(*map);
  m->path = rel;
  m->files.push_back(std::move(f));
  return m;
}

inline uint32_t add(Model& m, const std::string& name, TypeId type, uint64_t offset, uint64_t nbytes,
                    const std::vector<int64_t>& shape) {
  Tensor t;
  t.name = m.intern(name);
  t.type = type;
  t.rank = static_cast<uint8_t>(shape.size());
  t.offset = offset;
  t.nbytes = nbytes;
  return m.add_tensor(t, shape);
}

inline void finish(OracleCase& c, const nlohmann::json& t, uint32_t index) {
  auto v = make_tensor_view(*c.model, c.model->tensors[index]);
  if (!v) {
    c.error = v.error().to_string();
    return;
  }
  c.view = *v;
  c.x = read_f32(t["matvec"]["x"]["path"]);
  c.y_ref = read_f32(t["matvec"]["y"]["path"]);
  c.deq = read_f32(t["deq"]["path"]);
}

// The safetensors header of a blob: name -> {dtype, shape, abs_offset, nbytes}.
inline nlohmann::json blob_header(const Model& m) {
  const auto bytes = m.files[0].map.bytes();
  if (bytes.size() < 8) return {};
  uint64_t len;
  std::memcpy(&len, bytes.data(), 8);
  if (len > bytes.size() - 8) return {};
  auto j =
      nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(len), nullptr, false);
  if (j.is_discarded()) return {};
  for (auto& [k, e] : j.items())
    if (k != "__metadata__") {
      e["abs_offset"] = 8 + len + e["data_offsets"][0].get<uint64_t>();
      e["nbytes"] = e["data_offsets"][1].get<uint64_t>() - e["data_offsets"][0].get<uint64_t>();
    }
  return j;
}

inline TypeId st_type(const nlohmann::json& dtype) {
  return type_from_st_dtype(dtype.get<std::string>()).value_or(TypeId::u8);
}

}   // namespace detail

inline std::vector<OracleCase> load_matvec_cases() {
  using nlohmann::json;
  std::vector<OracleCase> cases;
  const json m = oracle_json("manifest.json");

  for (const auto& f : m["gguf"]["files"]) {
    for (const auto& t : f["tensors"]) {
      if (!t.contains("matvec")) continue;
      OracleCase c;
      c.label = f["path"].get<std::string>() + ": " + t["name"].get<std::string>();
      c.model = detail::model_over(f["path"], c.error);
      if (c.model) {
        auto type = type_from_ggml(t["type_id"].get<int64_t>());
        const uint32_t i = detail::add(*c.model, t["name"], type.value_or(TypeId::u8), t["abs_offset"], t["nbytes"],
                                       t["shape"].get<std::vector<int64_t>>());
        detail::finish(c, t, i);
      }
      cases.push_back(std::move(c));
    }
  }

  for (const auto& mo : m["safetensors"]["models"]) {
    const std::string kind = mo["kind"];
    for (const auto& t : mo["tensors"]) {
      if (!t.contains("matvec")) continue;
      OracleCase c;
      c.label = mo["name"].get<std::string>() + ": " + t["name"].get<std::string>();
      const bool ollama = kind == "ollama-tensor-store";
      const std::string file =
          ollama ? t["blob"].get<std::string>()
                 : (t.contains("file") ? t["file"].get<std::string>()
                                       : t["weight"].value("file", mo["files"][0]["path"].get<std::string>()));
      c.model = detail::model_over(file, c.error);
      if (!c.model) {
        cases.push_back(std::move(c));
        continue;
      }
      Model& model = *c.model;
      const bool quantized = t.value("quantized", false);
      uint32_t index = 0;
      if (ollama) {
        const json h = detail::blob_header(model);
        const std::string name = t["name"];
        if (!h.contains(name)) {
          c.error = "blob header lacks " + name;
        } else if (quantized) {
          const int bits = t["bits"];
          const TypeId type = t["quant_type"] == "int4" ? TypeId::ollama_int4 : TypeId::ollama_int8;
          const json& w = h[name];
          const json& s = h[name + ".scale"];
          const json& b = h[name + ".bias"];
          QuantInfo q;
          q.bits = static_cast<uint8_t>(bits);
          q.group_size = t["group_size"];
          q.scales = detail::add(model, name + ".scale", detail::st_type(s["dtype"]), s["abs_offset"], s["nbytes"],
                                 s["shape"].get<std::vector<int64_t>>());
          q.biases = detail::add(model, name + ".bias", detail::st_type(b["dtype"]), b["abs_offset"], b["nbytes"],
                                 b["shape"].get<std::vector<int64_t>>());
          model.quants.push_back(q);
          index = detail::add(model, name, type, w["abs_offset"], w["nbytes"],
                              t["logical_shape"].get<std::vector<int64_t>>());
          model.tensors[index].quant = static_cast<uint32_t>(model.quants.size() - 1);
        } else {
          const json& w = h[name];
          index = detail::add(model, name, detail::st_type(w["dtype"]), w["abs_offset"], w["nbytes"],
                              w["shape"].get<std::vector<int64_t>>());
        }
      } else if (t.contains("weight")) {
        const json& w = t["weight"];
        const json& s = t["scales"];
        const json& b = t["biases"];
        auto nbytes = [](const json& e) {
          return e["data_offsets"][1].get<uint64_t>() - e["data_offsets"][0].get<uint64_t>();
        };
        QuantInfo q;
        q.bits = static_cast<uint8_t>(t["bits"].get<int>());
        q.group_size = t["group_size"];
        q.scales = detail::add(model, s["name"], detail::st_type(s["dtype"]), s["abs_offset"], nbytes(s),
                               s["shape"].get<std::vector<int64_t>>());
        q.biases = detail::add(model, b["name"], detail::st_type(b["dtype"]), b["abs_offset"], nbytes(b),
                               b["shape"].get<std::vector<int64_t>>());
        model.quants.push_back(q);
        index = detail::add(model, w["name"], TypeId::mlx_affine, w["abs_offset"], nbytes(w),
                            t["logical_shape"].get<std::vector<int64_t>>());
        model.tensors[index].quant = static_cast<uint32_t>(model.quants.size() - 1);
      } else {
        const uint64_t nb = t["data_offsets"][1].get<uint64_t>() - t["data_offsets"][0].get<uint64_t>();
        index = detail::add(model, t["name"], detail::st_type(t["dtype"]), t["abs_offset"], nb,
                            t["shape"].get<std::vector<int64_t>>());
      }
      if (c.error.empty()) detail::finish(c, t, index);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// load_matvec_cases(), read once per process.
inline const std::vector<OracleCase>& matvec_oracle_cases() {
  static const std::vector<OracleCase> all = load_matvec_cases();
  return all;
}

}   // namespace akview::testing
