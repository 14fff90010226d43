// "Will it fit": the memory a model needs to run at a given context, from its header alone.
// For a GGUF, the buffers llama.cpp allocates when it loads the model and makes a context: the
// weights per device (token embedding on the CPU, the output layer where llama.cpp's layer split
// puts it), the KV cache per layer (full or sliding-window, K and V row widths, the cache type),
// the compute buffer (estimated) and the output buffer. For SafeTensors / MLX, the same for the
// runtimes that load the stored tensors as they are. Every figure names where it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/result.hpp"
#include "core/types.hpp"

namespace akview::fit {

struct FitQuery {
  uint64_t context = 0;           // tokens; 0: the model's trained context
  uint32_t batch = 2048;          // llama.cpp's n_batch (llama-cli's default)
  uint32_t ubatch = 512;          // llama.cpp's n_ubatch
  TypeId kv_type = TypeId::f16;   // --cache-type-k / -v
  std::vector<double> gpu_gib;    // --gpu-mem: memory of each GPU in GiB (empty: CPU only)
};

// One layer's KV cache.
struct KvLayer {
  uint32_t layer = 0;
  bool sliding = false;
  uint32_t cells = 0;   // tokens it holds (the context, or the window + ubatch, padded)
  uint32_t kv_heads = 0;
  uint32_t k_head_dim = 0, v_head_dim = 0;   // v_head_dim 0: no V (MLA)
  uint64_t k_bytes = 0, v_bytes = 0;
  int device = -1;   // -1: CPU, else the GPU index
};

// A figure with the key, field or tensor it came from.
struct Figure {
  uint64_t bytes = 0;
  std::string source;
};

// What one device holds.
struct DeviceShare {
  std::string name;            // "CPU", "GPU0", ...
  uint32_t layers = 0;         // repeating layers placed here
  bool output_layer = false;   // output.weight (and output_norm) here
  bool input_layer = false;    // token_embd here (always the CPU in llama.cpp)
  uint64_t weights = 0, kv = 0, compute = 0, output = 0;
  uint64_t capacity = 0;   // --gpu-mem, bytes (0 for the CPU)
  uint64_t total() const { return weights + kv + compute + output; }
};

struct FitEstimate {
  std::string path;
  std::string runtime;   // "llama.cpp (CPU backend)", "MLX / transformers (stored dtypes)"
  std::string arch, arch_source;
  bool arch_known = false;   // a row of arch_rules() (KV cache modelled)
  std::string arch_note;
  uint64_t context = 0;   // as asked (trained when 0 was asked)
  std::string context_source;
  uint64_t trained_context = 0;
  uint32_t cells = 0;   // llama.cpp's n_ctx: the context padded to 256
  TypeId kv_type = TypeId::f16;
  uint32_t batch = 0, ubatch = 0;

  Figure weights;                   // every tensor the runtime loads
  Figure embedding, output_layer;   // the token embedding and the output projection (0 when tied)
  bool output_tied = false;         // no output.weight: llama.cpp reuses token_embd
  std::optional<Figure> kv;         // KV cache buffer (nullopt: could not be made, see `missing`)
  uint64_t k_bytes = 0, v_bytes = 0;
  std::vector<KvLayer> kv_layers;
  std::string kv_source;   // the keys the per-layer rows came from
  uint32_t window = 0;     // sliding window (0: none)
  std::string window_source;
  std::optional<Figure> compute;      // estimated compute buffer
  std::optional<Figure> output;       // logits buffer
  uint64_t total = 0;                 // sum of the figures made
  std::vector<std::string> missing;   // figures it could not make, each naming the key it needs
  std::vector<DeviceShare> devices;   // CPU first, then GPU0.. (only the CPU without --gpu-mem)
  uint32_t gpu_layers = 0;            // llama.cpp's -ngl that the split found (with --gpu-mem)
};

// The estimate for `model` at `query`. Hostile metadata (a context past 2^32 - 1 tokens, zero
// heads, a byte count past 2^64) is an error naming the key; a missing key or an architecture the
// estimate does not model leaves that figure out and says so in `missing`.
Result<FitEstimate> estimate_fit(const Model& model, const FitQuery& query);

// The contexts of the table: 4k, 8k, 32k, 128k and the trained maximum, those up to the trained
// maximum (and the maximum itself), ascending.
std::vector<uint64_t> table_contexts(uint64_t trained_context);

// One row of the table over contexts: the estimate's totals at that context.
struct FitTableRow {
  uint64_t context = 0;
  uint32_t cells = 0;
  std::optional<uint64_t> kv, compute;
  uint64_t total = 0;
  uint32_t gpu_layers = 0;
};

// The estimate at each of table_contexts (of the trained context, else the one asked), for `query`
// otherwise; `at_query` (estimate_fit's answer to `query`) serves the row of its own context.
Result<std::vector<FitTableRow>> fit_table(const Model& model, const FitQuery& query, const FitEstimate& at_query);

}   // namespace akview::fit
