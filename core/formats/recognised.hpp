// Formats akview recognises by content before it can open them (MLX, Ollama, PyTorch):
// detection gives a clear "not supported yet" instead of "unknown file".
#pragma once

#include "core/formats/format.hpp"

namespace akview {

bool sniff_pytorch_zip(const Probe& probe);
bool sniff_pytorch_legacy(const Probe& probe);
bool sniff_ollama_manifest(const Probe& probe);
bool sniff_ollama_store(const Probe& probe);
bool sniff_mlx_dir(const Probe& probe);

}   // namespace akview
