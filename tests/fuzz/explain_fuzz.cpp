// `akview explain` on fuzzed models: for a few tensors of whatever opens, the group holding the
// first, a middle and the last element is explained step by step, and its values must equal what
// the decoder gives for those elements, bit for bit (a NaN matches any NaN), or the explanation
// fails cleanly.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/explain/explain.hpp"
#include "core/formats/format.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = akview::open_model(akview::fuzz::write_input("in.bin", data, size));
  if (!model) return 0;
  std::vector<float> row;
  for (size_t i = 0; i < model->tensors.size() && i < 4; ++i) {
    auto view = akview::make_tensor_view(*model, model->tensors[i]);
    if (!view || view->n_rows <= 0 || view->n_cols <= 0 || view->n_cols > (1 << 16)) continue;
    const int64_t cells[][2] = {{0, 0}, {view->n_rows / 2, view->n_cols / 2}, {view->n_rows - 1, view->n_cols - 1}};
    for (const auto& [r, c] : cells) {
      auto e = akview::explain_element(*view, r, c);
      if (!e) continue;
      row.resize(static_cast<size_t>(view->n_cols));
      if (!akview::decode_rows(*view, r, r + 1, row.data()).ok()) {
        std::fprintf(stderr, "explain succeeded where decode failed: tensor %zu (%lld, %lld)\n", i, (long long)r,
                     (long long)c);
        std::abort();
      }
      // Bit for bit, except that a NaN equals any NaN (its payload is the arithmetic's, not the format's).
      auto same = [&](size_t k) {
        const float a = e->values[k], b = row[static_cast<size_t>(e->group_col) + k];
        return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
      };
      bool equal = e->group_col >= 0 && e->group_col + static_cast<int64_t>(e->values.size()) <= view->n_cols;
      for (size_t k = 0; equal && k < e->values.size(); ++k) equal = same(k);
      if (!equal) {
        std::fprintf(stderr, "explain's values differ from the decoder: tensor %zu (%lld, %lld)\n", i, (long long)r,
                     (long long)c);
        std::abort();
      }
    }
  }
  return 0;
}
