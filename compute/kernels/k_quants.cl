// ggml 256-element super-blocks (FORMATS.md §2.7): q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs.
// Every 16 weights are dequantised as a float16 (w = q * (d * scale) - dmin * min, one fma, with
// the codes unpacked by uchar16 bit operations) and multiplied into one of four float16
// accumulators; the row is reduced horizontally once. Mins thus need no separate sum(x).

// a[K] += W * x[XOFF .. XOFF+15] for the current super-block (xb = its first x).
#define AKV_ACC(K, W, XOFF) a##K = fma((W), vload16(0, xb + (XOFF)), a##K);
// Two consecutive runs (WA at XOFF, WB at XOFF+16) into accumulators 0/1 when I is even, 2/3 when
// odd (I is a compile-time constant of an unrolled loop, so the branch folds away).
#define AKV_ACC_PAIR(I, WA, WB, XOFF)     \
  if ((I) % 2 == 0) {                     \
    AKV_ACC(0, WA, XOFF)                  \
    AKV_ACC(1, WB, (XOFF) + 16)           \
  } else {                                \
    AKV_ACC(2, WA, XOFF)                  \
    AKV_ACC(3, WB, (XOFF) + 16)           \
  }
#define AKV_ROW_RESULT AKV_STORE(hsum16((a0 + a1) + (a2 + a3)))

// The eight 6-bit scales of a q4_k/q5_k block (12 bytes at q) times d in lanes 0-7, and the eight
// mins times -dmin in lanes 8-15. Scale j < 4 is q[j] & 63 and min j < 4 is q[j+4] & 63; for j >= 4
// the low four bits come from q[j+4] (scale: low nibble, min: high nibble) and the top two bits
// from bits 6-7 of q[j-4] (scale) or q[j] (min).
inline float16 scales_mins_k4(__global const uchar* q, float d, float dmin) {
  const uchar8 a = vload8(0, q);
  const uchar4 b = vload4(0, q + 8);
  const uchar16 v = (uchar16)(a, b, b);
  const uchar16 lo = v.s012389ab456789ab, top = v.s0000012300004567;
  const uchar16 r = (lo & (uchar16)(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0)) |
                    ((lo >> (uchar16)4) & (uchar16)(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15)) |
                    (((top >> (uchar16)6) << (uchar16)4) & (uchar16)(0, 0, 0, 0, 48, 48, 48, 48, 0, 0, 0, 0, 48, 48, 48, 48));
  return convert_float16(r) * (float16)((float8)d, (float8)(-dmin));
}

// q2_k block (84 bytes): scales[16] (low nibble scale, high nibble min), qs[64], d, dmin.
// Sub-block 8n+2j+h holds the 2-bit field j of qs[32n+16h .. +15].
__kernel void mv_q2_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 84)
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 84;
    __global const float* xb = x + b * 256;
    const float d = ld_f16(blk + 80), dmin = ld_f16(blk + 82);
    const uchar16 sc = vload16(0, blk);
    const float16 dl = d * convert_float16(sc & (uchar16)0x0F), ml = -dmin * convert_float16(sc >> (uchar16)4);
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const uchar16 qa = vload16(0, blk + 16 + 32 * n), qb = vload16(1, blk + 16 + 32 * n);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int k = 8 * n + 2 * j;
        const uchar16 sh = (uchar16)(2 * j);
        const float16 wa = fma(convert_float16((qa >> sh) & (uchar16)3), (float16)dl[k], (float16)ml[k]);
        const float16 wb = fma(convert_float16((qb >> sh) & (uchar16)3), (float16)dl[k + 1], (float16)ml[k + 1]);
        AKV_ACC_PAIR(j, wa, wb, 128 * n + 32 * j)
      }
    }
  }
  AKV_ROW_RESULT
}

