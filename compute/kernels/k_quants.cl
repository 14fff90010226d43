// ggml 256-element super-blocks (FORMATS.md §2.7): q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs.
// Per sub-block: sum(q * x) times the sub-block scale, minus min * sum(x) where the type has mins.

__constant char kIq4nlK[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

inline void scale_min_k4(int j, __global const uchar* q, float* sc, float* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

__kernel void mv_q2_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 84)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 84;
    const float d = ld_f16(blk + 80), dmin = ld_f16(blk + 82);
    __global const float* xb = x + b * 256;
    int is = 0;
    for (int n = 0; n < 2; ++n) {
      __global const uchar* q = blk + 16 + 32 * n;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int hf = 0; hf < 2; ++hf) {
          const uchar sc = blk[is++];
          float sq = 0.0f, sx = 0.0f;
          for (int l = 0; l < 16; ++l) {
            const float xv = xb[l];
            sq += (float)((q[l + 16 * hf] >> shift) & 3) * xv;
            sx += xv;
          }
          acc += d * (sc & 0xF) * sq - dmin * (sc >> 4) * sx;
          xb += 16;
        }
      }
    }
  }
  y[row] = acc;
}

__kernel void mv_q3_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 110)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 110;
    __global const uchar* hm = blk;
    __global const uchar* sc = blk + 96;
    const float d = ld_f16(blk + 108);
    __global const float* xb = x + b * 256;
    int k = 0;
    uchar m = 1;
    for (int n = 0; n < 2; ++n) {
      __global const uchar* q = blk + 32 + 32 * n;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int hf = 0; hf < 2; ++hf) {
          const int s = ((k < 8 ? sc[k] & 0xF : sc[k - 8] >> 4) | (((sc[8 + k % 4] >> (2 * (k / 4))) & 3) << 4)) - 32;
          ++k;
          float sq = 0.0f;
          for (int l = 0; l < 16; ++l) {
            const int i = l + 16 * hf;
            sq += (float)(((q[i] >> shift) & 3) - ((hm[i] & m) ? 0 : 4)) * xb[l];
          }
          acc += d * (float)s * sq;
          xb += 16;
        }
        m <<= 1;
      }
    }
  }
  y[row] = acc;
}

__kernel void mv_q4_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 144)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 144;
    const float d = ld_f16(blk), dmin = ld_f16(blk + 2);
    for (int c = 0; c < 4; ++c) {
      float sc0, m0, sc1, m1;
      scale_min_k4(2 * c, blk + 4, &sc0, &m0);
      scale_min_k4(2 * c + 1, blk + 4, &sc1, &m1);
      __global const float* xb = x + b * 256 + 64 * c;
      const uchar16 qa = vload16(0, blk + 16 + 32 * c), qb = vload16(1, blk + 16 + 32 * c);
      const float16 xa0 = vload16(0, xb), xb0 = vload16(1, xb), xa1 = vload16(2, xb), xb1 = vload16(3, xb);
      const float lo = hsum16(convert_float16(qa & (uchar16)0x0F) * xa0 + convert_float16(qb & (uchar16)0x0F) * xb0);
      const float hi = hsum16(convert_float16(qa >> (uchar16)4) * xa1 + convert_float16(qb >> (uchar16)4) * xb1);
      acc += d * (sc0 * lo + sc1 * hi) - dmin * (m0 * hsum16(xa0 + xb0) + m1 * hsum16(xa1 + xb1));
    }
  }
  y[row] = acc;
}

__kernel void mv_q5_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 176)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 176;
    const float d = ld_f16(blk), dmin = ld_f16(blk + 2);
    __global const uchar* qh = blk + 16;
    for (int c = 0; c < 4; ++c) {
      float sc0, m0, sc1, m1;
      scale_min_k4(2 * c, blk + 4, &sc0, &m0);
      scale_min_k4(2 * c + 1, blk + 4, &sc1, &m1);
      __global const float* xb = x + b * 256 + 64 * c;
      __global const uchar* ql = blk + 48 + 32 * c;
      float lo = 0.0f, hi = 0.0f, xlo = 0.0f, xhi = 0.0f;
      for (int l = 0; l < 32; ++l) {
        const int h = qh[l] >> (2 * c);
        lo += (float)((ql[l] & 0xF) + ((h & 1) << 4)) * xb[l];
        hi += (float)((ql[l] >> 4) + ((h & 2) << 3)) * xb[l + 32];
        xlo += xb[l];
        xhi += xb[l + 32];
      }
      acc += d * (sc0 * lo + sc1 * hi) - dmin * (m0 * xlo + m1 * xhi);
    }
  }
  y[row] = acc;
}

__kernel void mv_q6_k(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 210)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 210;
    const float d = ld_f16(blk + 208);
    for (int n = 0; n < 2; ++n) {
      __global const uchar* ql = blk + 64 * n;
      __global const uchar* qh = blk + 128 + 32 * n;
      __global const char* sc = (__global const char*)(blk + 192 + 8 * n);
      __global const float* xb = x + b * 256 + 128 * n;
      for (int is = 0; is < 2; ++is) {
        const uchar16 la = vload16(is, ql), lb = vload16(is, ql + 32), h = vload16(is, qh);
        const float16 q1 = convert_float16(convert_int16((la & (uchar16)0xF) | ((h & (uchar16)3) << (uchar16)4)) - 32);
        const float16 q2 = convert_float16(convert_int16((lb & (uchar16)0xF) | (((h >> (uchar16)2) & (uchar16)3) << (uchar16)4)) - 32);
        const float16 q3 = convert_float16(convert_int16((la >> (uchar16)4) | (((h >> (uchar16)4) & (uchar16)3) << (uchar16)4)) - 32);
        const float16 q4 = convert_float16(convert_int16((lb >> (uchar16)4) | ((h >> (uchar16)6) << (uchar16)4)) - 32);
        acc += d * (sc[is] * hsum16(q1 * vload16(is, xb)) + sc[is + 2] * hsum16(q2 * vload16(is, xb + 32)) +
                    sc[is + 4] * hsum16(q3 * vload16(is, xb + 64)) + sc[is + 6] * hsum16(q4 * vload16(is, xb + 96)));
      }
    }
  }
  y[row] = acc;
}

__kernel void mv_iq4_xs(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  const int nb = cols / 256;
  AKV_ROW_PROLOGUE((ulong)nb * 136)
  float acc = 0.0f;
  for (int b = 0; b < nb; ++b) {
    __global const uchar* blk = rp + b * 136;
    const float d = ld_f16(blk);
    const uint sh = (uint)blk[2] | ((uint)blk[3] << 8);
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((blk[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((sh >> (2 * ib)) & 3) << 4);
      __global const uchar* qs = blk + 8 + 16 * ib;
      __global const float* xb = x + b * 256 + 32 * ib;
      float s = 0.0f;
      for (int j = 0; j < 16; ++j) s += kIq4nlK[qs[j] & 0xF] * xb[j] + kIq4nlK[qs[j] >> 4] * xb[j + 16];
      acc += d * (float)(ls - 32) * s;
    }
  }
  y[row] = acc;
}
