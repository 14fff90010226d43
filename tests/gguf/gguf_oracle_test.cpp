// Every GGUF file of the oracles (manifest.json, section `gguf`) opens with exactly the
// tensors and metadata the manifest lists: names, types, numpy shapes, absolute offsets, byte
// sizes, every key with its type and value, the data section and the alignment.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/formats/format.hpp"
#include "core/formats/gguf.hpp"
#include "tests/common/oracle_data.hpp"

namespace akview {
namespace {

using nlohmann::json;

// Read while the tests are discovered: a missing manifest lists no files, and the test below names it.
const json& manifest() {
  static const json m = testing::oracle_json_or_empty("manifest.json");
  return m;
}

std::string oracle_path(const std::string& rel) { return std::string(AKVIEW_ORACLES_DIR) + "/" + rel; }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Compares one value (scalar, string or array) with the manifest's JSON for it.
void expect_value(const Model& model, const MetaEntry& entry, const MetaValue& v, const std::string& type,
                  const json& expected, const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_EQ(std::string(meta_type_name(v.type)), type);
  switch (v.type) {
    case MetaType::u8:
    case MetaType::u16:
    case MetaType::u32:
    case MetaType::u64:
      EXPECT_EQ(v.num.u, expected.get<uint64_t>());   // exact, including values above 2^53
      break;
    case MetaType::i8:
    case MetaType::i16:
    case MetaType::i32:
    case MetaType::i64: EXPECT_EQ(v.num.i, expected.get<int64_t>()); break;
    case MetaType::f32:
    case MetaType::f64:
      EXPECT_EQ(v.num.f, expected.get<double>());   // the manifest holds the float widened exactly
      EXPECT_EQ(std::signbit(v.num.f), std::signbit(expected.get<double>()));
      break;
    case MetaType::boolean: EXPECT_EQ(v.num.u != 0, expected.get<bool>()); break;
    case MetaType::string: EXPECT_EQ(std::string(v.str), expected.get<std::string>()); break;
    case MetaType::array: {
      ASSERT_TRUE(expected.is_array());
      ASSERT_EQ(v.count, expected.size());
      auto elems = read_gguf_array(model, entry, v, ~uint64_t{0});
      ASSERT_TRUE(elems.ok()) << elems.error().to_string();
      ASSERT_EQ(elems->size(), expected.size());
      for (size_t i = 0; i < elems->size(); ++i) {
        const MetaValue& e = (*elems)[i];
        expect_value(model, entry, e, std::string(meta_type_name(e.type)), expected[i],
                     where + "[" + std::to_string(i) + "]");
      }
      break;
    }
    default: ADD_FAILURE() << "unexpected type";
  }
}

// The manifest names an array's element type in `subtype` ("INT32", "ARRAY of INT32").
std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

class GgufOracleFile : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufOracleFile, ListsEveryTensorAndKey) {
  const json* file = nullptr;
  for (const auto& f : manifest()["gguf"]["files"])
    if (f["path"] == GetParam()) file = &f;
  ASSERT_NE(file, nullptr);
  auto model = open_model(oracle_path(GetParam()));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  EXPECT_EQ(model->format, "gguf");
  ASSERT_EQ(model->files.size(), 1u);
  EXPECT_EQ(model->files[0].role, "model");

  // Tensors, in file order.
  const json& tensors = (*file)["tensors"];
  ASSERT_EQ(model->tensors.size(), tensors.size());
  ASSERT_EQ(tensors.size(), (*file)["n_tensors"].get<size_t>());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const json& want = tensors[i];
    const Tensor& t = model->tensors[i];
    SCOPED_TRACE(want["name"].get<std::string>());
    EXPECT_EQ(std::string(t.name), want["name"].get<std::string>());
    EXPECT_EQ(std::string(type_info(t.type).name), lower(want["type"].get<std::string>()));
    EXPECT_EQ(type_info(t.type).ggml_id, want["type_id"].get<int>());
    auto shape = model->shape(t);
    EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()), want["shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(t.offset, want["abs_offset"].get<uint64_t>());
    EXPECT_EQ(t.nbytes, want["nbytes"].get<uint64_t>());
    EXPECT_EQ(model->n_elements(t), want["n_elements"].get<uint64_t>());
    EXPECT_EQ(model->data(t).size(), t.nbytes);
    EXPECT_EQ(model->find(t.name), &t);
  }

