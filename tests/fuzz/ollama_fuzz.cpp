// An Ollama manifest inside a store whose blobs/ holds the oracle blobs (GGUF and safetensors).
#include "core/formats/ollama.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool copied = (akview::fuzz::copy_oracles("ollama/blobs", "store/blobs"),
                              akview::fuzz::copy_oracles("ollama_st/blobs", "store/blobs"), true);
  (void)copied;
  akview::Probe probe;
  probe.path = akview::fuzz::write_input("store/manifests/registry.ollama.ai/library/m/latest", data, size);
  probe.size = size;
  (void)akview::read_ollama_manifest(probe.path);
  auto model = akview::open_ollama_manifest(probe, {});
  if (model) akview::fuzz::decode_first_rows(*model);
  return 0;
}
