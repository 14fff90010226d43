// MLX directories (FORMATS.md §3.5): `quantization` (or `quantization_config`) holds the defaults
// {group_size, bits, mode} and module-path overrides (a dict, or false). Presence of `<path>.scales`
// is the ground truth for "quantized"; the config only says how (§3.5 loader rule).
#include "core/formats/mlx.hpp"

#include <array>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/formats/composite.hpp"
#include "core/formats/safetensors.hpp"

namespace akview {
namespace {

struct ModeName {
  std::string_view name;
  TypeId type;
  uint8_t default_bits;
  uint32_t default_group;
};
// §3.1 modes with mlx's defaults (_defaults_for_mode).
constexpr std::array kModeNames = {
    ModeName{"affine", TypeId::mlx_affine, 4, 64},
    ModeName{"mxfp4", TypeId::mlx_mxfp4, 4, 32},
    ModeName{"nvfp4", TypeId::mlx_nvfp4, 4, 16},
    ModeName{"mxfp8", TypeId::mlx_mxfp8, 8, 32},
};

struct QuantParams {
  bool quantized = true;
  const ModeName* mode = &kModeNames[0];
  int64_t bits = 4;
  int64_t group_size = 64;
};

const ModeName* find_mode(std::string_view name) {
  for (const auto& m : kModeNames)
    if (m.name == name) return &m;
  return nullptr;
}

// Reads {bits, group_size, mode} from `o` over `p`; a schema error at `config_path` says what is malformed.
Status read_params(const nlohmann::json& o, QuantParams& p, const std::string& config_path) {
  auto malformed = [&](std::string why) {
    return make_error(ErrorCode::schema, config_path, kNoOffset, std::move(why));
  };
  if (o.contains("mode")) {
    if (!o["mode"].is_string() || !(p.mode = find_mode(o["mode"].get<std::string>())))
      return malformed(fmt::format("unknown quantization mode {}", o["mode"].dump()));
    if (!o.contains("bits")) p.bits = p.mode->default_bits;
    if (!o.contains("group_size")) p.group_size = p.mode->default_group;
  }
  if (o.contains("bits")) {
    if (!o["bits"].is_number_integer()) return malformed("bits is not an integer");
    p.bits = o["bits"].get<int64_t>();
  }
  if (o.contains("group_size")) {
    if (!o["group_size"].is_number_integer()) return malformed("group_size is not an integer");
    p.group_size = o["group_size"].get<int64_t>();
  }
  return {};
}

}   // namespace

Result<Model> open_mlx_dir(const Probe& probe, const OpenOptions& options) {
  auto opened = open_safetensors_dir(probe, options);
  if (!opened) return std::move(opened).error();
  Model model = std::move(*opened);
  model.format = "mlx";
  const std::string config_path = probe.path + "/config.json";
  auto map = MappedFile::open(config_path);
  if (!map) return std::move(map).error();
  auto text = map->bytes();
  nlohmann::json config = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  model.files.push_back(SourceFile{config_path, std::move(*map), "config", 0, 0});
  if (config.is_discarded() || !config.is_object())
    return make_error(ErrorCode::bad_json, config_path, kNoOffset, "config.json is not a valid JSON object");

  const nlohmann::json* quant = nullptr;
  for (const char* k : {"quantization", "quantization_config"})
    if (!quant && config.contains(k) && config[k].is_object()) quant = &config[k];
  QuantParams defaults;
  if (quant) {
    // Foreign configs mlx-lm translates on load (§3.5): quant_method mxfp4 -> (32, 4, mxfp4).
    if (quant->contains("quant_method") && (*quant)["quant_method"] == "mxfp4")
      defaults = {true, find_mode("mxfp4"), 4, 32};
    if (Status read = read_params(*quant, defaults, config_path); !read)
      return make_error(ErrorCode::schema, config_path, kNoOffset, "quantization: " + read.error().message);
  }

  const size_t n = model.tensors.size();
  std::unordered_map<std::string_view, uint32_t> by_name;
  for (uint32_t i = 0; i < n; ++i) by_name.emplace(model.tensors[i].name, i);
  auto find = [&](const std::string& name) {
    auto it = by_name.find(name);
    return it == by_name.end() ? kNone : it->second;
  };
  constexpr std::string_view kWeight = ".weight";
  for (uint32_t i = 0; i < n; ++i) {
    const std::string_view name = model.tensors[i].name;
    if (name.size() <= kWeight.size() || name.substr(name.size() - kWeight.size()) != kWeight) continue;
    const std::string path(name.substr(0, name.size() - kWeight.size()));
    const uint32_t scales = find(path + ".scales");
    if (scales == kNone) continue;   // not quantized
    QuantParams p = defaults;
    if (quant && quant->contains(path)) {
      const auto& o = (*quant)[path];
      if (o.is_boolean() && !o.get<bool>()) {
        mark_unsupported(model, i, "has scales, but config.json says the module is not quantized");
        continue;
      }
      if (Status read = o.is_object() ? read_params(o, p, config_path) : Status(); !read) {
        mark_unsupported(model, i, "quantization override: " + read.error().message);
        continue;
      }
    }
    if (p.bits <= 0 || p.bits > 8 || p.group_size <= 0 || p.group_size > (1 << 20)) {
      mark_unsupported(model, i,
                       fmt::format("{} bits with group size {} is not an MLX quantization", p.bits, p.group_size));
      continue;
    }
    CompositeSpec spec;
    spec.weight = i;
    spec.scales = scales;
    spec.biases = find(path + ".biases");
    spec.type = p.mode->type;
    spec.bits = static_cast<uint8_t>(p.bits);
    spec.group_size = static_cast<uint32_t>(p.group_size);
    if (Status made = make_composite(model, spec); !made) mark_unsupported(model, i, made.error().message);
  }
  order_companions(model);
  return model;
}

}   // namespace akview
