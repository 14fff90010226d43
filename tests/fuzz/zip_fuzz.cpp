// The ZIP central directory of a whole file, then every listed entry's stored bytes.
#include "core/formats/zip_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  auto entries = akview::read_zip_directory(bytes, "fuzz.zip");
  if (!entries) return 0;
  for (const auto& e : *entries) {
    auto stored = akview::zip_entry_bytes(bytes, "fuzz.zip", e);
    if (stored && !stored->empty()) (void)(stored->front() + stored->back());   // touch both ends
  }
  return 0;
}
