// A SafeTensors file (length prefix, JSON header, data) parsed by add_safetensors_file.
#include "core/formats/safetensors.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  akview::Model model;
  if (akview::add_safetensors_file(model, akview::fuzz::write_input("in.safetensors", data, size), "model"))
    akview::fuzz::decode_first_rows(model);
  return 0;
}
