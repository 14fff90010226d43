// Whether a path names something the interactive view can open, decided before curses starts: a
// path with nothing to open is one line on stderr and exit 1, like any batch command, never a
// full-screen error. Cheap: the path is probed and sniffed, nothing is parsed.
#pragma once

#include <string>

#include "core/result.hpp"

namespace akview {

// OK for a file or folder some format recognises, a folder of models (the model list), an Ollama
// `name:tag` and a remote address (scheme://…, resolved by the open itself). Otherwise the error
// open_model gives for the path (no such file, an empty folder, not a weight file). A file that is
// recognised but broken passes: the view shows its error and its bytes.
Status check_path_to_view(const std::string& path);

}   // namespace akview
