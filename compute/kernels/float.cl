// Plain float rows: f32, f16 (vload_half), bf16 (bits shifted into the high half of an f32).

__kernel void mv_f32(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  AKV_ROW_PROLOGUE((ulong)cols * 4)
  __global const float* w = (__global const float*)rp;
  float16 a = 0.0f;
  for (int j = 16 * lane; j + 16 <= cols; j += 16 * AKV_LANES) a += vload16(0, w + j) * vload16(0, x + j);
  float acc = hsum16(a);
  for (int j = (cols & ~15) + lane; j < cols; j += AKV_LANES) acc += w[j] * x[j];
  AKV_STORE(acc)
}

// vload_half16 lowers to vcvtph2ps (zmm) on PoCL/x86; four independent float16 accumulators keep
// the FMA latency chain off the critical path (one float8 accumulator was latency-bound).
__kernel void mv_f16(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  AKV_ROW_PROLOGUE((ulong)cols * 2)
  __global const half* w = (__global const half*)rp;
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int j = 64 * lane; j + 64 <= cols; j += 64 * AKV_LANES) {
    a0 = fma(vload_half16(0, w + j), vload16(0, x + j), a0);
    a1 = fma(vload_half16(1, w + j), vload16(1, x + j), a1);
    a2 = fma(vload_half16(2, w + j), vload16(2, x + j), a2);
    a3 = fma(vload_half16(3, w + j), vload16(3, x + j), a3);
  }
  for (int j = (cols & ~63) + 16 * lane; j + 16 <= cols; j += 16 * AKV_LANES) a0 = fma(vload_half16(0, w + j), vload16(0, x + j), a0);
  float acc = hsum16((a0 + a1) + (a2 + a3));
  for (int j = (cols & ~15) + lane; j < cols; j += AKV_LANES) acc += ld_f16(rp + 2 * j) * x[j];
  AKV_STORE(acc)
}

__kernel void mv_bf16(__global const uchar* W, ulong w_bytes, __global const float* x, __global float* y, int rows, int cols) {
  AKV_ROW_PROLOGUE((ulong)cols * 2)
  __global const ushort* w = (__global const ushort*)rp;
  // Four 16-wide accumulators (as mv_f16): one accumulator makes every fma wait on the last.
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int j = 64 * lane; j + 64 <= cols; j += 64 * AKV_LANES) {
    a0 = fma(as_float16(convert_uint16(vload16(0, w + j)) << 16), vload16(0, x + j), a0);
    a1 = fma(as_float16(convert_uint16(vload16(1, w + j)) << 16), vload16(1, x + j), a1);
    a2 = fma(as_float16(convert_uint16(vload16(2, w + j)) << 16), vload16(2, x + j), a2);
    a3 = fma(as_float16(convert_uint16(vload16(3, w + j)) << 16), vload16(3, x + j), a3);
  }
  for (int j = (cols & ~63) + 16 * lane; j + 16 <= cols; j += 16 * AKV_LANES) a0 = fma(as_float16(convert_uint16(vload16(0, w + j)) << 16), vload16(0, x + j), a0);
  float acc = hsum16((a0 + a1) + (a2 + a3));
  for (int j = (cols & ~15) + lane; j < cols; j += AKV_LANES) acc += as_float((uint)w[j] << 16) * x[j];
  AKV_STORE(acc)
}
