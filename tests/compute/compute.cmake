# The x-quant AVX-512 VNNI kernels on a machine without AVX-512: the x-quant sources and their test
# built again with those intrinsics emulated by SIMDe (compute/simde_avx512.hpp), so an AVX2 host
# runs the kernels an AVX-512 one would (their paths report "avx512-vnni"). x86-64 only.
find_path(AKVIEW_SIMDE_INCLUDE_DIR simde/x86/avx512.h)
if(AKVIEW_SIMDE_INCLUDE_DIR AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_executable(akview_xquant_vnni_emulated_tests
    ${PROJECT_SOURCE_DIR}/compute/xquant_kernels_kquant.cpp ${PROJECT_SOURCE_DIR}/compute/xquant_kernels_legacy.cpp
    ${PROJECT_SOURCE_DIR}/compute/xquant_matvec.cpp ${PROJECT_SOURCE_DIR}/compute/xquant_quantize.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/compute/xquant_test.cpp)
  target_include_directories(akview_xquant_vnni_emulated_tests PRIVATE ${AKVIEW_SIMDE_INCLUDE_DIR})
  akview_layer(akview_xquant_vnni_emulated_tests tests tests)
  # -ffp-contract=off as compute/CMakeLists.txt builds these files (and the test)
  target_compile_options(akview_xquant_vnni_emulated_tests PRIVATE -include ${CMAKE_CURRENT_SOURCE_DIR}/compute/simde_avx512.hpp
                         -ffp-contract=off -Wno-unused-parameter -Wno-psabi)
  target_compile_definitions(akview_xquant_vnni_emulated_tests PRIVATE AKVIEW_ORACLES_DIR="${AKVIEW_ORACLES_DIR}")
  # its own x-quant objects come first; the libraries supply the rest (decoders, threads, guards)
  target_link_libraries(akview_xquant_vnni_emulated_tests PRIVATE akview_compute akview_core akview_writers GTest::gtest_main)
  gtest_discover_tests(akview_xquant_vnni_emulated_tests TEST_PREFIX "vnni_emulated." DISCOVERY_TIMEOUT 60 PROPERTIES LABELS compute)
else()
  add_test(NAME vnni_emulated.skipped COMMAND ${CMAKE_COMMAND} -E echo "skipped: SIMDe (libsimde-dev) not found or not x86-64")
  set_tests_properties(vnni_emulated.skipped PROPERTIES SKIP_REGULAR_EXPRESSION "skipped" LABELS compute)
endif()

# The OpenCL kernels in their GPU shape (a work-group of 64 lanes a row, compute/kernels/common.cl),
# run on PoCL: every OpenCL test again with AKVIEW_OPENCL_ROW_LANES=64. By the release build: what
# changes is the kernels' shape, which run in PoCL's code, not in akview's instrumented host code
# (under AddressSanitizer it took 21-39 s of CI's sanitizer run).
if(NOT AKVIEW_SANITIZE)
  add_test(NAME compute.opencl_row_lanes_64 COMMAND akview_compute_tests --gtest_filter=*opencl*:OpenCl*)
  # COST (7 s here): started among the first, as tests/long_tests.cmake does for the others.
  set_tests_properties(compute.opencl_row_lanes_64 PROPERTIES ENVIRONMENT AKVIEW_OPENCL_ROW_LANES=64 LABELS compute COST 7)
endif()
