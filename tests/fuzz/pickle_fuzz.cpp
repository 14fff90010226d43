// The pickle machine in all three persistent-id modes, over a stream of consecutive pickles
// (as legacy checkpoints hold) or, for a zip, over each stored *.pkl record.
#include "core/formats/pickle_vm.hpp"
#include "core/formats/zip_reader.hpp"

namespace {
void run_stream(std::span<const uint8_t> bytes, uint64_t base) {
  for (auto pids :
       {akview::PersistentIds::zip_5_tuple, akview::PersistentIds::legacy_6_tuple, akview::PersistentIds::refuse}) {
    uint64_t at = 0;
    for (int n = 0; n < 8 && at < bytes.size(); ++n) {
      auto r = akview::run_pickle(bytes.subspan(at), "fuzz.pkl", base + at, pids);
      if (!r || r->end == 0) break;
      at += r->end;
    }
  }
}
}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  run_stream(bytes, 0);
  if (auto entries = akview::read_zip_directory(bytes, "fuzz.zip"))
    for (const auto& e : *entries)
      if (e.name.ends_with(".pkl"))
        if (auto stored = akview::zip_entry_bytes(bytes, "fuzz.zip", e)) run_stream(*stored, e.data_offset);
  return 0;
}
