// Every tensor of the oracles that has a `deq` reference, decoded in full and compared:
// GGUF bit-exact; MLX / Ollama within 2^-22 * (|scale*q| + |bias|) (README "Suggested tolerances").
// Views are built from the manifest's offsets (never hard-coded); composites go through a Model
// with QuantInfo and make_tensor_view, like the real loaders.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/decode/decode.hpp"
#include "core/decode/float_formats.hpp"
#include "core/model.hpp"
#include "tests/decode/oracle_helpers.hpp"

namespace akview::test {
namespace {

using json = nlohmann::json;

void print_tally(const char* title, const std::map<std::string, TypeTally>& tally) {
  std::printf("%s\n  %-14s %7s %9s %9s %9s %6s\n", title, "type", "tensors", "elements", "exact", "in-bound", "bad");
  for (const auto& [name, t] : tally)
    std::printf("  %-14s %7d %9llu %9llu %9llu %6llu\n", name.c_str(), t.tensors, (unsigned long long)t.elements,
                (unsigned long long)t.exact, (unsigned long long)t.within, (unsigned long long)t.bad);
}

MappedFile open_oracle(const std::string& rel) {
  auto f = MappedFile::open(oracle_path(rel));
  EXPECT_TRUE(f.ok()) << rel;
  return f.ok() ? std::move(f.value()) : MappedFile{};
}

TEST(DecodeOracle, GgufTensorsBitExact) {
  std::map<std::string, TypeTally> tally;
  for (const auto& file : manifest()["gguf"]["files"]) {
    if (!file.contains("tensors") || file["tensors"].empty()) continue;
    MappedFile f = open_oracle(file["path"]);
    for (const auto& t : file["tensors"]) {
      if (!t.contains("deq")) continue;
      const std::string type_name = lower(t["type"].get<std::string>());
      auto type = type_from_name(type_name);
      ASSERT_TRUE(type.has_value()) << type_name;
      ASSERT_TRUE(can_decode(*type)) << type_name;
      TensorView v = plain_view(f, *type, t["abs_offset"], t["nbytes"], t["shape"]);
      ASSERT_EQ(v.data.size(), t["nbytes"].get<uint64_t>());
      const auto ref = read_f32_file(t["deq"]["path"]);
      ASSERT_EQ(ref.size(), static_cast<size_t>(v.n_rows * v.n_cols)) << t["name"];
      std::vector<float> out(ref.size(), -12345.0f);
      auto st = decode_rows(v, 0, v.n_rows, out.data());
      ASSERT_TRUE(st.ok()) << st.error().to_string();
      TypeTally& k = tally[type_name];
      ++k.tensors;
      size_t first_bad = ref.size();
      for (size_t i = 0; i < ref.size(); ++i) {
        ++k.elements;
        if (same_bits(out[i], ref[i])) {
          ++k.exact;
        } else {
          ++k.bad;
          if (first_bad == ref.size()) first_bad = i;
        }
      }
      EXPECT_EQ(first_bad, ref.size()) << file["path"] << " " << t["name"] << " (" << type_name
                                       << ") first mismatch at " << first_bad << ": got "
                                       << (first_bad < ref.size() ? out[first_bad] : 0.0f) << " want "
                                       << (first_bad < ref.size() ? ref[first_bad] : 0.0f);
    }
  }
  print_tally("GGUF decode vs oracle deq (bit-exact required):", tally);
}

// A composite weight (MLX or Ollama) over `file`: packed weight + scales + biases, as a Model.
struct CompositeCase {
  Model model;
  uint32_t weight = 0;
};

uint32_t add_plain(Model& m, uint32_t file, const std::string& name, TypeId type, uint64_t offset, uint64_t nbytes,
                   const std::vector<int64_t>& shape) {
  Tensor t;
  t.name = m.intern(name);
  t.type = type;
  t.file = file;
  t.offset = offset;
  t.nbytes = nbytes;
  t.flags = kTensorCompanion;
  return m.add_tensor(t, shape);
}

std::vector<int64_t> shape_of(const json& j) { return j.get<std::vector<int64_t>>(); }

// Compare a composite decode with its reference: |got - ref| <= 2^-22 * (|scale*q| + |bias|), where
// |scale*q| is recovered as |ref - bias| (the bound only needs its magnitude).
void compare_affine(const TensorView& v, const std::vector<float>& out, const std::vector<float>& ref, TypeTally& k,
                    const std::string& what) {
  const size_t n_groups = static_cast<size_t>(v.n_cols) / v.group_size;
  size_t reported = 0;
  for (int64_t r = 0; r < v.n_rows; ++r)
    for (int64_t c = 0; c < v.n_cols; ++c) {
      const size_t i = static_cast<size_t>(r * v.n_cols + c);
      const size_t g = static_cast<size_t>(r) * n_groups + static_cast<size_t>(c) / v.group_size;
      float bias = 0.0f;
      if (!v.biases.empty())
        bias = v.biases_type == TypeId::bf16  ? fp::bf16_to_f32(fp::load_u16(v.biases.data() + 2 * g))
               : v.biases_type == TypeId::f32 ? fp::load_f32(v.biases.data() + 4 * g)
                                              : fp::f16_to_f32(fp::load_u16(v.biases.data() + 2 * g));
      ++k.elements;
      if (same_bits(out[i], ref[i])) {
        ++k.exact;
        continue;
      }
      const double bound = std::ldexp(std::fabs(double(ref[i]) - bias) + std::fabs(bias), -22);
      if (std::fabs(double(out[i]) - ref[i]) <= bound) {
        ++k.within;
      } else {
        ++k.bad;
        if (reported++ < 3) ADD_FAILURE() << what << " [" << r << "," << c << "]: got " << out[i] << " want " << ref[i];
      }
    }
}

TypeId composite_type(const std::string& quant_type, bool ollama) {
  if (!ollama) return TypeId::mlx_affine;
  if (quant_type == "int8") return TypeId::ollama_int8;
  if (quant_type == "int4") return TypeId::ollama_int4;
  if (quant_type == "nvfp4") return TypeId::ollama_nvfp4;
  if (quant_type == "mxfp4") return TypeId::ollama_mxfp4;
  return TypeId::ollama_mxfp8;
}

void check_composite(Model& m, uint32_t weight, const json& t, std::map<std::string, TypeTally>& tally,
                     const std::string& label) {
  m.build_index();
  auto v = make_tensor_view(m, m.tensors[weight]);
  ASSERT_TRUE(v.ok()) << v.error().to_string();
  const auto ref = read_f32_file(t["deq"]["path"]);
  ASSERT_EQ(ref.size(), static_cast<size_t>(v->n_rows * v->n_cols));
  std::vector<float> out(ref.size());
  auto st = decode_rows(*v, 0, v->n_rows, out.data());
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  TypeTally& k = tally[label];
  ++k.tensors;
  compare_affine(*v, out, ref, k, t["name"].get<std::string>());
}

TEST(DecodeOracle, SafetensorsAndMlxTensors) {
  std::map<std::string, TypeTally> tally;
  for (const auto& model : manifest()["safetensors"]["models"]) {
    const std::string kind = model["kind"];
    if (kind == "ollama-tensor-store" || kind == "safetensors-edge") continue;
    for (const auto& t : model["tensors"]) {
      if (!t.contains("deq")) continue;
      if (t.value("quantized", false)) {
        // MLX affine: weight, scales and biases live in the model's single safetensors file.
        Model m;
        SourceFile sf;
        sf.path = model["files"][0]["path"];
        sf.map = open_oracle(sf.path);
        m.files.push_back(std::move(sf));
        const json& w = t["weight"];
        const json& s = t["scales"];
        const json& b = t["biases"];
        QuantInfo q;
        q.bits = t["bits"].get<uint8_t>();
        q.group_size = t["group_size"];
        q.scales = add_plain(m, 0, s["name"], *type_from_st_dtype(s["dtype"].get<std::string>()), s["abs_offset"],
                             s["data_offsets"][1].get<uint64_t>() - s["data_offsets"][0].get<uint64_t>(),
                             shape_of(s["shape"]));
        q.biases = add_plain(m, 0, b["name"], *type_from_st_dtype(b["dtype"].get<std::string>()), b["abs_offset"],
                             b["data_offsets"][1].get<uint64_t>() - b["data_offsets"][0].get<uint64_t>(),
                             shape_of(b["shape"]));
        m.quants.push_back(q);
        Tensor wt;
        wt.name = m.intern(t["name"].get<std::string>());
        wt.type = TypeId::mlx_affine;
        wt.offset = w["abs_offset"];
        wt.nbytes = w["data_offsets"][1].get<uint64_t>() - w["data_offsets"][0].get<uint64_t>();
        wt.quant = 0;
        const uint32_t wi = m.add_tensor(wt, shape_of(t["logical_shape"]));
        check_composite(
            m, wi, t, tally,
            "mlx.affine/" + std::to_string(q.bits) + "b/g" + std::to_string(q.group_size) + "/" + lower(s["dtype"]));
        continue;
      }
      const std::string file =
          t.contains("file") ? t["file"].get<std::string>() : model["files"][0]["path"].get<std::string>();
      MappedFile f = open_oracle(file);
      auto type = type_from_st_dtype(t["dtype"].get<std::string>());
      ASSERT_TRUE(type.has_value());
      const uint64_t nbytes = t["data_offsets"][1].get<uint64_t>() - t["data_offsets"][0].get<uint64_t>();
      TensorView v = plain_view(f, *type, t["abs_offset"], nbytes, t["shape"]);
      const auto ref = read_f32_file(t["deq"]["path"]);
      std::vector<float> out(ref.size());
      ASSERT_TRUE(decode_rows(v, 0, v.n_rows, out.data()).ok());
      TypeTally& k = tally[type_info(*type).name.data()];
      ++k.tensors;
      for (size_t i = 0; i < ref.size(); ++i) {
        ++k.elements;
        if (same_bits(out[i], ref[i])) ++k.exact;
        else ++k.bad;
      }
      EXPECT_EQ(k.bad, 0u) << t["name"];
    }
  }
  print_tally("SafeTensors / MLX decode vs oracle deq:", tally);
}

// Minimal safetensors header reader for the Ollama blobs: name -> (dtype, shape, absolute offset, nbytes).
struct BlobTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t offset = 0, nbytes = 0;
};
std::map<std::string, BlobTensor> read_blob_header(const MappedFile& f) {
  std::map<std::string, BlobTensor> out;
  if (f.size() < 8) return out;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(f.data()[i]) << (8 * i);
  auto h = json::parse(std::string(reinterpret_cast<const char*>(f.data()) + 8, n));
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    BlobTensor b;
    b.dtype = it.value()["dtype"];
    b.shape = it.value()["shape"].get<std::vector<int64_t>>();
    b.offset = 8 + n + it.value()["data_offsets"][0].get<uint64_t>();
    b.nbytes = it.value()["data_offsets"][1].get<uint64_t>() - it.value()["data_offsets"][0].get<uint64_t>();
    out[it.key()] = b;
  }
  return out;
}

