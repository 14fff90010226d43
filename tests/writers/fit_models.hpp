// The GGUF models of the `fit` ground truth: one small model per architecture the estimator knows
// (llama with GQA, mixtral-style MoE, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, deepseek2 with
// MLA) plus one of Llama-3-8B's real shapes, each with exactly the tensors and metadata keys
// llama.cpp's loader asks for and a small SentencePiece vocabulary it accepts. Written as sparse
// files (the data is holes), so the 8B-shaped model costs no disk. The same specs make the files
// that tests/fit/record_llama_truth.sh loads with llama.cpp and the ones the tests estimate.
#pragma once

#include <string>
#include <vector>

#include "tests/writers/gguf_writer.hpp"

namespace akview::testing {

struct FitModelSpec {
  std::string name;   // file stem, e.g. "llama-gqa"
  std::string arch;   // general.architecture
  uint32_t n_embd = 256, n_layer = 4, n_head = 4, n_head_kv = 2, head_dim = 64, n_ff = 512;
  uint32_t n_vocab = 320, n_ctx_train = 32768;
  uint32_t weight_type = 1;   // ggml type of the matrices (1: f16); norms are f32
  bool tied_output = false;   // no output.weight: llama.cpp reuses token_embd
  uint32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_expert_shared = 0, n_dense_lead = 0;
  uint32_t sliding_window = 0;   // written as {arch}.attention.sliding_window when non-zero
  uint32_t swa_pattern = 0;      // written as {arch}.attention.sliding_window_pattern when non-zero
  uint32_t q_lora = 0, kv_lora = 0, rope_dim = 0, key_mla = 0, value_mla = 0;   // deepseek2 (MLA)
};

// Every model of the ground-truth set.
std::vector<FitModelSpec> fit_model_specs();
// The GGUF of one spec.
GgufWriter build_fit_model(const FitModelSpec& spec);

}   // namespace akview::testing
