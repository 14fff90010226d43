// A GGUF file parsed by add_gguf_file; a few tensors are then viewed and decoded.
#include "core/formats/gguf.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  akview::Model model;
  if (akview::add_gguf_file(model, akview::fuzz::write_input("in.gguf", data, size), "model"))
    akview::fuzz::decode_first_rows(model);
  return 0;
}
