// Included first (-include) by akview_xquant_vnni_emulated_tests: the AVX-512 F/BW/VL/VNNI
// intrinsics, emulated by SIMDe (Debian's libsimde-dev) where the machine lacks them, and the
// feature macros that turn on the x-quant VNNI kernels (compute/xquant_kernels.hpp). On an AVX2 host
// the test then runs the kernels an AVX-512 machine would. Where the machine has AVX-512, SIMDe
// uses it (no alias), and this is the native build again.
#pragma once
#include <immintrin.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#ifndef __AVX512F__
#define __AVX512F__ 1
#endif
#ifndef __AVX512BW__
#define __AVX512BW__ 1
#endif
#ifndef __AVX512VL__
#define __AVX512VL__ 1
#endif
#ifndef __AVX512VNNI__
#define __AVX512VNNI__ 1
#endif

// Two the kernels use that SIMDe (0.7.4) has no alias for, lane by lane.
#if !defined(SIMDE_X86_AVX512F_NATIVE)
inline simde__m512 akview_emulated_cvtepi32_ps(simde__m512i a) {
  const simde__m512i_private p = simde__m512i_to_private(a);
  simde__m512_private r;
  for (int i = 0; i < 16; ++i) r.f32[i] = static_cast<float>(p.i32[i]);
  return simde__m512_from_private(r);
}
#define _mm512_cvtepi32_ps akview_emulated_cvtepi32_ps
#define _mm512_zextsi256_si512(a) simde_mm512_inserti64x4(simde_mm512_setzero_si512(), (a), 0)
#endif
