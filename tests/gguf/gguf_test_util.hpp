// Helpers for the GGUF tests: a small valid model to break (TempDir is tests/common/temp_dir.hpp).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview::testing {

// A valid little model: two keys and three tensors of different types.
inline GgufWriter small_model() {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("llama.block_count", gguf_u32(1));
  w.add_tensor({"token_embd.weight", kGgmlQ4_0, {64, 3}});
  w.add_tensor({"blk.0.attn_norm.weight", kGgmlF32, {5}});
  w.add_tensor({"output.weight", kGgmlF16, {4, 2, 3}});
  return w;
}

// Writes `w` to `dir/name` and opens it through format detection.
inline Result<Model> write_and_open(const TempDir& dir, const GgufWriter& w, const std::string& name = "m.gguf") {
  const std::string path = dir.file(name);
  if (!w.write(path)) return make_error(ErrorCode::io, path, kNoOffset, "test could not write the file");
  return open_model(path);
}

}   // namespace akview::testing
