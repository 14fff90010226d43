// Ollama model stores (FORMATS.md §4): the models folder ($OLLAMA_MODELS, else ~/.ollama/models),
// `name:tag` references, manifests -> layers (media types) -> blobs, read offline. GGUF model blobs
// open through add_gguf_file; safetensors tensor blobs (§4.5) become logical composite tensors.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/formats/format.hpp"

namespace akview {

// $OLLAMA_MODELS if set, else $HOME/.ollama/models.
std::string ollama_models_dir();

struct OllamaName {
  std::string host = "registry.ollama.ai";
  std::string ns = "library";
  std::string model;
  std::string tag = "latest";
  std::string display() const;   // "model:tag" for the default host/namespace, else host/ns/model:tag
};
// Parses "[host/][namespace/]model[:tag]" with Ollama's part rules; nullopt when it is not a name.
std::optional<OllamaName> parse_ollama_name(std::string_view text);
// The manifest path of `name` under `root` (whether or not it exists).
std::string ollama_manifest_path(const std::string& root, const OllamaName& name);

struct OllamaLayer {
  std::string media_type;
  std::string digest;   // "sha256:<hex>"
  int64_t size = 0;
  std::string name;        // tensor or file name (optional)
  std::string blob_path;   // <root>/blobs/sha256-<hex>
};
struct OllamaManifest {
  std::string path;
  std::string root;   // the store folder holding manifests/ and blobs/
  OllamaLayer config;
  std::vector<OllamaLayer> layers;
};
Result<OllamaManifest> read_ollama_manifest(const std::string& path);

// Every model in a store (globbing manifests/*/*/*/* as Ollama does): display names and manifest paths.
struct OllamaModelRef {
  std::string display;
  std::string manifest;
};
std::vector<OllamaModelRef> list_ollama_models(const std::string& root);

// A manifest file, or a store folder holding exactly one model.
Result<Model> open_ollama_manifest(const Probe& probe, const OpenOptions& options);
Result<Model> open_ollama_store(const Probe& probe, const OpenOptions& options);
// "name:tag" resolved against the models folder: the manifest path, or nullopt.
std::optional<std::string> resolve_ollama_reference(const std::string& text);

// Verifies every blob of an opened Ollama model against its manifest (size and sha256), on request
// (`akview check`): one Note per problem, empty when all match. Progress in [0,1]; cancel stops early.
std::vector<Note> verify_ollama_blobs(const Model& model, const std::function<void(double)>& progress = {},
                                      const std::atomic<bool>* cancel = nullptr);

}   // namespace akview
