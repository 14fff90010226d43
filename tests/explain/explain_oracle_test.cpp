// `explain` against the oracles: every group of every tensor that has a `deq` reference (GGUF
// of every type, MLX affine, Ollama tensor blobs, plain SafeTensors and PyTorch floats) explained
// through the real loaders; its values equal the reference and the decoder bit for bit, its steps are
// the family's, and its bytes are the file's bytes at the offset it names.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/formats/format.hpp"
#include "core/tensor_view.hpp"
#include "tests/explain/explain_checks.hpp"

namespace akview::test {
namespace {

struct Tally {
  int tensors = 0;
  uint64_t groups = 0;
};

// Explains every group of tensor `name` of `m` and compares it with `ref` (row-major f32) and with
// decode_rows. Returns the number of groups checked.
uint64_t check_tensor(const Model& m, const std::string& name, const std::vector<float>& ref, const std::string& what) {
  const Tensor* t = m.find(name);
  EXPECT_NE(t, nullptr) << what << ": no tensor " << name;
  if (t == nullptr) return 0;
  auto view = make_tensor_view(m, *t);
  EXPECT_TRUE(view.ok()) << what << ": " << (view.ok() ? "" : view.error().to_string());
  if (!view.ok()) return 0;
  const int64_t rows = view->n_rows, cols = view->n_cols;
  EXPECT_EQ(ref.size(), static_cast<size_t>(rows * cols)) << what;
  if (ref.size() != static_cast<size_t>(rows * cols)) return 0;
  std::vector<float> decoded(ref.size());
  EXPECT_TRUE(decode_rows(*view, 0, rows, decoded.data()).ok()) << what;
  SpanOrigins origins;
  origins.data = t->offset;
  if (t->quant != kNone) {
    origins.scales = m.tensors[m.quants[t->quant].scales].offset;
    if (m.quants[t->quant].biases != kNone) origins.biases = m.tensors[m.quants[t->quant].biases].offset;
  }
  // Quantized types: every group of every row (the element asked for varies inside the group). Plain
  // dtypes, where each element is its own group: the first, a middle and the last column of each row.
  const TypeKind kind = type_info(t->type).kind;
  const bool plain = kind != TypeKind::block_quant && kind != TypeKind::composite;
  uint64_t groups = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols;) {
      const int64_t asked = plain ? c : std::min(cols - 1, c + (r * 7 + c / 3) % 5);
      auto e = explain_element(*view, r, asked, origins);
      if (!e.ok()) {
        ADD_FAILURE() << what << " [" << r << "," << asked << "]: " << e.error().to_string();
        return groups;
      }
      if (e->group_col != c) {
        ADD_FAILURE() << what << ": group of column " << asked << " starts at " << e->group_col << ", expected " << c;
        return groups;
      }
      const std::string at = what + " [" + std::to_string(r) + "," + std::to_string(asked) + "]";
      check_explanation(*e, t->type, ref.data() + r * cols + c, at + " vs deq");
      check_explanation(*e, t->type, decoded.data() + r * cols + c, at + " vs decode_rows");
      if (groups % 61 == 0) check_bytes_in_file(m, *t, *e, at);
      if (::testing::Test::HasFailure()) return groups;
      ++groups;
      if (!plain) c += e->group_n;
      else c = c < cols / 2 ? cols / 2 : c < cols - 1 ? cols - 1 : cols;
    }
  }
  return groups;
}

void print_tally(const char* title, const std::map<std::string, Tally>& tally) {
  std::printf("%s\n", title);
  for (const auto& [type, t] : tally)
    std::printf("  %-14s %3d tensors %7llu groups\n", type.c_str(), t.tensors, (unsigned long long)t.groups);
}

Model open_oracle_model(const std::string& rel) {
  auto m = open_model(oracle_path(rel));
  EXPECT_TRUE(m.ok()) << rel << ": " << (m.ok() ? "" : m.error().to_string());
  return m.ok() ? std::move(*m) : Model{};
}

TEST(ExplainOracle, EveryGgufTypeEqualsDeqBitForBit) {
  std::map<std::string, Tally> tally;
  for (const auto& file : manifest()["gguf"]["files"]) {
    if (!file.contains("tensors") || file["tensors"].empty()) continue;
    Model m = open_oracle_model(file["path"]);
    for (const auto& t : file["tensors"]) {
      if (!t.contains("deq")) continue;
      const std::string type = lower(t["type"].get<std::string>());
      const uint64_t n = check_tensor(m, t["name"], read_f32_file(t["deq"]["path"]),
                                      file["path"].get<std::string>() + " " + t["name"].get<std::string>());
      ++tally[type].tensors;
      tally[type].groups += n;
      if (HasFailure()) return;
    }
  }
  print_tally("explain vs GGUF deq (bit for bit):", tally);
  for (const char* type : {"q4_0",  "q4_1",   "q5_0",    "q5_1",   "q8_0",  "q2_k",    "q3_k",  "q4_k",
                           "q5_k",  "q6_k",   "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s",
                           "iq1_m", "iq4_nl", "iq4_xs",  "tq1_0",  "tq2_0", "f16",     "bf16",  "f32"})
    EXPECT_GT(tally[type].groups, 0u) << type << " was not covered by the oracles";
}

TEST(ExplainOracle, MlxOllamaAndPlainSafetensorsEqualDeqBitForBit) {
  std::map<std::string, Tally> tally;
  for (const auto& model : manifest()["safetensors"]["models"]) {
    if (!model.contains("dir")) continue;   // edge_valid: raw dtypes without deq
    Model m = open_oracle_model(model["dir"]);
    for (const auto& t : model["tensors"]) {
      if (!t.contains("deq")) continue;
      const bool mlx = t.value("quantized", false) && t.contains("weight");
      const std::string name = mlx ? t["weight"]["name"].get<std::string>() : t["name"].get<std::string>();
      const Tensor* tensor = m.find(name);
      ASSERT_NE(tensor, nullptr) << model["dir"] << " " << name;
      const uint64_t n =
          check_tensor(m, name, read_f32_file(t["deq"]["path"]), model["dir"].get<std::string>() + " " + name);
      std::string label(type_info(tensor->type).name);
      if (tensor->quant != kNone) label += fmt::format("/{}b", m.quants[tensor->quant].bits);
      ++tally[label].tensors;
      tally[label].groups += n;
      if (HasFailure()) return;
    }
  }
  print_tally("explain vs SafeTensors / MLX / Ollama deq (bit for bit):", tally);
  for (const char* type : {"mlx.affine/4b", "mlx.affine/8b", "ollama.int4/4b", "ollama.int8/8b", "bf16", "f16", "f32"})
    EXPECT_GT(tally[type].groups, 0u) << type << " was not covered by the oracles";
}

TEST(ExplainOracle, PytorchFloatTensorsEqualTheirReferences) {
  uint64_t groups = 0;
  for (const auto& file : manifest()["pytorch"]["files"]) {
    if (file.value("expect", "") != "accept" || !file.contains("tensors")) continue;
    Model m = open_oracle_model(file["path"]);
    for (const auto& t : file["tensors"]) {
      const Tensor* tensor = m.find(t["name"].get<std::string>());
      ASSERT_NE(tensor, nullptr) << t["name"];
      if (!t.contains("values") || t["values"]["dtype"] != "float32" || (tensor->flags & kTensorNonContiguous))
        continue;
      groups += check_tensor(m, t["name"], read_f32_file(t["values"]["path"]),
                             file["path"].get<std::string>() + " " + t["name"].get<std::string>());
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(groups, 0u);
}

}   // namespace
}   // namespace akview::test
