// `fit` for SafeTensors / MLX (and other non-GGUF) models: the runtimes that load the stored
// tensors as they are (MLX for an MLX folder, transformers for SafeTensors): the weights at their
// stored dtypes, and a KV cache of every layer's K and V in the model's activation dtype (config
// torch_dtype / dtype; a sliding-window layer named by layer_types holds the window). These
// runtimes grow their buffers as they go, so no compute or output buffer is claimed.
#pragma once

#include "core/fit/fit_estimate.hpp"

namespace akview::fit {

Result<FitEstimate> estimate_stored_runtime(const Model& model, const FitQuery& query);

}   // namespace akview::fit
