// fit_probe: loads a GGUF with llama.cpp (CPU only) the way llama-cli does and prints, as one line
// of key=value pairs, the bytes of every buffer llama.cpp allocated: the model's weights per buffer
// type, the KV cache (K and V apart, full and sliding-window caches apart), the compute buffer and
// the output buffer. The figures come from llama.cpp's own objects, not from its MiB log lines
// (those are rounded), which is why llama.cpp's internal headers are included with their private
// members opened: this program only reads them.
//
// usage: fit_probe MODEL.gguf N_CTX N_BATCH N_UBATCH TYPE_K TYPE_V FLASH(auto|on|off) SWA_FULL(0|1)
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#define private public
#define protected public
#include "llama-context.h"
#include "llama-kv-cache-iswa.h"
#include "llama-kv-cache.h"
#include "llama-model.h"
#undef private
#undef protected
#include "llama.h"

namespace {

lm_ggml_type type_named(const char* name) {
  for (int t = 0; t < LM_GGML_TYPE_COUNT; ++t) {
    const char* n = lm_ggml_type_name(static_cast<lm_ggml_type>(t));
    if (n && std::strcmp(n, name) == 0) return static_cast<lm_ggml_type>(t);
  }
  std::fprintf(stderr, "fit_probe: unknown type %s\n", name);
  std::exit(2);
}

void quiet_log(lm_ggml_log_level level, const char* text, void*) {
  if (level == LM_GGML_LOG_LEVEL_ERROR || level == LM_GGML_LOG_LEVEL_WARN) std::fputs(text, stderr);
}

void print_cache(const char* tag, const llama_kv_cache* kv) {
  if (!kv) return;
  size_t buffer = 0;
  for (const auto& [buft, size] : kv->memory_breakdown()) buffer += size;
  std::printf(" %s_cells=%u %s_layers=%zu %s_k=%zu %s_v=%zu %s_buffer=%zu", tag, kv->get_size(), tag, kv->layers.size(),
              tag, kv->size_k_bytes(), tag, kv->size_v_bytes(), tag, buffer);
}

}   // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr, "usage: fit_probe MODEL N_CTX N_BATCH N_UBATCH TYPE_K TYPE_V auto|on|off SWA_FULL\n");
    return 2;
  }
  llama_log_set(quiet_log, nullptr);
  llama_backend_init();

  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) {
    std::fprintf(stderr, "fit_probe: llama.cpp could not load %s\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
  cp.n_batch = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
  cp.n_ubatch = static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10));
  cp.type_k = type_named(argv[5]);
  cp.type_v = type_named(argv[6]);
  cp.flash_attn_type = std::strcmp(argv[7], "on") == 0    ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                       : std::strcmp(argv[7], "off") == 0 ? LLAMA_FLASH_ATTN_TYPE_DISABLED
                                                          : LLAMA_FLASH_ATTN_TYPE_AUTO;
  cp.swa_full = std::atoi(argv[8]) != 0;
  cp.n_threads = cp.n_threads_batch = 1;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    std::fprintf(stderr, "fit_probe: llama.cpp could not make a context for %s\n", argv[1]);
    return 1;
  }

  std::printf("n_ctx=%u n_batch=%u n_ubatch=%u flash_attn=%d", ctx->cparams.n_ctx, ctx->cparams.n_batch,
              ctx->cparams.n_ubatch, ctx->cparams.flash_attn ? 1 : 0);
  for (const auto& [buft, size] : model->memory_breakdown())
    std::printf(" weights_%s=%zu", lm_ggml_backend_buft_name(buft), size);
  size_t context = 0, compute = 0;
  for (const auto& [buft, mb] : ctx->memory_breakdown()) {
    context += mb.context;
    compute += mb.compute;
  }
  std::printf(" kv_total=%zu compute=%zu output=%zu", context, compute,
              ctx->buf_output ? lm_ggml_backend_buffer_get_size(ctx->buf_output.get()) : size_t{0});
  llama_memory_i* mem = ctx->memory.get();
  if (auto* iswa = dynamic_cast<llama_kv_cache_iswa*>(mem)) {
    print_cache("full", iswa->get_base());
    print_cache("swa", iswa->get_swa());
  } else if (auto* kv = dynamic_cast<llama_kv_cache*>(mem)) {
    print_cache("full", kv);
  }
  std::printf("\n");
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
