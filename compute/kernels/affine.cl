// MLX affine / Ollama int4-int8 (FORMATS.md §3.2-3.4, §4.5): w = scale * q + bias per group; each
// row is a little-endian bit stream (element i at bits [i*bits, (i+1)*bits)). Groups hold a
// multiple of 16 elements (the host checks), so every 16 elements are 2*bits whole bytes: they are
// loaded exactly (never past the row), unpacked into 16 codes with constant swizzles and per-lane
// shifts, dequantised with one fma and multiplied into float16 accumulators. Scales and biases
// are decoded 16 groups at a time.

// Sixteen codes from 16-bit windows: lane i = (LO[i] | HI[i] << 8) >> SH[i], masked to `bits`.
inline float16 codes16(uchar16 lo, uchar16 hi, uint16 sh, uint mask) {
  return convert_float16(((convert_uint16(lo) | (convert_uint16(hi) << 8)) >> sh) & mask);
}

// The 16 codes of elements e .. e+15 (e a multiple of 16) of the row at rp (bits 2..6).
inline float16 unpack16(__global const uchar* rp, int bits, int e) {
  __global const uchar* p = rp + (e / 8) * bits;   // e * bits / 8, exact since e % 16 == 0
  switch (bits) {
    case 2: {
      const uchar4 b = vload4(0, p);
      const uchar16 v = b.s0000111122223333;
      return convert_float16((v >> (uchar16)(0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6)) & (uchar16)3);
    }
    case 3: {
      const uchar8 b = (uchar8)(vload4(0, p), vload2(0, p + 4), (uchar2)0);
      return codes16(b.s0001112233344455, b.s1112223344455555, (uint16)(0, 3, 6, 1, 4, 7, 2, 5, 0, 3, 6, 1, 4, 7, 2, 5), 7u);
    }
    case 5: {
      const uchar2 t = vload2(0, p + 8);
      const uchar16 b = (uchar16)(vload8(0, p), t, t, t, t);
      return codes16(b.s0011233455667889, b.s1122344566778999, (uint16)(0, 5, 2, 7, 4, 1, 6, 3, 0, 5, 2, 7, 4, 1, 6, 3), 31u);
    }
    case 6: {
      const uchar4 t = vload4(0, p + 8);
      const uchar16 b = (uchar16)(vload8(0, p), t, t);
      return codes16(b.s00123345667899ab, b.s112344567789aabb, (uint16)(0, 6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2), 63u);
    }
    default: {   // 4
      const uchar8 b = vload8(0, p);
      const uchar16 v = b.s0011223344556677;
      return convert_float16((v >> (uchar16)(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4)) & (uchar16)15);
    }
  }
}

// Sixteen IEEE halves to floats, exactly (subnormals, infinities and NaNs included).
inline float16 halves_to_float16(ushort16 h) {
  const uint16 u = convert_uint16(h);
  const uint16 em = u & 0x7fffu;
  const uint16 normal = (em << 13) + (112u << 23);                      // rebias the exponent 15 -> 127
  const uint16 special = (em << 13) | 0x7f800000u;                      // exponent 31: inf / NaN
  const float16 sub = convert_float16(em) * 0x1p-24f;                   // exponent 0: em * 2^-24
  const float16 mag = select(as_float16(select(normal, special, em >= 0x7c00u)), sub, em < 0x0400u);
  return as_float16(as_uint16(mag) | ((u & 0x8000u) << 16));
}

// Sixteen scalars of a companion type (0 = f16, 1 = bf16, 2 = f32) from p (aligned to its type).
inline float16 ld_scalar16(__global const uchar* p, int type) {
  if (type == 2) return vload16(0, (__global const float*)p);
  const ushort16 h = vload16(0, (__global const ushort*)p);
  return type == 1 ? as_float16(convert_uint16(h) << 16) : halves_to_float16(h);
}

