// The architecture table of the `fit` estimate (arch_rules.hpp). The windows and periods are
// llama.cpp's defaults when the GGUF does not carry {arch}.attention.sliding_window(_pattern).
#include "core/fit/arch_rules.hpp"

#include <array>

namespace akview::fit {
namespace {

constexpr std::array kRules = {
    ArchRule{"llama", KvKind::standard, SwaRule::none, 0, 0, "llama and its GQA / mixtral-style MoE variants"},
    ArchRule{"qwen2", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"qwen2moe", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"qwen3", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"qwen3moe", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"gemma", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"gemma2", KvKind::standard, SwaRule::always, 4096, 2,
             "every other layer slides (window 4096 unless the key says)"},
    ArchRule{"gemma3", KvKind::standard, SwaRule::if_window_key, 0, 6,
             "5 of every 6 layers slide when a window is given"},
    ArchRule{"cohere2", KvKind::standard, SwaRule::always, 4096, 4, "3 of every 4 layers slide"},
    ArchRule{"gpt-oss", KvKind::standard, SwaRule::always, 128, 2, "every other layer slides"},
    ArchRule{"olmo2", KvKind::standard, SwaRule::if_window_key, 0, 4,
             "3 of every 4 layers slide when a window is given"},
    ArchRule{"phi3", KvKind::standard, SwaRule::read_ignored, 0, 0,
             "llama.cpp reads phi3's window but caches every layer in full"},
    ArchRule{"deepseek2", KvKind::mla, SwaRule::none, 0, 0,
             "MLA: one compressed K row per token (latent + rope), no V"},
    ArchRule{"granite", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"starcoder2", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"stablelm", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"internlm2", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"command-r", KvKind::standard, SwaRule::none, 0, 0, ""},
    ArchRule{"mistral3", KvKind::standard, SwaRule::none, 0, 0, ""},
};

}   // namespace

const ArchRule* find_arch_rule(std::string_view arch) {
  for (const auto& r : kRules)
    if (r.arch == arch) return &r;
  return nullptr;
}

std::span<const ArchRule> arch_rules() { return kRules; }

}   // namespace akview::fit
