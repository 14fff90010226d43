// Shared helpers for every matvec kernel (prepended to each family's source).
// One work-item per row; every kernel returns early for row >= rows and checks that its row lies
// inside the weight buffer (w_bytes), so a bad launch cannot read out of bounds (PoCL runs
// kernels inside akview's process). No cl_khr_fp16 on PoCL: halves are read with vload_half.

inline float ld_f16(__global const uchar* p) { return vload_half(0, (__global const half*)p); }
inline float ld_bf16(__global const uchar* p) { return as_float(((uint)p[0] | ((uint)p[1] << 8)) << 16); }
inline float ld_f32(__global const uchar* p) { return as_float((uint)p[0] | ((uint)p[1] << 8) | ((uint)p[2] << 16) | ((uint)p[3] << 24)); }
inline uint ld_u32(__global const uchar* p) { return (uint)p[0] | ((uint)p[1] << 8) | ((uint)p[2] << 16) | ((uint)p[3] << 24); }
inline float hsum16(float16 p) {
  float8 s8 = p.lo + p.hi;
  float4 s4 = s8.lo + s8.hi;
  float2 s2 = s4.lo + s4.hi;
  return s2.x + s2.y;
}
inline float hsum8(float8 p) {
  float4 s4 = p.lo + p.hi;
  float2 s2 = s4.lo + s4.hi;
  return s2.x + s2.y;
}

// Scalar companion types (scales / biases): 0 = f16, 1 = bf16, 2 = f32.
inline float ld_scalar(__global const uchar* p, int type) {
  return type == 0 ? ld_f16(p) : (type == 1 ? ld_bf16(p) : ld_f32(p));
}
inline int scalar_bytes(int type) { return type == 2 ? 4 : 2; }

// The common prologue: `row`, `rp` (the row's bytes), or return when the row is not ours.
#define AKV_ROW_PROLOGUE(ROW_BYTES)                                              \
  const int row = get_global_id(0);                                              \
  if (row >= rows || cols <= 0) return;                                          \
  const ulong row_bytes = (ulong)(ROW_BYTES);                                    \
  if ((ulong)(row + 1) * row_bytes > w_bytes) return;                            \
  __global const uchar* rp = W + (ulong)row * row_bytes;
