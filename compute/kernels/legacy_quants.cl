// ggml 32-element blocks (FORMATS.md §2.7): q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl.
// Element j = low nibble of qs[j], element j+16 = high nibble.
// Each block is dequantised into two float16 (w = q * d + offset, one fma) and multiplied into two
// float16 accumulators; the row is reduced horizontally once, at the end (PoCL runs one work-item
// per row as straight AVX-512 code, so a per-block horizontal sum would dominate).

// Adds the two dequantised halves of a 32-element block times x[0..31] into the accumulators.
#define AKV_DOT32(W0, W1, XB)                  \
  a0 = fma((W0), vload16(0, (XB)), a0);        \
  a1 = fma((W1), vload16(1, (XB)), a1);

__kernel void mv_q4_0(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 18)
  float16 a0 = 0.0f, a1 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 18;
    const float16 d = ld_f16(blk), off = -8.0f * d;
    const uchar16 q = vload16(0, blk + 2);
    AKV_DOT32(fma(convert_float16(q & (uchar16)0x0F), d, off), fma(convert_float16(q >> (uchar16)4), d, off), x + b * 32)
  }
  AKV_STORE(hsum16(a0 + a1))
}

__kernel void mv_q4_1(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 20)
  float16 a0 = 0.0f, a1 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 20;
    const float16 d = ld_f16(blk), m = ld_f16(blk + 2);
    const uchar16 q = vload16(0, blk + 4);
    AKV_DOT32(fma(convert_float16(q & (uchar16)0x0F), d, m), fma(convert_float16(q >> (uchar16)4), d, m), x + b * 32)
  }
  AKV_STORE(hsum16(a0 + a1))
}

// q5: the fifth bit of element j is bit j of the 32-bit qh. off is -16 d (q5_0) or m (q5_1).
#define AKV_Q5_BLOCK(QS, QH, D, OFF, XB)                                                       \
  {                                                                                             \
    const uchar16 q = vload16(0, (QS));                                                         \
    const uint16 bit = (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);          \
    const uint16 h0 = (((uint16)(QH) >> bit) & 1u) << 4;                                        \
    const uint16 h1 = (((uint16)(QH) >> (bit + 16u)) & 1u) << 4;                                \
    AKV_DOT32(fma(convert_float16(convert_uint16(q & (uchar16)0x0F) | h0), (D), (OFF)),          \
              fma(convert_float16(convert_uint16(q >> (uchar16)4) | h1), (D), (OFF)), (XB))      \
  }

__kernel void mv_q5_0(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 22)
  float16 a0 = 0.0f, a1 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 22;
    const float16 d = ld_f16(blk), off = -16.0f * d;
    AKV_Q5_BLOCK(blk + 6, ld_u32(blk + 2), d, off, x + b * 32)
  }
  AKV_STORE(hsum16(a0 + a1))
}

__kernel void mv_q5_1(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 24)
  float16 a0 = 0.0f, a1 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 24;
    const float16 d = ld_f16(blk), m = ld_f16(blk + 2);
    AKV_Q5_BLOCK(blk + 8, ld_u32(blk + 4), d, m, x + b * 32)
  }
  AKV_STORE(hsum16(a0 + a1))
}

// q8_0: the block scale is decoded with one vcvtph2ps (ld_f16_hw) instead of the integer decode; two blocks per iteration into four
// float16 accumulators, and the scale applied once per block (p = q0*x0 + q1*x1, acc += p*d).
#define AKV_Q8_BLOCK(BLK, XB, A)                                                   \
  {                                                                                    \
    const float16 d = ld_f16_hw(BLK);                                                       \
    const float16 p = fma(convert_float16(as_char16(vload16(0, (BLK) + 18))), vload16(1, (XB)), \
                          convert_float16(as_char16(vload16(0, (BLK) + 2))) * vload16(0, (XB))); \
    A = fma(p, d, A);                                                                  \
  }

__kernel void mv_q8_0(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 34)
  float16 a0 = 0.0f, a1 = 0.0f;
  const int pairs_end = nb & ~1;   // blocks two at a time; an odd last block by lane 0
  for (int b = 2 * lane; b < pairs_end; b += 2 * AKV_LANES) {
    __global const uchar* blk = rp + b * 34;
    AKV_Q8_BLOCK(blk, x + b * 32, a0)
    AKV_Q8_BLOCK(blk + 34, x + b * 32 + 32, a1)
  }
  if (lane == 0 && pairs_end < nb) AKV_Q8_BLOCK(rp + pairs_end * 34, x + pairs_end * 32, a0)
  AKV_STORE(hsum16(a0 + a1))
}

__kernel void mv_iq4_nl(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 18)
  float16 a0 = 0.0f, a1 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 18;
    const float16 d = ld_f16(blk);
    const uchar16 q = vload16(0, blk + 2);
    AKV_DOT32(iq4_values(q & (uchar16)0x0F) * d, iq4_values(q >> (uchar16)4) * d, x + b * 32)
  }
  AKV_STORE(hsum16(a0 + a1))
}
