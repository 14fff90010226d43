// Ollama store fixture writer (FORMATS.md §4.1-4.4): blobs named by the sha256 of their bytes under
// <root>/blobs, a ConfigV2 config blob, and manifests under <root>/manifests/<host>/<ns>/<model>/<tag>,
// written in the field order Ollama writes (schemaVersion first: sniffers read the first 4 KiB).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace akview::testing {

class OllamaStoreWriter {
 public:
  explicit OllamaStoreWriter(std::string root);   // creates <root>/blobs

  // Stores `bytes` as a blob; returns its manifest layer {mediaType, digest, size[, name]}.
  nlohmann::ordered_json put(std::string_view media_type, const std::vector<uint8_t>& bytes,
                             const std::string& name = {});
  nlohmann::ordered_json put_text(std::string_view media_type, std::string_view text, const std::string& name = {});
  // Stores `config` (ConfigV2 fields; rootfs is added from the layers) as the config blob and writes
  // the manifest of <host>/<ns>/<model>:<tag>. Returns false on an I/O failure.
  bool write_manifest(const std::string& model, const std::string& tag, nlohmann::ordered_json config,
                      const nlohmann::ordered_json& layers, const std::string& host = "registry.ollama.ai",
                      const std::string& ns = "library");
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

}   // namespace akview::testing