  // Metadata: every key, no more.
  const json& meta = (*file)["metadata"];
  EXPECT_EQ(model->meta.size(), meta.size());
  EXPECT_EQ(model->meta.size(), (*file)["n_kv"].get<size_t>());
  for (const auto& [key, want] : meta.items()) {
    const MetaEntry* e = model->find_meta(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->source, "gguf");
    EXPECT_EQ(e->file, 0u);
    EXPECT_LT(e->offset, model->files[0].header_bytes);
    const std::string type = want["type"].get<std::string>();
    if (type == "ARRAY") {
      EXPECT_EQ(std::string(meta_type_name(e->value.elem_type)), first_word(want["subtype"]));
    }
    expect_value(*model, *e, e->value, type, want["value"], key);
  }

  // Layout.
  const uint64_t alignment = (*file)["alignment"].get<uint64_t>();
  const MetaEntry* align_key = model->find_meta("general.alignment");
  EXPECT_EQ(align_key ? align_key->value.num.u : 32u, alignment);
  if (file->contains("data_section_offset")) {
    EXPECT_EQ(model->files[0].data_offset, (*file)["data_section_offset"].get<uint64_t>());
    EXPECT_EQ(model->files[0].data_offset % alignment, 0u);
  }
  EXPECT_LE(model->files[0].header_bytes, model->files[0].data_offset);
  EXPECT_EQ(model->files[0].map.size(), (*file)["size"].get<uint64_t>());
}

std::vector<std::string> gguf_oracle_paths() {
  std::vector<std::string> paths;
  if (!manifest().contains("gguf")) return paths;
  for (const auto& f : manifest()["gguf"]["files"]) paths.push_back(f["path"].get<std::string>());
  return paths;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Manifest, GgufOracleFile, ::testing::ValuesIn(gguf_oracle_paths()), test_name);

TEST(GgufOracle, ManifestHasTheFilesTheReadmeDescribes) {
  ASSERT_EQ(testing::oracle_json_problem("manifest.json"), "");
  EXPECT_GE(gguf_oracle_paths().size(), 27u);
}

// kv_nested_array.gguf: test.arr_nested = [[1,2],[3],[]], then test.after_nested = 7, read exactly.
TEST(GgufOracle, NestedArrayThenTheNextKey) {
  auto model = open_model(oracle_path("gguf/kv_nested_array.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const MetaEntry* nested = model->find_meta("test.arr_nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->value.type, MetaType::array);
  EXPECT_EQ(nested->value.elem_type, MetaType::array);
  EXPECT_EQ(nested->value.depth, 1);
  ASSERT_EQ(nested->value.count, 3u);
  auto outer = read_gguf_array(*model, *nested, nested->value, 100);
  ASSERT_TRUE(outer.ok()) << outer.error().to_string();
  const std::vector<std::vector<int64_t>> want = {{1, 2}, {3}, {}};
  ASSERT_EQ(outer->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const MetaValue& inner = (*outer)[i];
    ASSERT_EQ(inner.type, MetaType::array);
    EXPECT_EQ(inner.elem_type, MetaType::i32);
    auto values = read_gguf_array(*model, *nested, inner, 100);
    ASSERT_TRUE(values.ok());
    std::vector<int64_t> got;
    for (const auto& v : *values) got.push_back(v.num.i);
    EXPECT_EQ(got, want[i]);
  }
  const MetaEntry* after = model->find_meta("test.after_nested");
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->value.type, MetaType::u32);
  EXPECT_EQ(after->value.num.u, 7u);
  EXPECT_TRUE(model->tensors.empty());
  // The nested array is flagged (ggml refuses it) without failing the open.
  bool flagged = false;
  for (const auto& n : model->notes) flagged |= n.message.find("array of arrays") != std::string::npos;
  EXPECT_TRUE(flagged);
}

// max_elems caps decoding: a 40-token vocabulary read 5 at a time.
TEST(GgufOracle, ArrayDecodingHonoursTheCap) {
  auto model = open_model(oracle_path("gguf/q4_0.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const MetaEntry* tokens = model->find_meta("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->value.elem_type, MetaType::string);
  auto first = read_gguf_array(*model, *tokens, tokens->value, 5);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 5u);
  EXPECT_EQ((*first)[1].str, "<s>");
}

}   // namespace
}   // namespace akview
