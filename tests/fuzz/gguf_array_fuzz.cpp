// read_gguf_array over every array (and nested array) of a GGUF file that parsed, and a page from
// the middle and the end of each top-level one with read_gguf_array_range (the skipping path).
#include "core/formats/gguf.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace {
void read_all(const akview::Model& model, const akview::MetaEntry& entry, const akview::MetaValue& array, int depth) {
  auto elems = akview::read_gguf_array(model, entry, array, 256);
  if (!elems || depth > 8) return;
  for (const auto& v : *elems)
    if (v.type == akview::MetaType::array) read_all(model, entry, v, depth + 1);
}
}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  akview::Model model;
  if (!akview::add_gguf_file(model, akview::fuzz::write_input("in.gguf", data, size), "model")) return 0;
  for (const auto& entry : model.meta)
    if (entry.value.type == akview::MetaType::array) {
      read_all(model, entry, entry.value, 0);
      const uint64_t n = entry.value.count;
      (void)akview::read_gguf_array_range(model, entry, entry.value, n / 2, 16);
      (void)akview::read_gguf_array_range(model, entry, entry.value, n > 0 ? n - 1 : 0, 16);
    }
  return 0;
}
