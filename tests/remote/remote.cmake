# tests/remote: the view on a remote model is driven on a pty through the screens harness (libvterm).
find_package(PkgConfig REQUIRED)
pkg_check_modules(VTERM REQUIRED IMPORTED_TARGET vterm)
target_sources(akview_remote_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/screens/harness.cpp ${PROJECT_SOURCE_DIR}/tests/screens/screen.cpp)
target_link_libraries(akview_remote_tests PRIVATE PkgConfig::VTERM util)
# The remote cases again with their faults served by signals (core/remote/signal_mapping.hpp), as
# where userfaultfd is refused (a container's seccomp profile); SignalFaults.* test the signals
# mechanism directly and need no second run. One ctest entry a case, so they run in parallel.
# The sanitizer build runs again only the cases whose faults go another way with signals (a header
# whose fetch fails, a file replaced, a transfer cancelled; RemoteOpen.WhereUserfaultfdIsRefused...
# runs the demo models' commands through signals in every build): the rest answer the same through
# either mechanism once the pages are in, and cost 3-4 minutes there; the release build runs them all
# with signals.
set(signals_filter "RemoteOpen.*")
if(AKVIEW_SANITIZE OR AKVIEW_FUZZ)
  set(signals_filter "RemoteOpen.AHeaderThatCannotBeFetchedIsAnErrorNotASignal:RemoteOpen.AFileReplacedOnTheServerIsAnErrorNotAMix:RemoteOpen.ASlowTransferIsCancelledWithEscInTheView")
endif()
gtest_discover_tests(akview_remote_tests TEST_PREFIX "signals." TEST_FILTER "${signals_filter}" DISCOVERY_TIMEOUT 60
                     PROPERTIES ENVIRONMENT AKVIEW_REMOTE_FAULTS=signals LABELS remote)