// q3_k block (110 bytes): hmask[32], qs[64], scales[12] (16 six-bit scales), d. Sub-block
// k = 8n+2j+h: low 2 bits = field j of qs[32n+16h ..], third bit = bit 4n+j of hmask[16h ..];
// the weight is d * (scale_k - 32) * (code - 4).
__kernel void mv_q3_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 110)
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 110;
    __global const uchar* sc = blk + 96;
    __global const float* xb = x + b * 256;
    const float d = ld_f16(blk + 108);
    const uchar16 ha = vload16(0, blk), hb = vload16(1, blk);
    // Scale k: low nibble of sc[k] (k < 8) or high nibble of sc[k-8], top bits 2(k/4).. of sc[8+k%4].
    const uchar8 sl = vload8(0, sc);
    const uchar4 sh4 = vload4(0, sc + 8);
    const int16 s_lo = convert_int16((uchar16)(sl & (uchar8)0x0F, sl >> (uchar8)4));
    const int16 s_hi = (convert_int16((uchar16)(sh4, sh4, sh4, sh4)) >> (int16)(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6)) & 3;
    const float16 dl = d * convert_float16((s_lo | (s_hi << 4)) - 32);
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const uchar16 qa = vload16(0, blk + 32 + 32 * n), qb = vload16(1, blk + 32 + 32 * n);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int k = 8 * n + 2 * j;
        const uchar16 sh = (uchar16)(2 * j), hs = (uchar16)(4 * n + j);
        const float16 da = (float16)dl[k], db = (float16)dl[k + 1];
        const float16 wa = fma(convert_float16(((qa >> sh) & (uchar16)3) | (((ha >> hs) & (uchar16)1) << (uchar16)2)), da, -4.0f * da);
        const float16 wb = fma(convert_float16(((qb >> sh) & (uchar16)3) | (((hb >> hs) & (uchar16)1) << (uchar16)2)), db, -4.0f * db);
        AKV_ACC_PAIR(j, wa, wb, 128 * n + 32 * j)
      }
    }
  }
  AKV_ROW_RESULT
}

// q4_k block (144 bytes): d, dmin, scales[12] (eight 6-bit scale/min pairs), qs[128]. Chunk c
// (64 weights): low nibbles of qs[32c ..] are weights 64c .. +31, high nibbles the next 32.
__kernel void mv_q4_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 144)
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 144;
    __global const float* xb = x + b * 256;
    const float16 sm = scales_mins_k4(blk + 4, ld_f16(blk), ld_f16(blk + 2));
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const float16 d0 = sm[2 * c], o0 = sm[8 + 2 * c], d1 = sm[2 * c + 1], o1 = sm[9 + 2 * c];
      const uchar16 qa = vload16(0, blk + 16 + 32 * c), qb = vload16(1, blk + 16 + 32 * c);
      AKV_ACC(0, fma(convert_float16(qa & (uchar16)0x0F), d0, o0), 64 * c)
      AKV_ACC(1, fma(convert_float16(qb & (uchar16)0x0F), d0, o0), 64 * c + 16)
      AKV_ACC(2, fma(convert_float16(qa >> (uchar16)4), d1, o1), 64 * c + 32)
      AKV_ACC(3, fma(convert_float16(qb >> (uchar16)4), d1, o1), 64 * c + 48)
    }
  }
  AKV_ROW_RESULT
}

