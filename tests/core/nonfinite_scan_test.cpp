// check's NaN/Inf scan (core/nonfinite_scan.hpp): the structural scan counts what decoding every
// value counts, on random blocks of every decodable type with NaN/Inf/huge values planted in the
// float fields the block layout tables name (core/layout/block_fields.hpp, not the scan's own table),
// and a model's report names each tensor at the exact offset of its first offending block or element.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/decode/decode.hpp"
#include "core/formats/format.hpp"
#include "core/layout/block_fields.hpp"
#include "core/nonfinite_scan.hpp"
#include "core/types.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview {
namespace {

// What decoding every value gives: counts, blocks holding one, the first such block's byte offset.
NonFiniteCount decoded_count(TypeId type, const std::vector<uint8_t>& bytes) {
  const TypeInfo& info = type_info(type);
  const size_t blocks = bytes.size() / info.block_bytes;
  TensorView v;
  v.type = type;
  v.n_rows = static_cast<int64_t>(blocks);
  v.n_cols = info.block_elems;
  v.row_bytes = info.block_bytes;
  v.data = bytes;
  std::vector<float> out(blocks * info.block_elems);
  EXPECT_TRUE(decode_rows(v, 0, v.n_rows, out.data()).ok()) << info.name;
  NonFiniteCount c;
  for (size_t b = 0; b < blocks; ++b) {
    uint64_t nan = 0, inf = 0;
    for (size_t k = 0; k < info.block_elems; ++k) {
      nan += std::isnan(out[b * info.block_elems + k]);
      inf += std::isinf(out[b * info.block_elems + k]);
    }
    c.nan += nan, c.inf += inf;
    if (nan + inf) {
      ++c.blocks;
      c.first = std::min<uint64_t>(c.first, b * info.block_bytes);
    }
  }
  return c;
}

void expect_same(const NonFiniteCount& got, const NonFiniteCount& want, const std::string& what) {
  EXPECT_EQ(got.nan, want.nan) << what;
  EXPECT_EQ(got.inf, want.inf) << what;
  EXPECT_EQ(got.blocks, want.blocks) << what;
  EXPECT_EQ(got.first, want.first) << what;
}

// Values planted in a float field of a block: NaN, +/-Inf, the largest finite, and a zero.
void plant(uint8_t* field, FieldDecode decode, uint16_t size, int variant) {
  switch (decode) {
    case FieldDecode::f16: {
      const uint16_t k[] = {0x7E00, 0x7C00, 0xFC00, 0x7BFF, 0x0000, 0xFE01};
      std::memcpy(field, &k[variant % 6], 2);
      break;
    }
    case FieldDecode::f32: {
      const uint32_t k[] = {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0x7F7FFFFFu, 0x72000000u, 0x00000000u};
      std::memcpy(field, &k[variant % 6], 4);
      break;
    }
    case FieldDecode::e8m0_half:
    case FieldDecode::ue4m3_half: {
      const uint8_t k[] = {0xFF, 0xFE, 0xFD, 0x7F, 0xE4, 0x00};
      for (uint16_t i = 0; i < size; ++i) field[i] = k[(variant + i) % 6];
      break;
    }
    case FieldDecode::u16s: {   // IQ1_M: the f16 scale in the top nibbles of four u16
      const uint16_t d = variant % 2 ? 0x7C00 : 0x7E00;
      for (int i = 0; i < 4; ++i) {
        uint16_t w;
        std::memcpy(&w, field + 2 * i, 2);
        w = static_cast<uint16_t>((w & 0x0FFF) | (((d >> (4 * i)) & 0xF) << 12));
        std::memcpy(field + 2 * i, &w, 2);
      }
      break;
    }
    default: break;
  }
}

TEST(NonFiniteScan, EveryBlockTypeCountsWhatDecodingCounts) {
  std::mt19937_64 rng(42);
  int types = 0;
  for (const TypeInfo& info : kTypeTable) {
    if (info.kind != TypeKind::block_quant || !can_decode(info.id)) continue;
    ++types;
    for (int round = 0; round < 8; ++round) {
      const size_t blocks = 97;
      std::vector<uint8_t> bytes(blocks * info.block_bytes);
      for (auto& b : bytes) b = static_cast<uint8_t>(rng());
      if (round > 0)   // round 0: the random bytes alone (f16 scales are NaN/Inf 1 time in 32)
        for (size_t b = 0; b < blocks; ++b) {
          if (rng() % 3) continue;
          for (const BlockField& f : block_fields(info.id))
            if (f.role == FieldRole::scale || f.role == FieldRole::min || f.role == FieldRole::sums ||
                (info.id == TypeId::iq1_m && f.role == FieldRole::sub_scales))
              if (rng() % 2) plant(bytes.data() + b * info.block_bytes + f.offset, f.decode, f.size, int(rng() % 6));
        }
      expect_same(count_nonfinite(info.id, bytes), decoded_count(info.id, bytes),
                  std::string(info.name) + " round " + std::to_string(round));
    }
  }
  EXPECT_GE(types, 26);
}

TEST(NonFiniteScan, PlantedScalesAreFoundInEveryTypeThatCanHoldThem) {
  // One block with its first float field NaN (or, where no NaN exists, its largest exponent) among
  // blocks of 0x37 bytes (small finite scales, non-zero codes): found exactly there, where decoding finds it.
  for (const TypeInfo& info : kTypeTable) {
    if (info.kind != TypeKind::block_quant || !can_decode(info.id)) continue;
    std::vector<uint8_t> bytes(5 * info.block_bytes, 0x37);
    for (const BlockField& f : block_fields(info.id))
      if (f.role == FieldRole::scale || (info.id == TypeId::iq1_m && f.role == FieldRole::sub_scales)) {
        plant(bytes.data() + 3 * info.block_bytes + f.offset, f.decode, f.size, 0);
        break;
      }
    const NonFiniteCount want = decoded_count(info.id, bytes);
    expect_same(count_nonfinite(info.id, bytes), want, std::string(info.name));
    EXPECT_EQ(type_can_be_nonfinite(info.id), want.any()) << info.name;
    if (want.any()) {
      EXPECT_EQ(want.first, 3 * info.block_bytes) << info.name;
    }
  }
}

TEST(NonFiniteScan, ElementTypesCountWhatDecodingCounts) {
  std::mt19937_64 rng(7);
  for (const TypeInfo& info : kTypeTable) {
    if (info.kind != TypeKind::floating || !can_decode(info.id) || info.id == TypeId::f64) continue;
    std::vector<uint8_t> bytes(4096 * info.block_bytes);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    expect_same(count_nonfinite(info.id, bytes), decoded_count(info.id, bytes), std::string(info.name));
  }
  // f64: the stored values (decoding narrows to f32, where a finite 1e300 would read as Inf).
  std::vector<double> d = {1.0, NAN, 1e300, -INFINITY, 0.0, INFINITY};
  std::vector<uint8_t> bytes(d.size() * 8);
  std::memcpy(bytes.data(), d.data(), bytes.size());
  const NonFiniteCount c = count_nonfinite(TypeId::f64, bytes);
  EXPECT_EQ(c.nan, 1u);
  EXPECT_EQ(c.inf, 2u);
  EXPECT_EQ(c.first, 8u);
}

// A GGUF with clean tensors and planted NaN/Inf in f32, f16, bf16 elements and q4_K/q8_0/q6_K scales.
struct Planted {
  std::string name;
  uint32_t type;
  std::vector<int64_t> ne;
  std::vector<size_t> at;   // byte offsets (within the tensor's data) where a value is planted
  std::vector<uint8_t> value;
};

TEST(NonFiniteScan, ModelReportNamesEachTensorAtItsFirstOffendingOffset) {
  testing::TempDir dir;
  const std::string path = dir.file("planted.gguf");
  const uint16_t kNanF16 = 0x7E00, kInfF16 = 0x7C00;
  const float kNan = NAN, kInf = INFINITY;
  auto bytes_of = [](const auto& v) {
    std::vector<uint8_t> b(sizeof v);
    std::memcpy(b.data(), &v, sizeof v);
    return b;
  };
  const std::vector<Planted> planted = {
      {"clean.f32", 0, {256, 4}, {}, {}},
      {"nan.f32", 0, {256, 4}, {4 * 300, 4 * 301, 4 * 1000}, bytes_of(kNan)},
      {"inf.f16", 1, {512, 2}, {2 * 700}, bytes_of(kInfF16)},
      {"nan.bf16", 30, {256, 2}, {2 * 5}, {0xC0, 0x7F}},
      {"scale.q4_k", 12, {256, 64}, {144 * 40 + 2, 144 * 50}, bytes_of(kNanF16)},   // dmin, then d
      {"scale.q8_0", 8, {64, 64}, {34 * 77}, bytes_of(kInfF16)},
      {"scale.q6_k", 14, {256, 8}, {210 * 3 + 208}, bytes_of(kNanF16)},
      {"clean.q4_k", 12, {256, 64}, {}, {}},
      {"inf.f32", 0, {16}, {4 * 15}, bytes_of(kInf)},
  };
  testing::GgufWriter w;
  w.set("general.architecture", testing::gguf_string("llama"));
  for (const Planted& p : planted) {
    testing::GgufTensorSpec spec(p.name, p.type, p.ne);
    std::vector<uint8_t> data(testing::GgufWriter::tensor_bytes(spec));
    std::mt19937 rng(3);
    const TypeInfo& info = type_info(*type_from_ggml(static_cast<int>(p.type)));
    if (info.kind == TypeKind::block_quant)   // random codes, finite f16 scales 0x1000-0x13ff in every half-word
      for (size_t i = 0; i + 1 < data.size(); i += 2) data[i] = uint8_t(rng()), data[i + 1] = 0x10 + rng() % 4;
    else if (p.type == 0)
      for (size_t i = 0; i + 4 <= data.size(); i += 4) {
        const float f = float(rng() % 1000) * 1e-3f;
        std::memcpy(&data[i], &f, 4);
      }
    else
      for (size_t i = 0; i + 1 < data.size(); i += 2) data[i] = uint8_t(rng()), data[i + 1] = 0x3c;
    for (size_t at : p.at) std::memcpy(&data[at], p.value.data(), p.value.size());
    spec.data = std::move(data);
    w.add_tensor(std::move(spec));
  }
  ASSERT_TRUE(w.write(path));
  const uint64_t data_start = w.header().size();
  const auto offsets = w.data_offsets();
  auto model = open_model(path);
  ASSERT_TRUE(model) << model.error().to_string();
  for (int threads : {1, 2, 3})
    for (size_t chunk : {size_t{256} << 10, size_t{1000}}) {   // chunk boundaries inside the tensors
      NonFiniteScanOptions o;
      o.threads = threads;
      o.chunk_bytes = chunk;
      const std::vector<ValueProblem> notes = scan_nonfinite(*model, o);
      ASSERT_EQ(notes.size(), 7u) << threads << " " << chunk;
      const std::pair<size_t, std::string> want[] = {
          {1, "tensor 'nan.f32' (f32): 3 NaN values of 1024 (the first is here)"},
          {2, "tensor 'inf.f16' (f16): 1 Inf value of 1024 (the first is here)"},
          {3, "tensor 'nan.bf16' (bf16): 1 NaN value of 512 (the first is here)"},
          {4,
           "tensor 'scale.q4_k' (q4_k): 512 NaN values in 2 of 64 blocks: a block's scale is NaN, Inf or overflows "
           "(the first such block is here)"},
          {
              5,
              "tensor 'scale.q8_0' (q8_0): ",
          },
          {6,
           "tensor 'scale.q6_k' (q6_k): 256 NaN values in 1 of 8 blocks: a block's scale is NaN, Inf or overflows "
           "(the first such block is here)"},
          {8, "tensor 'inf.f32' (f32): 1 Inf value of 16 (the first is here)"},
      };
      for (size_t k = 0; k < notes.size(); ++k) {
        const auto& [tensor, text] = want[k];
        const Planted& p = planted[tensor];
        const uint64_t first = p.type == 12 || p.type == 14 || p.type == 8
                                   ? p.at.front() / type_info(*type_from_ggml(int(p.type))).block_bytes *
                                         type_info(*type_from_ggml(int(p.type))).block_bytes
                                   : p.at.front();
        EXPECT_FALSE(notes[k].error.has_value());
        EXPECT_EQ(notes[k].tensor, tensor);
        EXPECT_EQ(notes[k].file, path);
        EXPECT_EQ(notes[k].offset, data_start + offsets[tensor] + first) << p.name;
        EXPECT_EQ(notes[k].message.rfind(text, 0), 0u) << notes[k].message;
      }
    }
}

// MLX affine (4-bit, groups of 64, f16 scales): a NaN scale makes its group's 64 values NaN; the
// problem names the logical tensor at the scale's own offset in the file.
TEST(NonFiniteScan, CompositeScalesAreScannedAndTheirGroupsCounted) {
  testing::TempDir dir;
  const std::string src = std::string(AKVIEW_ORACLES_DIR) + "/st/mlx_q4_g64_f16";
  for (const char* f : {"model.safetensors", "config.json"}) std::filesystem::copy_file(src + "/" + f, dir.file(f));
  uint32_t logical = kNone, scales = kNone;
  uint64_t scale_at = 0;
  {
    auto model = open_model(dir.path());
    ASSERT_TRUE(model) << model.error().to_string();
    EXPECT_TRUE(scan_nonfinite(*model).empty());
    for (uint32_t i = 0; i < model->tensors.size() && logical == kNone; ++i)
      if (model->tensors[i].quant != kNone) logical = i, scales = model->quants[model->tensors[i].quant].scales;
    ASSERT_NE(scales, kNone);
    scale_at = model->tensors[scales].offset + 2 * 5;   // row 0 (or 1), group 5
  }
  {
    std::fstream f(dir.file("model.safetensors"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(scale_at));
    const uint8_t nan_f16[2] = {0x00, 0x7E};
    f.write(reinterpret_cast<const char*>(nan_f16), 2);
  }
  auto model = open_model(dir.path());
  ASSERT_TRUE(model) << model.error().to_string();
  const auto problems = scan_nonfinite(*model);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].tensor, logical);
  EXPECT_EQ(problems[0].offset, scale_at);
  EXPECT_EQ(problems[0].file, model->files[model->tensors[scales].file].path);
  EXPECT_EQ(problems[0].count.nan, 64u);
  EXPECT_EQ(problems[0].count.inf, 0u);
  EXPECT_EQ(problems[0].count.blocks, 1u);   // one row decoded to NaN
}

}   // namespace
}   // namespace akview
