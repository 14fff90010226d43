// read_gguf_array over every array (and nested array) of a GGUF file that parsed.
#include "core/formats/gguf.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace {
void read_all(const akview::Model& model, const akview::MetaEntry& entry, const akview::MetaValue& array, int depth) {
  auto elems = akview::read_gguf_array(model, entry, array, 256);
  if (!elems || depth > 8) return;
  for (const auto& v : *elems)
    if (v.type == akview::MetaType::array) read_all(model, entry, v, depth + 1);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  akview::Model model;
  if (!akview::add_gguf_file(model, akview::fuzz::write_input("in.gguf", data, size), "model")) return 0;
  for (const auto& entry : model.meta)
    if (entry.value.type == akview::MetaType::array) read_all(model, entry, entry.value, 0);
  return 0;
}
