// Ollama store fixture writer: see ollama_writer.hpp.
#include "tests/writers/ollama_writer.hpp"

#include <filesystem>
#include <fstream>

#include "core/sha256.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview::testing {

OllamaStoreWriter::OllamaStoreWriter(std::string root) : root_(std::move(root)) {
  std::error_code ec;
  std::filesystem::create_directories(root_ + "/blobs", ec);
}

nlohmann::ordered_json OllamaStoreWriter::put(std::string_view media_type, const std::vector<uint8_t>& bytes,
                                              const std::string& name) {
  const std::string hex = sha256_hex(bytes);
  std::ofstream(root_ + "/blobs/sha256-" + hex, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  nlohmann::ordered_json layer = {{"mediaType", media_type}, {"digest", "sha256:" + hex}, {"size", bytes.size()}};
  if (!name.empty()) layer["name"] = name;
  return layer;
}

nlohmann::ordered_json OllamaStoreWriter::put_text(std::string_view media_type, std::string_view text,
                                                   const std::string& name) {
  return put(media_type, std::vector<uint8_t>(text.begin(), text.end()), name);
}

bool OllamaStoreWriter::write_manifest(const std::string& model, const std::string& tag, nlohmann::ordered_json config,
                                       const nlohmann::ordered_json& layers, const std::string& host,
                                       const std::string& ns) {
  nlohmann::ordered_json diff_ids = nlohmann::ordered_json::array();
  for (const auto& l : layers) diff_ids.push_back(l["digest"]);
  config["rootfs"] = {{"type", "layers"}, {"diff_ids", diff_ids}};
  nlohmann::ordered_json manifest = {
      {"schemaVersion", 2},
      {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
      {"config", put_text("application/vnd.docker.container.image.v1+json", config.dump())},
      {"layers", layers}};
  const std::string dir = root_ + "/manifests/" + host + "/" + ns + "/" + model;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return write_text(dir + "/" + tag, manifest.dump(2));
}

}   // namespace akview::testing
