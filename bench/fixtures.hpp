// The large fixtures the open and listing benchmarks share, written sparse (headers only, data
// extended with ftruncate, so they cost no disk): a SafeTensors file of 1,000,000 tensors (~94 MB
// header), a 163-shard SafeTensors set with its index (3,000 tensors a shard), and a GGUF of
// 100,000 tensors with a 32,000-token vocabulary. Each writer runs in a forked child (in_child), so
// the generator's memory never shows in the measured processes' peak RSS.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview::bench {

// Runs `make` in a child; true when it returned true.
template <typename F>
bool in_child(F&& make) {
  const pid_t pid = fork();
  if (pid == 0) _exit(make() ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

inline bool write_million_safetensors(const std::string& path) {
  return in_child([&] {
    std::vector<testing::StTensor> tensors;
    tensors.reserve(1'000'000);
    for (int i = 0; i < 1'000'000; ++i)
      tensors.emplace_back(fmt::format("layers.{}.experts.{}.w1", i / 1000, i % 1000), i % 2 ? "BF16" : "F32",
                           std::vector<int64_t>{8, 8}, std::vector<uint8_t>{}, uint64_t{8} * 8 * (i % 2 ? 2 : 4));
    testing::StWriteOptions sparse;
    sparse.sparse = true;
    return testing::write_safetensors(path, tensors, sparse);
  });
}

// `dir` must exist; the index is dir/model.safetensors.index.json.
inline bool write_sharded_safetensors(const std::string& dir) {
  return in_child([&] {
    std::vector<std::vector<testing::StTensor>> shards(163);
    for (int s = 0; s < 163; ++s)
      for (int i = 0; i < 3000; ++i)
        shards[s].emplace_back(fmt::format("model.layers.{}.block_sparse_moe.experts.{}.w1.weight", s, i), "BF16",
                               std::vector<int64_t>{1024, 512}, std::vector<uint8_t>{}, uint64_t{1024} * 512 * 2);
    testing::StWriteOptions sparse;
    sparse.sparse = true;
    return !testing::write_sharded_safetensors(dir, shards, sparse).empty();
  });
}

constexpr int kGgufTensors = 100000;
constexpr int kGgufVocab = 32000;

// Tensor names and shapes in the style of a large MoE model (blk.N.ffn_*_exps.weight ...).
inline bool write_100k_gguf(const std::string& path) {
  return in_child([&] {
    using namespace akview::testing;
    GgufWriter w;
    w.set("general.architecture", gguf_string("llama"));
    w.set("general.name", gguf_string("akview open benchmark"));
    std::vector<GgufValue> tokens, scores;
    for (int i = 0; i < kGgufVocab; ++i) {
      tokens.push_back(gguf_string("\xe2\x96\x81tok" + std::to_string(i)));
      scores.push_back(gguf_f32(-static_cast<float>(i)));
    }
    w.set("tokenizer.ggml.tokens", gguf_array(kGgufString, tokens));
    w.set("tokenizer.ggml.scores", gguf_array(kGgufF32, scores));
    static const char* kRoles[] = {"attn_q", "attn_k",   "attn_v",    "attn_output", "ffn_gate",
                                   "ffn_up", "ffn_down", "attn_norm", "ffn_norm",    "ffn_gate_inp"};
    for (int i = 0; i < kGgufTensors; ++i) {
      const bool norm = i % 10 == 7 || i % 10 == 8;
      std::string name = "blk." + std::to_string(i / 10) + "." + kRoles[i % 10] + ".weight";
      if (norm) w.add_tensor({name, 0 /*f32*/, {4096}});
      else w.add_tensor({name, 12 /*q4_k*/, {4096, 256}});
    }
    if (w.write(path, /*sparse=*/true)) return true;
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  });
}

}   // namespace akview::bench
