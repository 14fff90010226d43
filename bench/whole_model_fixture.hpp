// The whole-model benchmark's fixture: a GGUF shaped like an 8 B-parameter Q4_K_M model, Llama-3-8B's
// 291 tensors and shapes (32 layers, 4096 wide, FFN 14336, 8 KV heads of 128, 128256-token
// vocabulary), Q4_K with Q6_K for output.weight and for attn_v / ffn_down of the layers llama.cpp's
// Q4_K_M gives more bits, f32 norms; blocks of random codes and scales with finite f16 scales in
// [2^-10, 2^-6). 4.92 GB, 8.03 G weights, streamed to disk 32 MiB at a time (written once, kept).
// Another seed gives a second model of the same shape and types whose every block differs (diff's
// case of two different models: no chunk is equal on both sides).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/writers/gguf_writer.hpp"

namespace akview::bench {

constexpr uint32_t kF32 = 0, kQ4K = 12, kQ6K = 14;
constexpr int kLayers = 32;
constexpr int64_t kEmbed = 4096, kKv = 1024, kFfn = 14336, kVocab = 128256;

// llama.cpp's Q4_K_M: attn_v and ffn_down get Q6_K in the first and last eighth of the layers and
// every third layer between.
inline bool more_bits(int layer) {
  return layer < kLayers / 8 || layer >= 7 * kLayers / 8 || (layer - kLayers / 8) % 3 == 2;
}

inline std::vector<akview::testing::GgufTensorSpec> fixture_tensors() {
  using akview::testing::GgufTensorSpec;
  std::vector<GgufTensorSpec> t;
  t.emplace_back("token_embd.weight", kQ4K, std::vector<int64_t>{kEmbed, kVocab});
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.emplace_back(p + "attn_norm.weight", kF32, std::vector<int64_t>{kEmbed});
    t.emplace_back(p + "attn_q.weight", kQ4K, std::vector<int64_t>{kEmbed, kEmbed});
    t.emplace_back(p + "attn_k.weight", kQ4K, std::vector<int64_t>{kEmbed, kKv});
    t.emplace_back(p + "attn_v.weight", more_bits(l) ? kQ6K : kQ4K, std::vector<int64_t>{kEmbed, kKv});
    t.emplace_back(p + "attn_output.weight", kQ4K, std::vector<int64_t>{kEmbed, kEmbed});
    t.emplace_back(p + "ffn_norm.weight", kF32, std::vector<int64_t>{kEmbed});
    t.emplace_back(p + "ffn_gate.weight", kQ4K, std::vector<int64_t>{kEmbed, kFfn});
    t.emplace_back(p + "ffn_up.weight", kQ4K, std::vector<int64_t>{kEmbed, kFfn});
    t.emplace_back(p + "ffn_down.weight", more_bits(l) ? kQ6K : kQ4K, std::vector<int64_t>{kFfn, kEmbed});
  }
  t.emplace_back("output_norm.weight", kF32, std::vector<int64_t>{kEmbed});
  t.emplace_back("output.weight", kQ6K, std::vector<int64_t>{kEmbed, kVocab});
  return t;
}

struct Rng {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

// A positive f16 in [2^-10, 2^-6): a plausible block scale.
inline uint16_t scale_f16(Rng& r) {
  const uint64_t x = r.next();
  return static_cast<uint16_t>(((5 + x % 4) << 10) | ((x >> 8) & 0x3ff));
}

// `n` bytes of one tensor's data: random blocks with their f16 scales made finite.
inline void fill(uint32_t type, uint8_t* p, size_t n, Rng& r) {
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t x = r.next();
    std::memcpy(p + i, &x, 8);
  }
  if (type == kF32)
    for (size_t i = 0; i + 4 <= n; i += 4) {
      const float f = 1.0f + static_cast<float>(static_cast<int64_t>(r.next() % 2001) - 1000) * 1e-4f;
      std::memcpy(p + i, &f, 4);
    }
  if (type == kQ4K)   // d, dmin first
    for (size_t b = 0; b + 144 <= n; b += 144) {
      const uint16_t d = scale_f16(r), dmin = scale_f16(r);
      std::memcpy(p + b, &d, 2);
      std::memcpy(p + b + 2, &dmin, 2);
    }
  if (type == kQ6K)   // d last
    for (size_t b = 0; b + 210 <= n; b += 210) {
      const uint16_t d = scale_f16(r);
      std::memcpy(p + b + 208, &d, 2);
    }
}

constexpr uint64_t kFixtureSeed = 0x9e3779b97f4a7c15ull, kSecondFixtureSeed = 0x2545f4914f6cdd1dull;

inline bool write_llama8b_q4km(const std::string& path, uint64_t seed = kFixtureSeed) {
  akview::testing::GgufWriter w;
  w.set("general.architecture", akview::testing::gguf_string("llama"));
  w.set("general.name", akview::testing::gguf_string("akview whole-model benchmark (8B Q4_K_M shapes, random blocks)"));
  w.set("llama.block_count", akview::testing::gguf_u32(kLayers));
  w.set("llama.embedding_length", akview::testing::gguf_u32(kEmbed));
  w.set("llama.feed_forward_length", akview::testing::gguf_u32(kFfn));
  w.set("llama.attention.head_count", akview::testing::gguf_u32(32));
  w.set("llama.attention.head_count_kv", akview::testing::gguf_u32(8));
  w.set("general.file_type", akview::testing::gguf_u32(15));   // MOSTLY_Q4_K_M
  for (auto& t : fixture_tensors()) w.add_tensor(std::move(t));
  const std::string tmp = path + ".part";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return false;
  const std::vector<uint8_t> header = w.header();
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  const auto offsets = w.data_offsets();
  uint64_t at = 0;
  Rng rng{seed};
  std::vector<uint8_t> buf(size_t{32} << 20);
  for (size_t i = 0; i < w.tensors().size() && ok; ++i) {
    const auto& t = w.tensors()[i];
    std::vector<uint8_t> pad(offsets[i] - at, 0);
    ok = std::fwrite(pad.data(), 1, pad.size(), f) == pad.size();
    at = offsets[i];
    const size_t block = t.ggml_type == kF32 ? 4 : t.ggml_type == kQ4K ? 144 : 210;
    const size_t step = buf.size() / block * block;
    uint64_t left = akview::testing::GgufWriter::tensor_bytes(t);
    at += left;
    while (left > 0 && ok) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, step));
      fill(t.ggml_type, buf.data(), n, rng);
      ok = std::fwrite(buf.data(), 1, n, f) == n;
      left -= n;
    }
  }
  ok = std::fclose(f) == 0 && ok;
  if (ok) std::filesystem::rename(tmp, path);
  return ok;
}

}   // namespace akview::bench
