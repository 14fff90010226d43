# tests/remote: the view on a remote model is driven on a pty through the screens harness (libvterm).
find_package(PkgConfig REQUIRED)
pkg_check_modules(VTERM REQUIRED IMPORTED_TARGET vterm)
target_sources(akview_remote_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/screens/harness.cpp ${PROJECT_SOURCE_DIR}/tests/screens/screen.cpp)
target_link_libraries(akview_remote_tests PRIVATE PkgConfig::VTERM util)
# The remote cases again with their faults served by signals (core/remote/signal_mapping.hpp), as
# where userfaultfd is refused (a container's seccomp profile).
add_test(NAME remote.faults_by_signals COMMAND akview_remote_tests --gtest_filter=RemoteOpen.*:SignalFaults.*)
set_tests_properties(remote.faults_by_signals PROPERTIES ENVIRONMENT AKVIEW_REMOTE_FAULTS=signals LABELS remote)
