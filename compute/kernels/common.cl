// Shared helpers for every matvec kernel (prepended to each family's source).
// A row is computed by AKV_LANES work-items (the host's -DAKV_LANES): 1 on CPU devices (PoCL runs
// one work-item per row as straight SIMD code), a work-group of 32-256 on GPUs, whose lanes take
// the row's blocks in turn (lane i reads block i, i + AKV_LANES, ...: neighbouring lanes read
// neighbouring bytes) and add their sums in local memory at the end. Every kernel returns early
// for row >= rows and checks that its row lies inside the weight buffer (w_bytes), so a bad launch
// cannot read out of bounds (PoCL runs kernels inside akview's process); both tests are the same
// for every lane of a row, so no lane skips the barriers of the final sum. No cl_khr_fp16 on PoCL:
// halves are read with vload_half.
#ifndef AKV_LANES
#define AKV_LANES 1
#endif
#if AKV_LANES > 1
#define AKV_ROW_ID ((int)get_group_id(0))
#define AKV_LANE ((int)get_local_id(0))
#define AKV_LANE_SUMS __local float akv_lane_sums[AKV_LANES];
// y[row] = the sum of every lane's V (a tree in local memory; AKV_LANES is a power of two).
#define AKV_STORE(V)                                                          \
  {                                                                           \
    akv_lane_sums[lane] = (V);                                                \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
    for (int half_ = AKV_LANES / 2; half_ > 0; half_ >>= 1) {                 \
      if (lane < half_) akv_lane_sums[lane] += akv_lane_sums[lane + half_];   \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
    }                                                                         \
    if (lane == 0) y[row] = akv_lane_sums[0];                                 \
  }
#else
#define AKV_ROW_ID ((int)get_global_id(0))
#define AKV_LANE 0
#define AKV_LANE_SUMS
#define AKV_STORE(V) y[row] = (V);
#endif

// An IEEE half to float, exactly (subnormals, infinities, NaNs), in a few integer ops: cheaper than
// PoCL's vload_half, which matters for the 32-element block types (one scale per 32 weights).
inline float ld_f16(__global const uchar* p) {
  const uint h = *(__global const ushort*)p;
  const uint em = h & 0x7fffu;
  float f = as_float((em << 13) + (112u << 23));          // normal: rebias the exponent 15 -> 127
  if (em < 0x0400u) f = (float)em * 0x1p-24f;             // subnormal or zero
  if (em >= 0x7c00u) f = as_float((em << 13) | 0x7f800000u);   // inf, NaN
  return as_float(as_uint(f) | ((h & 0x8000u) << 16));
}
// The same, through vcvtph2ps: PoCL lowers vload_half8/16 to it but scalar vload_half and
// vload_half2/4 to a software routine, and its vload_half8 on __global memory is an aligned 16-byte
// load (faults on a 34-byte-stride block scale). So the half goes into an aligned private ushort8
// first; LLVM forwards the store and converts the register.
inline float ld_f16_hw(__global const uchar* p) {
  const ushort8 t = (ushort8)(*(__global const ushort*)p, 0, 0, 0, 0, 0, 0, 0);
  return vload_half8(0, (const __private half*)&t).s0;
}
inline float ld_bf16(__global const uchar* p) { return as_float(((uint)p[0] | ((uint)p[1] << 8)) << 16); }
inline float ld_f32(__global const uchar* p) { return as_float((uint)p[0] | ((uint)p[1] << 8) | ((uint)p[2] << 16) | ((uint)p[3] << 24)); }
inline uint ld_u32(__global const uchar* p) { return (uint)p[0] | ((uint)p[1] << 8) | ((uint)p[2] << 16) | ((uint)p[3] << 24); }
inline float hsum16(float16 p) {
  float8 s8 = p.lo + p.hi;
  float4 s4 = s8.lo + s8.hi;
  float2 s2 = s4.lo + s4.hi;
  return s2.x + s2.y;
}

// The IQ4_NL / IQ4_XS code book (FORMATS.md §2.7), looked up for 16 nibbles at once.
#if AKV_LANES > 1
// GPUs: from constant memory (a private vector indexed by variable lanes goes to local memory,
// which made these kernels 4x slower than the other 4-bit ones on an H200).
__constant float kIq4Values[16] = {-127.0f, -104.0f, -83.0f, -65.0f, -49.0f, -35.0f, -22.0f, -10.0f,
                                   1.0f,    13.0f,   25.0f,  38.0f,  53.0f,  69.0f,  89.0f,  113.0f};
inline float16 iq4_values(uchar16 n) {
  return (float16)(kIq4Values[n.s0], kIq4Values[n.s1], kIq4Values[n.s2], kIq4Values[n.s3], kIq4Values[n.s4],
                   kIq4Values[n.s5], kIq4Values[n.s6], kIq4Values[n.s7], kIq4Values[n.s8], kIq4Values[n.s9],
                   kIq4Values[n.sa], kIq4Values[n.sb], kIq4Values[n.sc], kIq4Values[n.sd], kIq4Values[n.se],
                   kIq4Values[n.sf]);
}
#else
// CPUs (PoCL): a vector built from variable-index element reads, which LLVM's x86 backend matches
// into one vpermps; OpenCL's shuffle() goes through PoCL's library and ends up as 16 stack loads.
inline float16 iq4_values(uchar16 nibbles) {
  const float16 t = (float16)(-127.0f, -104.0f, -83.0f, -65.0f, -49.0f, -35.0f, -22.0f, -10.0f,
                              1.0f, 13.0f, 25.0f, 38.0f, 53.0f, 69.0f, 89.0f, 113.0f);
  const uint16 i = convert_uint16(nibbles);
  return (float16)(t[i.s0], t[i.s1], t[i.s2], t[i.s3], t[i.s4], t[i.s5], t[i.s6], t[i.s7],
                   t[i.s8], t[i.s9], t[i.sa], t[i.sb], t[i.sc], t[i.sd], t[i.se], t[i.sf]);
}
#endif

// Scalar companion types (scales / biases): 0 = f16, 1 = bf16, 2 = f32.
inline float ld_scalar(__global const uchar* p, int type) {
  return type == 0 ? ld_f16(p) : (type == 1 ? ld_bf16(p) : ld_f32(p));
}
inline int scalar_bytes(int type) { return type == 2 ? 4 : 2; }

// The common prologue: `row`, `lane` (0 .. AKV_LANES-1), `rp` (the row's bytes), or return when the
// row is not ours.
#define AKV_ROW_PROLOGUE(ROW_BYTES)                                              \
  AKV_LANE_SUMS                                                                  \
  const int row = AKV_ROW_ID;                                                    \
  const int lane = AKV_LANE;                                                     \
  if (row >= rows || cols <= 0) return;                                          \
  const ulong row_bytes = (ulong)(ROW_BYTES);                                    \
  if ((ulong)(row + 1) * row_bytes > w_bytes) return;                            \
  __global const uchar* rp = W + (ulong)row * row_bytes;
