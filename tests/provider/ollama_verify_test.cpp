// Ollama blob verification (check's digests): a store whose model blob is the q4_0 oracle GGUF and
// whose license layer is a 20 MiB blob (hashed through the two-thread copy-and-hash path, as a
// model's big blob is) verifies clean; a byte changed past the 16th MiB is a digest mismatch naming
// that blob, a blob cut short a size mismatch, a missing blob missing_file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/formats/format.hpp"
#include "core/formats/ollama.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/provider/oracle_util.hpp"
#include "tests/writers/ollama_writer.hpp"

namespace akview {
namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(OllamaVerify, LargeBlobsAreHashedWholeAndTheirChangesFound) {
  testing::TempDir dir;
  testing::OllamaStoreWriter store(dir.path());
  std::vector<uint8_t> big((20u << 20) + 7);
  uint32_t x = 7;
  for (auto& b : big) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 23);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  layers.push_back(store.put("application/vnd.ollama.image.model", read_all(test::oracle("gguf/q4_0.gguf"))));
  layers.push_back(store.put("application/vnd.ollama.image.license", big));
  ASSERT_TRUE(store.write_manifest("big", "latest", {{"model_format", "gguf"}}, layers));
  const std::string blob = dir.path() + "/blobs/" + layers[1]["digest"].get<std::string>().replace(6, 1, "-");
  ASSERT_TRUE(std::filesystem::exists(blob)) << blob;

  auto model = open_model(dir.path());
  ASSERT_TRUE(model) << model.error().to_string();
  EXPECT_TRUE(verify_ollama_blobs(*model).empty());

  {
    std::fstream f(blob, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((17 << 20) + 3);
    f.put(static_cast<char>(big[(17 << 20) + 3] ^ 1));
  }
  auto changed = verify_ollama_blobs(*model);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].code, ErrorCode::digest_mismatch);
  EXPECT_EQ(changed[0].file, blob);
  EXPECT_NE(changed[0].message.find("sha256 is"), std::string::npos) << changed[0].message;

  std::filesystem::resize_file(blob, big.size() - 1);
  auto cut = verify_ollama_blobs(*model);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_NE(cut[0].message.find("the manifest says"), std::string::npos) << cut[0].message;

  std::filesystem::remove(blob);
  auto missing = verify_ollama_blobs(*model);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].code, ErrorCode::missing_file);
}

}   // namespace
}   // namespace akview
