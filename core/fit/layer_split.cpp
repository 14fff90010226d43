// Layer placement (layer_split.hpp). Tensor bytes come from the parsed model, whose sizes the
// parser has already checked against the file, so their sums cannot pass the file's size.
#include "core/fit/layer_split.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace akview::fit {

LayerWeights weights_by_layer(const Model& model, uint32_t n_layer) {
  LayerWeights w;
  w.layer.assign(n_layer, 0);
  for (const Tensor& t : model.tensors) {
    if (t.flags & kTensorCompanion) continue;
    std::string_view name = t.name;
    if (name.starts_with("blk.")) {
      std::string_view rest = name.substr(4);
      uint32_t il = 0;
      auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), il);
      if (ec == std::errc() && end != rest.data() && il < n_layer) {
        w.layer[il] += t.nbytes;
        continue;
      }
    }
    if (name == "output.weight" || name == "output.bias" || name.starts_with("output_norm.")) {
      w.output += t.nbytes;
      if (name == "output.weight") {
        w.output_matrix = t.nbytes;
        w.output_tied = false;
      }
      continue;
    }
    if (name == "token_embd.weight") w.embedding = t.nbytes;
    w.input += t.nbytes;
  }
  return w;
}

std::vector<int> place_layers(uint32_t n_layer, uint32_t gpu_layers, std::span<const double> split) {
  std::vector<int> device(n_layer + 1, -1);
  if (split.empty() || gpu_layers == 0) return device;
  const uint32_t first = n_layer + 1 > gpu_layers ? n_layer + 1 - gpu_layers : 0;
  const uint32_t offloaded = std::min(gpu_layers, n_layer + 1);
  std::vector<float> cumulative;
  float sum = 0;
  for (double s : split) cumulative.push_back(sum += static_cast<float>(s));
  for (float& c : cumulative) c /= sum;
  for (uint32_t il = first; il <= n_layer; ++il) {
    const float at = static_cast<float>(il - first) / static_cast<float>(offloaded);
    const auto gpu = std::upper_bound(cumulative.begin(), cumulative.end(), at) - cumulative.begin();
    device[il] = static_cast<int>(std::min<ptrdiff_t>(gpu, static_cast<ptrdiff_t>(split.size()) - 1));
  }
  return device;
}

}   // namespace akview::fit
