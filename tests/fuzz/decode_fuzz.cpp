// decode_rows over a TensorView of fuzzer-chosen type and shape whose spans are carved from the
// input (each copied to its own exact-size buffer, so any overread is an ASan report).
// Usually the shape fields are made consistent, so the decoders themselves get exercised.
#include <algorithm>
#include <array>
#include <vector>

#include "core/decode/decode.hpp"

namespace {
struct Input {
  const uint8_t* p;
  size_t n;
  uint8_t byte() { return n ? (--n, *p++) : 0; }
  uint16_t u16() { return static_cast<uint16_t>(byte() | byte() << 8); }
  std::vector<uint8_t> take(uint64_t want) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(want, n));
    std::vector<uint8_t> v(p, p + k);
    p += k, n -= k;
    return v;
  }
};
constexpr std::array kParamTypes = {akview::TypeId::f16, akview::TypeId::bf16,    akview::TypeId::f32,
                                    akview::TypeId::u8,  akview::TypeId::f8_e4m3, akview::TypeId::f8_e8m0,
                                    akview::TypeId::i8};
}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace akview;
  Input in{data, size};
  TensorView v;
  v.type = static_cast<TypeId>(in.byte() % static_cast<uint8_t>(TypeId::count_));
  const uint8_t flags = in.byte();
  v.n_rows = 1 + in.byte() % 8;
  const TypeInfo& info = type_info(v.type);
  const uint8_t k = 1 + in.byte() % 4;
  uint64_t scale_bytes = 0, bias_bytes = 0;
  if (info.kind == TypeKind::composite) {
    v.bits = in.byte() & 15;
    v.group_size = 8u * (1 + in.byte() % 16);
    v.scales_type = kParamTypes[in.byte() % kParamTypes.size()];
    v.biases_type = kParamTypes[in.byte() % kParamTypes.size()];
    v.n_cols = int64_t{v.group_size} * k;
    v.row_bytes = static_cast<uint64_t>(v.n_cols) * v.bits / 8;
    const uint64_t groups = static_cast<uint64_t>(v.n_rows) * k;
    scale_bytes = groups * type_info(v.scales_type).block_bytes;
    bias_bytes = flags & 16 ? 0 : groups * type_info(v.biases_type).block_bytes;
  } else {
    v.n_cols = int64_t{info.block_elems} * k;
    v.row_bytes = uint64_t{k} * info.block_bytes;
  }
  if (flags & 1) v.n_cols = in.u16();
  if (flags & 2) v.row_bytes = in.u16();
  auto body = in.take(static_cast<uint64_t>(v.n_rows) * v.row_bytes);
  auto scales = in.take(scale_bytes), biases = in.take(bias_bytes);
  const uint64_t global[] = {0, 4, 4 * static_cast<uint64_t>(v.n_rows), in.byte()};
  auto global_scale = in.take(global[(flags >> 2) & 3]);
  v.data = body, v.scales = scales, v.biases = biases, v.global_scale = global_scale;
  if (!validate_view(v).ok()) return 0;
  std::vector<float> out(static_cast<size_t>(v.n_rows * v.n_cols));
  (void)decode_rows(v, 0, v.n_rows, out.data());
  (void)decode_rows(v, v.n_rows - 1, v.n_rows, out.data());
  (void)decode_rows(v, v.n_rows, v.n_rows + 1, out.data());   // refused: outside the view
  return 0;
}
