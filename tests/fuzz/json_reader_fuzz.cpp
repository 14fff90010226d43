// The JsonReader token stream to its end or first error, skipping every other member value.
#include "core/json_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  (void)akview::find_invalid_utf8(bytes);
  akview::JsonReader reader(bytes, "fuzz.json", 8, size % 2 ? 4 : akview::JsonReader::kDefaultMaxDepth);
  akview::JsonToken tok;
  for (size_t n = 0; n <= size + 1 && reader.next(tok) && tok.kind != akview::JsonKind::end; ++n) {
    if (tok.kind == akview::JsonKind::key && n % 2 && !(reader.next(tok) && reader.skip_value(tok))) break;
  }
  return 0;
}
