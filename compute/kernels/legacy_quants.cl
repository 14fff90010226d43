// ggml 32-element blocks (FORMATS.md §2.7): q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl.
// Element j = low nibble of qs[j], element j+16 = high nibble.

__constant char kIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

__kernel void mv_q4_0(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 18)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 18;
    const float d = ld_f16(blk);
    const uchar16 q = vload16(0, blk + 2);
    const float16 lo = convert_float16(convert_int16(q & (uchar16)0x0F) - 8);
    const float16 hi = convert_float16(convert_int16(q >> (uchar16)4) - 8);
    acc += d * hsum16(lo * vload16(0, x + b * 32) + hi * vload16(1, x + b * 32));
  }
  y[row] = acc;
}

__kernel void mv_q4_1(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 20)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 20;
    const float d = ld_f16(blk), m = ld_f16(blk + 2);
    const uchar16 q = vload16(0, blk + 4);
    const float16 x0 = vload16(0, x + b * 32), x1 = vload16(1, x + b * 32);
    const float16 lo = convert_float16(q & (uchar16)0x0F);
    const float16 hi = convert_float16(q >> (uchar16)4);
    acc += d * hsum16(lo * x0 + hi * x1) + m * hsum16(x0 + x1);
  }
  y[row] = acc;
}

inline float q5_block(__global const uchar* qs, uint qh, float d, float m, int offset, __global const float* xb) {
  const uchar16 q = vload16(0, qs);
  const uint16 bit = (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const int16 h0 = convert_int16(((uint16)qh >> bit) & 1u) << 4;
  const int16 h1 = convert_int16(((uint16)qh >> (bit + 16u)) & 1u) << 4;
  const float16 lo = convert_float16((convert_int16(q & (uchar16)0x0F) | h0) - offset);
  const float16 hi = convert_float16((convert_int16(q >> (uchar16)4) | h1) - offset);
  const float16 x0 = vload16(0, xb), x1 = vload16(1, xb);
  return d * hsum16(lo * x0 + hi * x1) + m * hsum16(x0 + x1);
}

__kernel void mv_q5_0(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 22)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 22;
    acc += q5_block(blk + 6, ld_u32(blk + 2), ld_f16(blk), 0.0f, 16, x + b * 32);
  }
  y[row] = acc;
}

__kernel void mv_q5_1(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 24)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 24;
    acc += q5_block(blk + 8, ld_u32(blk + 4), ld_f16(blk), ld_f16(blk + 2), 0, x + b * 32);
  }
  y[row] = acc;
}

__kernel void mv_q8_0(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 34)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 34;
    const float16 q0 = convert_float16(as_char16(vload16(0, blk + 2)));
    const float16 q1 = convert_float16(as_char16(vload16(0, blk + 18)));
    acc += ld_f16(blk) * hsum16(q0 * vload16(0, x + b * 32) + q1 * vload16(1, x + b * 32));
  }
  y[row] = acc;
}

__kernel void mv_iq4_nl(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 32;
  AKV_ROW_PROLOGUE((ulong)nb * 18)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 18;
    __global const float* xb = x + b * 32;
    float s = 0.0f;
    for (int j = 0; j < 16; ++j) s += kIq4nl[blk[2 + j] & 0x0F] * xb[j] + kIq4nl[blk[2 + j] >> 4] * xb[j + 16];
    acc += ld_f16(blk) * s;
  }
  y[row] = acc;
}
