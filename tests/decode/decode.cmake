# The value statistics and their tests built again for AVX2 (-march=haswell) and for SSE4.2
# (-march=x86-64-v2): core/decode/stats.cpp picks its kernels by the instruction set it is built for
# (the AVX-512 ones, the AVX2 code counts, the scalar ones), and the native build runs only one of
# them. The rest of core (the decoders the per-value loop uses) is the native build's. x86-64 only.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  foreach(arch haswell x86-64-v2)
    string(REPLACE "-" "_" target_arch ${arch})
    set(target akview_stats_${target_arch}_tests)
    add_executable(${target} ${PROJECT_SOURCE_DIR}/core/decode/stats.cpp ${CMAKE_CURRENT_SOURCE_DIR}/decode/stats_fast_test.cpp)
    akview_layer(${target} tests tests)
    # -march after the tree's -march=native wins; the decode sources' own flags (core/CMakeLists.txt)
    target_compile_options(${target} PRIVATE -march=${arch} -ffp-contract=off -O3)
    target_compile_definitions(${target} PRIVATE AKVIEW_ORACLES_DIR="${AKVIEW_ORACLES_DIR}")
    # its own stats.cpp object comes first; the library supplies the decoders and the rest
    target_link_libraries(${target} PRIVATE akview_core akview_writers GTest::gtest_main)
    gtest_discover_tests(${target} TEST_PREFIX "${arch}." DISCOVERY_TIMEOUT 60 PROPERTIES LABELS decode)
  endforeach()
endif()
