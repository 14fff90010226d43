# tests/remote: the view on a remote model is driven on a pty through the screens harness (libvterm).
find_package(PkgConfig REQUIRED)
pkg_check_modules(VTERM REQUIRED IMPORTED_TARGET vterm)
target_sources(akview_remote_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/screens/harness.cpp ${PROJECT_SOURCE_DIR}/tests/screens/screen.cpp)
target_link_libraries(akview_remote_tests PRIVATE PkgConfig::VTERM util)
# The remote cases again with their faults served by signals (core/remote/signal_mapping.hpp), as
# where userfaultfd is refused (a container's seccomp profile).
# One ctest entry a case, so they run in parallel. The sanitizer build leaves out the slowest (every
# oracle model by every command: 2-3 minutes there), which the release build runs with signals.
set(signals_filter "RemoteOpen.*:SignalFaults.*")
if(AKVIEW_SANITIZE OR AKVIEW_FUZZ)
  string(APPEND signals_filter ":-RemoteOpen.EveryOracleModelAnswersAsOnDisk")
endif()
gtest_discover_tests(akview_remote_tests TEST_PREFIX "signals." TEST_FILTER "${signals_filter}" DISCOVERY_TIMEOUT 60
                     PROPERTIES ENVIRONMENT AKVIEW_REMOTE_FAULTS=signals LABELS remote)
