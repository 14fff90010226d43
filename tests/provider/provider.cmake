# diff's value sums and their tests built again for AVX2 (-march=haswell) and for SSE4.2
# (-march=x86-64-v2): core/diff.cpp sums in 4-lane halves where the build has AVX2 and in the generic
# 8-lane vectors elsewhere, and the native build runs only one of them. The rest of core is the
# native build's. x86-64 only.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  foreach(arch haswell x86-64-v2)
    string(REPLACE "-" "_" target_arch ${arch})
    set(target akview_diff_${target_arch}_tests)
    add_executable(${target} ${PROJECT_SOURCE_DIR}/core/diff.cpp ${CMAKE_CURRENT_SOURCE_DIR}/provider/diff_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/provider/diff_fused_test.cpp)
    akview_layer(${target} tests tests)
    target_compile_options(${target} PRIVATE -march=${arch})   # after the tree's -march=native: it wins
    target_compile_definitions(${target} PRIVATE AKVIEW_ORACLES_DIR="${AKVIEW_ORACLES_DIR}")
    # its own diff.cpp object comes first; the library supplies the rest of core
    target_link_libraries(${target} PRIVATE akview_core akview_writers GTest::gtest_main)
    gtest_discover_tests(${target} TEST_PREFIX "${arch}." DISCOVERY_TIMEOUT 60 PROPERTIES LABELS provider)
  endforeach()
endif()
