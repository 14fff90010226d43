// Where llama.cpp puts each layer: the token embedding (input layer) always on the CPU; with -ngl N
// the last N of the n_layer + 1 layers (the repeating layers, then the output layer) go to the GPUs,
// dealt out by the cumulative split fractions (llama.cpp's default split is proportional to each
// GPU's memory): layer il of the offloaded ones goes to the first GPU whose cumulative fraction
// exceeds (il - first offloaded) / offloaded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/model.hpp"

namespace akview::fit {

// The bytes of a GGUF's tensors by the layer llama.cpp gives them.
struct LayerWeights {
  uint64_t input = 0;                          // token_embd and anything not in a block or the output layer
  uint64_t output = 0;                         // output.weight, output_norm, output bias
  std::vector<uint64_t> layer;                 // blk.N.*
  uint64_t embedding = 0, output_matrix = 0;   // token_embd.weight and output.weight alone
  bool output_tied = true;                     // no output.weight
};
LayerWeights weights_by_layer(const Model& model, uint32_t n_layer);

// Device of each of the n_layer + 1 layers (the last is the output layer): -1 for the CPU, else the
// GPU index, for llama.cpp's -ngl `gpu_layers` and a split over the GPUs in proportion to `split`.
std::vector<int> place_layers(uint32_t n_layer, uint32_t gpu_layers, std::span<const double> split);

}   // namespace akview::fit
