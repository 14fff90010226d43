// The x-quant matvec driver (xquant.hpp): quantize x once, then the type's integer kernel over row
// ranges on the shared thread pool, each task guarding its own reads like the cpu backend.
#include <algorithm>
#include <cstring>

#include "compute/cpu_simd.hpp"
#include "compute/thread_pool.hpp"
#include "compute/xquant.hpp"
#include "compute/xquant_kernels.hpp"
#include "core/decode/decode.hpp"
#include "core/fault_guard.hpp"

namespace akview::compute {
namespace {

const XqKernelRow* find_xq_kernel(TypeId type) {
  for (auto table : {xq_kernels_legacy(), xq_kernels_kquant()})
    for (const auto& row : table)
      if (row.type == type) return &row;
  return nullptr;
}

int64_t block_of(ActQuant q) { return q == ActQuant::q8_k ? 256 : 32; }

}   // namespace

std::optional<ActQuant> act_quant_for(TypeId type) {
  if (const XqKernelRow* k = find_xq_kernel(type)) return k->act;
  return std::nullopt;
}

std::string_view act_quant_name(ActQuant q) {
  constexpr std::string_view kNames[] = {"q8_0", "q8_1", "q8_K"};
  return kNames[static_cast<int>(q)];
}

namespace {

// The q8 blocks of x before they are unpacked, kept per thread: a matvec of 60 rows takes a few
// microseconds, and making and zero-filling the vectors of its XqInput each call was a fifth of it.
template <typename Block>
Block* scratch_blocks(int64_t nb) {
  thread_local std::vector<Block> blocks;
  if (blocks.size() < static_cast<size_t>(nb)) blocks.resize(static_cast<size_t>(nb));
  return blocks.data();
}

void fill_xq_input(XqInput& in, ActQuant kind, const float* x, int64_t n, int pair_zero) {
  in.kind = kind;
  in.codes.resize(static_cast<size_t>(n));
  const int64_t nb = n / block_of(kind);
  in.d.resize(static_cast<size_t>(nb));
  in.s.clear();
  in.bsum16.clear();
  if (kind == ActQuant::q8_k) {
    BlockQ8K* blocks = scratch_blocks<BlockQ8K>(nb);
    quantize_q8_k(x, n, blocks);
    in.bsum16.resize(static_cast<size_t>(n / 16));
    for (int64_t b = 0; b < nb; ++b) {
      std::memcpy(in.codes.data() + 256 * b, blocks[b].qs, 256);
      std::memcpy(in.bsum16.data() + 16 * b, blocks[b].bsums, 32);
      in.d[b] = blocks[b].d;
    }
  } else if (kind == ActQuant::q8_1) {
    BlockQ8_1* blocks = scratch_blocks<BlockQ8_1>(nb);
    quantize_q8_1(x, n, blocks);
    in.s.resize(static_cast<size_t>(nb));
    for (int64_t b = 0; b < nb; ++b) {
      std::memcpy(in.codes.data() + 32 * b, blocks[b].qs, 32);
      in.d[b] = simd::f16_to_f32(blocks[b].d);
      in.s[b] = simd::f16_to_f32(blocks[b].s);
    }
  } else {
    BlockQ8_0* blocks = scratch_blocks<BlockQ8_0>(nb);
    quantize_q8_0(x, n, blocks);
    for (int64_t b = 0; b < nb; ++b) {
      std::memcpy(in.codes.data() + 32 * b, blocks[b].qs, 32);
      in.d[b] = simd::f16_to_f32(blocks[b].d);
    }
  }
  in.sum4.resize(static_cast<size_t>(n / 4));
  in.zpair.resize(pair_zero ? static_cast<size_t>(n / 2) : 0);   // |z * (two codes)| <= 32 * 254: an int16
  int64_t j = 0;
#if AKVIEW_CPU_AVX2
  for (const __m256i one8 = _mm256_set1_epi8(1), one16 = _mm256_set1_epi16(1); j + 32 <= n; j += 32) {
    const __m256i pairs =
        _mm256_maddubs_epi16(one8, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in.codes.data() + j)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(in.sum4.data() + j / 4), _mm256_madd_epi16(pairs, one16));
    if (pair_zero)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(in.zpair.data() + j / 2),
                          _mm256_mullo_epi16(pairs, _mm256_set1_epi16(static_cast<short>(pair_zero))));
  }
#endif
  for (; j < n; j += 4) {
    const int p0 = in.codes[j] + in.codes[j + 1], p1 = in.codes[j + 2] + in.codes[j + 3];
    in.sum4[j / 4] = p0 + p1;
    if (pair_zero)
      in.zpair[j / 2] = static_cast<int16_t>(pair_zero * p0),
                   in.zpair[j / 2 + 1] = static_cast<int16_t>(pair_zero * p1);
  }
}

}   // namespace

XqInput make_xq_input(ActQuant kind, const float* x, int64_t n, int pair_zero) {
  XqInput in;
  fill_xq_input(in, kind, x, n, pair_zero);
  return in;
}

bool xquant_supports(const TensorView& view) { return find_xq_kernel(view.type) != nullptr; }

namespace {
// The kernel and its name for `path`.
std::pair<XqRowsFn, std::string_view> pick(const XqKernelRow& k, XqPath path) {
  switch (path) {
    case XqPath::scalar: return {k.portable, "scalar"};
    case XqPath::avx2:
      return k.avx2 ? std::pair<XqRowsFn, std::string_view>{k.avx2, "avx2"}
                    : std::pair<XqRowsFn, std::string_view>{k.portable, "scalar"};
    case XqPath::best: break;
  }
  return {k.rows, k.variant};
}
}   // namespace

std::string_view xquant_variant(const TensorView& view, XqPath path) {
  const XqKernelRow* k = find_xq_kernel(view.type);
  return k ? pick(*k, path).second : "";
}

Status xquant_matvec(const TensorView& view, const float* x, float* y, XqPath path) {
  const XqKernelRow* kernel = find_xq_kernel(view.type);
  if (!kernel)
    return make_error(
        ErrorCode::unsupported, "", kNoOffset,
        std::string(type_info(view.type).name) + ": no x-quant kernel (ggml quantizes x only for block types)");
  AKV_TRY(validate_view(view));
  AKV_TRY(check_view_mapped(view));
  if (view.n_rows == 0) return {};
  thread_local XqInput in;   // its vectors kept between calls (fill_xq_input)
  fill_xq_input(in, kernel->act, x, view.n_cols, kernel->pair_zero);
  const XqArgs args{&view, &in};
  const XqRowsFn rows = pick(*kernel, path).first;

  return parallel_row_passes(view.n_rows, view.row_bytes, 4,
                             [&](int64_t r0, int64_t r1) { return guard_reads([&] { rows(args, r0, r1, y); }); });
}

}   // namespace akview::compute
