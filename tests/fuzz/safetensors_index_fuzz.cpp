// A model.safetensors.index.json beside the two oracle shards it may name.
#include "core/formats/safetensors_index.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool copied = (akview::fuzz::copy_oracles("st/sharded_bf16", "st"), true);
  (void)copied;
  auto model =
      akview::open_safetensors_index(akview::fuzz::write_input("st/model.safetensors.index.json", data, size), {});
  if (model) akview::fuzz::decode_first_rows(*model);
  return 0;
}
