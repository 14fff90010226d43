// `akview layout PATH [TENSOR] [--block N]`: which files of the model to lay out, and the block
// report of one tensor. The regions themselves stream from core/layout to the printer.
#include <filesystem>

#include <fmt/format.h>

#include "ui/batch/commands.hpp"

namespace akview {

std::vector<uint32_t> layout_files(const Model& model, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    for (uint32_t i = 0; i < model.files.size(); ++i)
      if (std::filesystem::equivalent(model.files[i].path, path, ec)) return {i};
  }
  std::vector<uint32_t> all(model.files.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

Result<BlockReport> make_block_report(const Model& model, const std::string& tensor, uint64_t block) {
  auto index = find_tensor(model, tensor);
  if (!index) return index.error();
  return describe_block(model, *index, block);
}

}   // namespace akview