TEST(DecodeOracle, OllamaTensorBlobs) {
  std::map<std::string, TypeTally> tally;
  for (const auto& model : manifest()["safetensors"]["models"]) {
    if (model["kind"] != "ollama-tensor-store") continue;
    for (const auto& t : model["tensors"]) {
      if (!t.contains("deq")) continue;
      Model m;
      SourceFile sf;
      sf.path = t["blob"];
      sf.map = open_oracle(sf.path);
      auto header = read_blob_header(sf.map);
      m.files.push_back(std::move(sf));
      const std::string name = t["name"];
      ASSERT_TRUE(header.count(name)) << name;
      const BlobTensor& w = header[name];
      if (!t.value("quantized", false)) {
        auto type = type_from_st_dtype(w.dtype);
        ASSERT_TRUE(type.has_value());
        TensorView v = plain_view(m.files[0].map, *type, w.offset, w.nbytes, json(w.shape));
        const auto ref = read_f32_file(t["deq"]["path"]);
        std::vector<float> out(ref.size());
        ASSERT_TRUE(decode_rows(v, 0, v.n_rows, out.data()).ok());
        TypeTally& k = tally[std::string(type_info(*type).name)];
        ++k.tensors;
        for (size_t i = 0; i < ref.size(); ++i) {
          ++k.elements;
          if (same_bits(out[i], ref[i])) ++k.exact;
          else ++k.bad;
        }
        EXPECT_EQ(k.bad, 0u) << name;
        continue;
      }
      QuantInfo q;
      q.bits = t["bits"].get<uint8_t>();
      q.group_size = t["group_size"];
      const BlobTensor& s = header.at(name + ".scale");
      q.scales = add_plain(m, 0, name + ".scale", *type_from_st_dtype(s.dtype), s.offset, s.nbytes, s.shape);
      if (header.count(name + ".bias")) {
        const BlobTensor& b = header.at(name + ".bias");
        q.biases = add_plain(m, 0, name + ".bias", *type_from_st_dtype(b.dtype), b.offset, b.nbytes, b.shape);
      }
      if (header.count(name + ".global_scale")) {
        const BlobTensor& g = header.at(name + ".global_scale");
        q.global_scale = add_plain(m, 0, name + ".global_scale", TypeId::f32, g.offset, g.nbytes, g.shape);
      }
      m.quants.push_back(q);
      Tensor wt;
      wt.name = m.intern(name);
      wt.type = composite_type(t["quant_type"], true);
      wt.offset = w.offset;
      wt.nbytes = w.nbytes;
      wt.quant = 0;
      const uint32_t wi = m.add_tensor(wt, shape_of(t["logical_shape"]));
      check_composite(
          m, wi, t, tally,
          std::string(type_info(wt.type).name) + "/g" + std::to_string(q.group_size) + "/" + lower(s.dtype));
    }
  }
  print_tally("Ollama tensor blobs decode vs oracle deq:", tally);
}

}   // namespace
}   // namespace akview::test