// q5_k block (176 bytes): as q4_k plus qh[32] before qs; the fifth bit of weight 64c+l is bit 2c of
// qh[l], of weight 64c+32+l bit 2c+1.
__kernel void mv_q5_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 176)
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 176;
    __global const float* xb = x + b * 256;
    const float16 sm = scales_mins_k4(blk + 4, ld_f16(blk), ld_f16(blk + 2));
    const uchar16 ha = vload16(0, blk + 16), hb = vload16(1, blk + 16);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const float16 d0 = sm[2 * c], o0 = sm[8 + 2 * c], d1 = sm[2 * c + 1], o1 = sm[9 + 2 * c];
      const uchar16 qa = vload16(0, blk + 48 + 32 * c), qb = vload16(1, blk + 48 + 32 * c);
      const uchar16 s0 = (uchar16)(2 * c), s1 = (uchar16)(2 * c + 1), one = (uchar16)1, four = (uchar16)4;
      AKV_ACC(0, fma(convert_float16((qa & (uchar16)0x0F) | (((ha >> s0) & one) << four)), d0, o0), 64 * c)
      AKV_ACC(1, fma(convert_float16((qb & (uchar16)0x0F) | (((hb >> s0) & one) << four)), d0, o0), 64 * c + 16)
      AKV_ACC(2, fma(convert_float16((qa >> four) | (((ha >> s1) & one) << four)), d1, o1), 64 * c + 32)
      AKV_ACC(3, fma(convert_float16((qb >> four) | (((hb >> s1) & one) << four)), d1, o1), 64 * c + 48)
    }
  }
  AKV_ROW_RESULT
}

// q6_k block (210 bytes): ql[128], qh[64], scales[16] (int8), d. Half n (128 weights), 16-lane
// part i: weights 32q+16i+l take the low (q = 0, 1) or high (q = 2, 3) nibble of ql[64n+32(q&1)+16i+l]
// and bits 2q..2q+1 of qh[32n+16i+l]; the weight is d * scale * (code - 32).
__kernel void mv_q6_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 210)
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 210;
    const float16 dl = ld_f16(blk + 208) * convert_float16(as_char16(vload16(0, blk + 192)));
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      __global const uchar* ql = blk + 64 * n;
      __global const uchar* qh = blk + 128 + 32 * n;
      __global const float* xb = x + b * 256 + 128 * n;
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const uchar16 la = vload16(i, ql), lb = vload16(i, ql + 32), h = vload16(i, qh);
        const uchar16 lo = (uchar16)0x0F, three = (uchar16)3, four = (uchar16)4;
        const float16 d1 = dl[8 * n + i], d2 = dl[8 * n + i + 2], d3 = dl[8 * n + i + 4], d4 = dl[8 * n + i + 6];
        AKV_ACC(0, fma(convert_float16((la & lo) | ((h & three) << four)), d1, -32.0f * d1), 16 * i)
        AKV_ACC(1, fma(convert_float16((lb & lo) | (((h >> (uchar16)2) & three) << four)), d2, -32.0f * d2), 32 + 16 * i)
        AKV_ACC(2, fma(convert_float16((la >> four) | (((h >> four) & three) << four)), d3, -32.0f * d3), 64 + 16 * i)
        AKV_ACC(3, fma(convert_float16((lb >> four) | ((h >> (uchar16)6) << four)), d4, -32.0f * d4), 96 + 16 * i)
      }
    }
  }
  AKV_ROW_RESULT
}

// iq4_xs block (136 bytes): d, scales_h (u16), scales_l[4], qs[128]. Sub-block ib (32 weights):
// 6-bit scale ls from a nibble of scales_l and 2 bits of scales_h; weights d * (ls - 32) * code
// book[nibble], low nibbles of qs[16ib ..] first, then the high ones.
__kernel void mv_iq4_xs(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 136)
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int b = lane; b < nb; b += AKV_LANES) {
    __global const uchar* blk = rp + b * 136;
    __global const float* xb = x + b * 256;
    const float d = ld_f16(blk);
    const uint sh = (uint)blk[2] | ((uint)blk[3] << 8);
#pragma unroll
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((blk[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((sh >> (2 * ib)) & 3) << 4);
      const float16 dl = d * (float)(ls - 32);
      const uchar16 q = vload16(0, blk + 8 + 16 * ib);
      AKV_ACC_PAIR(ib, iq4_values(q & (uchar16)0x0F) * dl, iq4_values(q >> (uchar16)4) * dl, 32 * ib)
    }
  }
  AKV_ROW_RESULT
}
