// Fixture quantizers: per-block scales from the block's range, codes by rounding, packed exactly
// as the decoders in core/decode read them (layouts: FORMATS.md §2.7).
#include "tests/writers/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace akview::testing {
namespace {

void put16(std::vector<uint8_t>& out, size_t at, uint16_t v) {
  out[at] = static_cast<uint8_t>(v);
  out[at + 1] = static_cast<uint8_t>(v >> 8);
}

float f16_round(float f) {   // the value a stored f16 scale will decode to
  uint16_t h = f32_to_f16(f);
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v = exp == 0 ? std::ldexp(static_cast<float>(man), -24)
                     : std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

int clamp_round(float v, int lo, int hi) { return std::clamp(static_cast<int>(std::lround(v)), lo, hi); }

// Q8_0: +0 f16 d, +2 i8 qs[32]; y = q * d.
void quantize_q8_0(std::span<const float> x, uint8_t* out) {
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  const float d = f16_round(amax / 127.0f);
  std::vector<uint8_t> block(34);
  put16(block, 0, f32_to_f16(amax / 127.0f));
  for (int j = 0; j < 32; ++j)
    block[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(d ? clamp_round(x[j] / d, -127, 127) : 0));
  std::memcpy(out, block.data(), 34);
}

// Q4_0: +0 f16 d, +2 qs[16]; element j low nibble, j+16 high nibble; y = (q - 8) * d.
void quantize_q4_0(std::span<const float> x, uint8_t* out) {
  float amax = 0, signed_max = 0;
  for (float v : x)
    if (std::fabs(v) > amax) {
      amax = std::fabs(v);
      signed_max = v;
    }
  const float d = f16_round(signed_max / -8.0f);
  out[0] = static_cast<uint8_t>(f32_to_f16(signed_max / -8.0f));
  out[1] = static_cast<uint8_t>(f32_to_f16(signed_max / -8.0f) >> 8);
  for (int j = 0; j < 16; ++j) {
    int lo = d ? clamp_round(x[j] / d + 8.0f, 0, 15) : 8, hi = d ? clamp_round(x[j + 16] / d + 8.0f, 0, 15) : 8;
    out[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// Q4_K: +0 f16 d, +2 f16 dmin, +4 scales[12] (8 x 6-bit scale/min pairs), +16 qs[128];
// sub-block s (32 elements) decodes as d*sc[s]*q - dmin*m[s].
void quantize_q4_k(std::span<const float> x, uint8_t* out) {
  float scale[8], minv[8];
  for (int s = 0; s < 8; ++s) {
    float lo = 0, hi = 0;   // the range includes 0, so mins stay non-negative
    for (int l = 0; l < 32; ++l) {
      lo = std::min(lo, x[32 * s + l]);
      hi = std::max(hi, x[32 * s + l]);
    }
    scale[s] = (hi - lo) / 15.0f;
    minv[s] = -lo;
  }
  const float max_scale = *std::max_element(scale, scale + 8), max_min = *std::max_element(minv, minv + 8);
  const float d = f16_round(max_scale / 63.0f), dmin = f16_round(max_min / 63.0f);
  uint8_t sc[8], m[8];
  for (int s = 0; s < 8; ++s) {
    sc[s] = static_cast<uint8_t>(d ? clamp_round(scale[s] / d, 0, 63) : 0);
    m[s] = static_cast<uint8_t>(dmin ? clamp_round(minv[s] / dmin, 0, 63) : 0);
  }
  std::vector<uint8_t> block(144, 0);
  put16(block, 0, f32_to_f16(max_scale / 63.0f));
  put16(block, 2, f32_to_f16(max_min / 63.0f));
  for (int k = 0; k < 4; ++k) {
    block[4 + k] = static_cast<uint8_t>((sc[k] & 63) | ((sc[k + 4] >> 4) << 6));
    block[4 + k + 4] = static_cast<uint8_t>((m[k] & 63) | ((m[k + 4] >> 4) << 6));
    block[4 + k + 8] = static_cast<uint8_t>((sc[k + 4] & 0xF) | ((m[k + 4] & 0xF) << 4));
  }
  for (int s = 0; s < 8; ++s) {
    const float step = d * sc[s], offset = dmin * m[s];
    for (int l = 0; l < 32; ++l) {
      int q = step ? clamp_round((x[32 * s + l] + offset) / step, 0, 15) : 0;
      uint8_t& byte = block[16 + 32 * (s / 2) + l];
      byte = static_cast<uint8_t>(s % 2 ? (byte | (q << 4)) : (byte | q));
    }
  }
  std::memcpy(out, block.data(), 144);
}

// Q6_K: +0 ql[128], +128 qh[64], +192 i8 scales[16], +208 f16 d; 16-element sub-block s decodes
// as d*scales[s]*(q - 32), q = 4 low bits from ql + 2 high bits from qh.
void quantize_q6_k(std::span<const float> x, uint8_t* out) {
  float scale[16];
  for (int s = 0; s < 16; ++s) {
    float amax = 0;
    for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(x[16 * s + l]));
    scale[s] = amax / 31.0f;
  }
  const float max_scale = *std::max_element(scale, scale + 16);
  const float d = f16_round(max_scale / 127.0f);
  std::vector<uint8_t> block(210, 0);
  int8_t sc[16];
  for (int s = 0; s < 16; ++s) {
    sc[s] = static_cast<int8_t>(d ? clamp_round(scale[s] / d, -128, 127) : 0);
    block[192 + s] = static_cast<uint8_t>(sc[s]);
  }
  put16(block, 208, f32_to_f16(max_scale / 127.0f));
  for (int h = 0; h < 2; ++h)
    for (int g = 0; g < 4; ++g)
      for (int l = 0; l < 32; ++l) {
        const int e = 128 * h + 32 * g + l;
        const float step = d * sc[8 * h + l / 16 + 2 * g];
        const int u = (step ? clamp_round(x[e] / step, -32, 31) : 0) + 32;
        uint8_t& low = block[64 * h + (g % 2 ? l + 32 : l)];
        low = static_cast<uint8_t>(g < 2 ? (low | (u & 0xF)) : (low | ((u & 0xF) << 4)));
        block[128 + 32 * h + l] |= static_cast<uint8_t>((u >> 4) << (2 * g));
      }
  std::memcpy(out, block.data(), 210);
}

using BlockQuantizer = void (*)(std::span<const float>, uint8_t*);
struct QuantizerRow {
  TypeId type;
  BlockQuantizer quantize_block;
};
constexpr QuantizerRow kQuantizers[] = {{TypeId::q8_0, quantize_q8_0},
                                        {TypeId::q4_0, quantize_q4_0},
                                        {TypeId::q4_k, quantize_q4_k},
                                        {TypeId::q6_k, quantize_q6_k}};

}   // namespace

uint16_t f32_to_f16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t sign = (b >> 16) & 0x8000;
  const uint32_t abs = b & 0x7fffffff;
  if (abs >= 0x7f800000) return static_cast<uint16_t>(sign | (abs > 0x7f800000 ? 0x7e00 : 0x7c00));
  if (abs >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);   // rounds past 65504
  if (abs < 0x38800000) {                                               // subnormal or zero in f16
    const float magnitude = std::ldexp(std::fabs(f), 24);               // in units of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(magnitude)));
  }
  const uint32_t mant = abs & 0x7fffff;
  uint32_t h = ((abs >> 23) - 112) << 10 | (mant >> 13);
  const uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;   // to nearest, ties to even
  return static_cast<uint16_t>(sign | h);
}

uint16_t f32_to_bf16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if ((b & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((b >> 16) | 0x40);
  b += 0x7fff + ((b >> 16) & 1);
  return static_cast<uint16_t>(b >> 16);
}

std::vector<uint8_t> quantize(TypeId type, std::span<const float> values) {
  std::vector<uint8_t> out;
  if (type == TypeId::f32) {
    out.resize(values.size() * 4);
    std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  if (type == TypeId::f16 || type == TypeId::bf16) {
    out.resize(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i)
      put16(out, 2 * i, type == TypeId::f16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]));
    return out;
  }
  for (const auto& row : kQuantizers) {
    if (row.type != type) continue;
    const TypeInfo& info = type_info(type);
    if (values.size() % info.block_elems) return {};
    const size_t blocks = values.size() / info.block_elems;
    out.resize(blocks * info.block_bytes);
    for (size_t b = 0; b < blocks; ++b)
      row.quantize_block(values.subspan(b * info.block_elems, info.block_elems), out.data() + b * info.block_bytes);
    return out;
  }
  return {};
}

AffineQuantized quantize_affine(std::span<const float> x, int64_t cols, int bits, int64_t group, TypeId scale_type) {
  AffineQuantized out;
  if ((bits != 2 && bits != 4 && bits != 8) || cols <= 0 || group <= 0 || cols % group || cols % 32 ||
      x.size() % static_cast<size_t>(cols) || (scale_type != TypeId::f16 && scale_type != TypeId::bf16))
    return out;
  const size_t rows = x.size() / static_cast<size_t>(cols), groups = rows * static_cast<size_t>(cols / group);
  const int top = (1 << bits) - 1;
  out.weight.assign(x.size() * static_cast<size_t>(bits) / 8, 0);
  out.scales.resize(groups * 2);
  out.biases.resize(groups * 2);
  auto store = [&](std::vector<uint8_t>& v, size_t g, float f) {
    const uint16_t h = scale_type == TypeId::f16 ? f32_to_f16(f) : f32_to_bf16(f);
    put16(v, g * 2, h);
    // The value the decoder will read back, so codes are rounded against the stored scale.
    uint32_t bits32 = 0;
    if (scale_type == TypeId::bf16) {
      bits32 = static_cast<uint32_t>(h) << 16;
      std::memcpy(&f, &bits32, 4);
      return f;
    }
    return f16_round(f);
  };
  for (size_t g = 0; g < groups; ++g) {
    const auto block = x.subspan(g * static_cast<size_t>(group), static_cast<size_t>(group));
    const auto [lo, hi] = std::minmax_element(block.begin(), block.end());
    const float scale = store(out.scales, g, std::max((*hi - *lo) / static_cast<float>(top), 1e-7f));
    const float bias = store(out.biases, g, *lo);
    for (size_t j = 0; j < block.size(); ++j) {
      const size_t i = g * static_cast<size_t>(group) + j;   // element index; rows are whole groups
      const auto q = static_cast<uint32_t>(clamp_round((block[j] - bias) / scale, 0, top));
      const size_t bit = i * static_cast<size_t>(bits);
      out.weight[bit / 8] |= static_cast<uint8_t>(q << (bit % 8));
    }
  }
  return out;
}

}   // namespace akview::testing
