// An estimate of llama.cpp's compute buffer on the CPU backend: what ggml's graph allocator plans
// for the worst-case graph llama.cpp reserves at load (one ubatch of min(n_ctx, n_ubatch) tokens,
// all producing logits, attending over every cell of the cache, flash attention on as its "auto"
// setting picks on the CPU). The allocator reuses memory as tensors die, so the buffer is the f16
// attention mask of each cache (cells x tokens x 2 bytes, alive through the whole graph) plus the
// widest stage's activations per token: the logits, a dense feed-forward, a MoE feed-forward or
// MLA's attention. The per-token terms are the stages' live f32 tensors, matched against what
// llama.cpp allocated for the models of tests/fit (within 1 % there; the test allows 10 %).
#pragma once

#include <cstdint>
#include <string>

namespace akview::fit {

struct ComputeShape {
  uint64_t tokens = 0;       // min(n_ctx, n_ubatch)
  uint64_t mask_cells = 0;   // cells of the full cache, plus those of the sliding-window cache
  uint64_t n_embd = 0;
  uint64_t n_vocab = 0;
  uint64_t dense_ff = 0;    // feed-forward width of the dense layers (0: none)
  uint64_t expert_ff = 0;   // one expert's feed-forward width (0: no experts)
  uint64_t experts_used = 0, shared_experts = 0;
  // MLA (0 when the model has none): heads, compressed KV rank, rope dims, q rank, K head width
  uint64_t mla_heads = 0, kv_lora = 0, rope_dim = 0, q_lora = 0, key_mla = 0;
};

struct ComputeEstimate {
  uint64_t bytes = 0;
  std::string formula;   // the mask and the stage that made the peak, for the figure's source
};

ComputeEstimate estimate_compute_buffer(const ComputeShape& s);

}   // namespace akview::fit
