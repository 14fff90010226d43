// MLX model directories (FORMATS.md §3.5-3.6): safetensors (single or sharded) plus config.json's
// quantization defaults and per-module overrides; packed weights become logical composite tensors.
#pragma once

#include "core/formats/format.hpp"

namespace akview {

Result<Model> open_mlx_dir(const Probe& probe, const OpenOptions& options);

}   // namespace akview
