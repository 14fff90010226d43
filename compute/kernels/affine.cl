// MLX affine / Ollama int4-int8 (FORMATS.md §3.2-3.4, §4.5): w = scale * q + bias per group; each
// row is a little-endian bit stream (element i at bits [i*bits, (i+1)*bits)). 8- and 4-bit rows
// take a vector path; 2, 3, 5, 6 bits extract codes one by one (reading a second byte only when
// the code straddles it, so the last code of the buffer never reads past it).

inline uint code_at(__global const uchar* rp, int bits, int e) {
  const int bit = e * bits, byte = bit >> 3, sh = bit & 7;
  uint v = rp[byte];
  if (sh + bits > 8) v |= (uint)rp[byte + 1] << 8;
  return (v >> sh) & ((1u << bits) - 1u);
}

__kernel void mv_affine(__global const uchar* W, ulong w_bytes, __global const uchar* S, ulong s_bytes,
                        __global const uchar* B, ulong b_bytes, __global const float* x, __global float* y,
                        int rows, int cols, int bits, int group_size, int s_type, int b_type) {
  if (bits < 2 || bits > 8 || group_size <= 0 || (cols % group_size) != 0 || ((long)cols * bits) % 8 != 0) return;
  AKV_ROW_PROLOGUE((ulong)cols * bits / 8)
  const int groups = cols / group_size;
  const int ssz = scalar_bytes(s_type), bsz = scalar_bytes(b_type);
  if ((ulong)(row + 1) * groups * ssz > s_bytes || (ulong)(row + 1) * groups * bsz > b_bytes) return;
  __global const uchar* srow = S + (ulong)row * groups * ssz;
  __global const uchar* brow = B + (ulong)row * groups * bsz;
  const bool vec8 = bits == 8 && group_size % 16 == 0;
  const bool vec4 = bits == 4 && group_size % 16 == 0;
  float acc = 0.0f;
  for (int g = 0; g < groups; ++g) {
    const int e0 = g * group_size;
    float sq = 0.0f, sx = 0.0f;
    if (vec8) {
      float16 a = 0.0f, ax = 0.0f;
      for (int e = 0; e < group_size; e += 16) {
        const float16 xv = vload16(0, x + e0 + e);
        a += convert_float16(vload16(0, rp + e0 + e)) * xv;
        ax += xv;
      }
      sq = hsum16(a);
      sx = hsum16(ax);
    } else if (vec4) {
      float16 a = 0.0f, ax = 0.0f;
      for (int e = 0; e < group_size; e += 16) {
        const uchar8 q = vload8(0, rp + (e0 + e) / 2);
        const float16 xv = vload16(0, x + e0 + e);
        const float8 lo = convert_float8(q & (uchar8)0x0F), hi = convert_float8(q >> (uchar8)4);
        a += (float16)(lo.s0, hi.s0, lo.s1, hi.s1, lo.s2, hi.s2, lo.s3, hi.s3,
                       lo.s4, hi.s4, lo.s5, hi.s5, lo.s6, hi.s6, lo.s7, hi.s7) * xv;
        ax += xv;
      }
      sq = hsum16(a);
      sx = hsum16(ax);
    } else {
      for (int e = 0; e < group_size; ++e) {
        const float xv = x[e0 + e];
        sq += (float)code_at(rp, bits, e0 + e) * xv;
        sx += xv;
      }
    }
    acc += ld_scalar(srow + g * ssz, s_type) * sq + ld_scalar(brow + g * bsz, b_type) * sx;
  }
  y[row] = acc;
}