// Scales and biases of groups g0 .. g0+ng-1 (ng <= 16) into sc / bi: 16 at a time when whole.
inline void group_scalars(__global const uchar* srow, __global const uchar* brow, int g0, int ng, int s_type, int b_type,
                          __private float* sc, __private float* bi) {
  const int ssz = scalar_bytes(s_type), bsz = scalar_bytes(b_type);
  if (ng == 16) {
    vstore16(ld_scalar16(srow + g0 * ssz, s_type), 0, sc);
    vstore16(ld_scalar16(brow + g0 * bsz, b_type), 0, bi);
    return;
  }
  for (int i = 0; i < ng; ++i) {
    sc[i] = ld_scalar(srow + (g0 + i) * ssz, s_type);
    bi[i] = ld_scalar(brow + (g0 + i) * bsz, b_type);
  }
}

__kernel void mv_affine(__global const uchar* W, ulong w_bytes, __global const uchar* S, ulong s_bytes,
                        __global const uchar* B, ulong b_bytes, __global const float* x, __global float* y,
                        int rows, int cols, int bits, int group_size, int s_type, int b_type) {
  // The host launches only these (compute/opencl/kernel_table.cpp); anything else returns without reading.
  if (bits < 2 || bits > 8 || bits == 7 || group_size <= 0 || group_size % 16 != 0 || (cols % group_size) != 0) return;
  AKV_ROW_PROLOGUE((ulong)cols * bits / 8)
  const int groups = cols / group_size;
  const int ssz = scalar_bytes(s_type), bsz = scalar_bytes(b_type);
  if ((ulong)(row + 1) * groups * ssz > s_bytes || (ulong)(row + 1) * groups * bsz > b_bytes) return;
  __global const uchar* srow = S + (ulong)row * groups * ssz;
  __global const uchar* brow = B + (ulong)row * groups * bsz;
  float sc[16], bi[16];
  float16 a0 = 0.0f, a1 = 0.0f;
  if (bits == 4 && group_size % 32 == 0) {
    // 4-bit fast path: 16 bytes = 32 codes; byte i holds element 2i (low nibble) and 2i+1 (high).
    // Each byte is duplicated by a constant swizzle (one vpshufb), widened to 32 bits and shifted
    // by 0/4 per lane (vpsrlvd: the generic path's byte shifts became word shift + repack), and
    // the loop has no bits switch; four accumulators (one FMA chain was the limit before).
    float16 a2 = 0.0f, a3 = 0.0f;
    for (int g0 = 16 * lane; g0 < groups; g0 += 16 * AKV_LANES) {
      const int ng = min(16, groups - g0);
      group_scalars(srow, brow, g0, ng, s_type, b_type, sc, bi);
      for (int i = 0; i < ng; ++i) {
        const int e0 = (g0 + i) * group_size;
        const float16 s = sc[i], b = bi[i];
        for (int e = e0; e < e0 + group_size; e += 32) {
          const uchar16 q = vload16(0, rp + e / 2);
          const uint16 sh = (uint16)(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
          const float16 w0 = fma(convert_float16((convert_uint16(q.s0011223344556677) >> sh) & 15u), s, b);
          const float16 w1 = fma(convert_float16((convert_uint16(q.s8899aabbccddeeff) >> sh) & 15u), s, b);
          if ((e & 32) == 0) {
            a0 = fma(w0, vload16(0, x + e), a0);
            a1 = fma(w1, vload16(1, x + e), a1);
          } else {
            a2 = fma(w0, vload16(0, x + e), a2);
            a3 = fma(w1, vload16(1, x + e), a3);
          }
        }
      }
    }
    AKV_STORE(hsum16((a0 + a1) + (a2 + a3)))
    return;
  }
  for (int g0 = 16 * lane; g0 < groups; g0 += 16 * AKV_LANES) {
    const int ng = min(16, groups - g0);
    group_scalars(srow, brow, g0, ng, s_type, b_type, sc, bi);
    for (int i = 0; i < ng; ++i) {
      const int e0 = (g0 + i) * group_size;
      const float16 s = sc[i], b = bi[i];
      if (bits == 8) {
        for (int e = e0; e < e0 + group_size; e += 16)
          a0 = fma(fma(convert_float16(vload16(0, rp + e)), s, b), vload16(0, x + e), a0);
      } else {
        for (int e = e0; e < e0 + group_size; e += 16)
          a1 = fma(fma(unpack16(rp, bits, e), s, b), vload16(0, x + e), a1);
      }
    }
  }
  AKV_STORE(hsum16(a0 + a1))
}
