// PyTorch checkpoints, zip (torch.save) and legacy pickle streams (FORMATS.md §5), listed without
// executing pickle: a symbolic machine (pickle_vm.hpp) reads data.pkl against an allowlist.
#pragma once

#include <cstdint>
#include <vector>

#include "core/formats/format.hpp"

namespace akview {

Result<Model> open_pytorch_zip(const Probe& probe, const OpenOptions& options);
Result<Model> open_pytorch_legacy(const Probe& probe, const OpenOptions& options);

// Groups of tensor indices that share one storage (tied weights, views): only groups of two or more.
std::vector<std::vector<uint32_t>> torch_shared_storages(const Model& model);

// The strides of tensor `index` (elements; empty for a non-PyTorch model or a 0-d tensor).
std::span<const int64_t> torch_strides(const Model& model, uint32_t index);

// The tensor's elements in row-major order, gathered through its strides (works for the
// kTensorNonContiguous views too); each element keeps its stored bytes.
Result<std::vector<uint8_t>> torch_tensor_bytes(const Model& model, uint32_t index);

}   // namespace akview
