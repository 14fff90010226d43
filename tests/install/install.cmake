# tests/install: the install and the Debian package (ui/install.cmake, the CPack rules in the top
# CMakeLists.txt), checked from the build folder: `cmake --install` into a scratch prefix, `cpack -G
# DEB` unpacked into a scratch root, the man page rendered and the completions loaded.
target_compile_definitions(akview_install_tests PRIVATE
  AKVIEW_BUILD_DIR="${PROJECT_BINARY_DIR}"
  AKVIEW_CMAKE="${CMAKE_COMMAND}"
  AKVIEW_CPACK="${CMAKE_CPACK_COMMAND}")
add_dependencies(akview_install_tests akview_man_and_completions)
