// The compute-buffer terms (compute_buffer.hpp), bytes per token of each stage. Sizes come from
// the model's header, so they are bounded (heads <= 2^16, widths <= 2^24, tokens <= 2^32) and the
// products stay far below 2^64; they are still summed in checked arithmetic.
#include "core/fit/compute_buffer.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/checked.hpp"

namespace akview::fit {

ComputeEstimate estimate_compute_buffer(const ComputeShape& s) {
  struct Stage {
    const char* name;
    uint64_t per_token;   // bytes
  };
  const uint64_t f32 = 4;
  std::array<Stage, 4> stages = {{
      // logits and the last hidden state (and its norm)
      {"logits", f32 * s.n_vocab + 6 * s.n_embd + 4},
      // gate, up and their product; the residual stream, the norm and the down projection
      {"dense feed-forward", s.dense_ff ? f32 * (3 * s.dense_ff + 3 * s.n_embd) + 28 : 0},
      // the same for the experts each token uses (and the shared ones)
      {"MoE feed-forward",
       s.expert_ff ? f32 * (3 * s.expert_ff * (s.experts_used + s.shared_experts) + 4 * s.n_embd) + 28 : 0},
      // MLA: the queries with their absorbed latent part, the compressed KV row, the attention output
      {"MLA attention",
       s.mla_heads ? f32 * (2 * s.mla_heads * (s.kv_lora + s.rope_dim) + s.mla_heads * (s.key_mla + s.kv_lora) +
                            (s.kv_lora + s.rope_dim) + s.q_lora + s.n_embd) +
                         28
                   : 0},
  }};
  const Stage& peak = *std::max_element(stages.begin(), stages.end(),
                                        [](const Stage& a, const Stage& b) { return a.per_token < b.per_token; });
  const uint64_t mask = s.mask_cells * s.tokens * 2;
  auto bytes = checked_mul(peak.per_token, s.tokens);
  bytes = bytes ? checked_add(*bytes, mask) : std::nullopt;
  return {bytes.value_or(UINT64_MAX), fmt::format("f16 mask {} cells x {} tokens + {} of {} tokens x {} B",
                                                  s.mask_cells, s.tokens, peak.name, s.tokens, peak.per_token)};
}

}   // namespace akview::fit
