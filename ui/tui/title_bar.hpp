// The title bar of an opened model: what the model is first (the Ollama `name:tag`, the Hugging Face
// repository, else the file or folder name), then its tensors, parameters and type mix, its format
// and size, and the path last, shortened to the room that is left.
#pragma once

#include <string>
#include <utility>

#include "core/model.hpp"
#include "ui/tui/session.hpp"

namespace akview::tui {

// "llama3.2:1b", "org/name", "model.gguf", "folder".
std::string model_identity(const Model& model);
// "q4_k 71% q6_k 23% …": the types holding the most bytes.
std::string type_mix(const InfoReport& info);
// The whole title for a bar `width` columns wide (it starts with a space, as the bar's other titles do);
// `size_columns`, when given, receives the columns [first, last) of the model's size in it (a click
// there opens the Fit pane).
std::string model_title(const ModelSession& session, int width, std::pair<int, int>* size_columns = nullptr);

}   // namespace akview::tui
