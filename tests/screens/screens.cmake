# tests/screens: the pty + libvterm harness and its fixture app (included by tests/CMakeLists.txt for
# the `screens` area; the test binary is akview_screens_tests, label `screens`).
find_package(PkgConfig REQUIRED)
pkg_check_modules(VTERM REQUIRED IMPORTED_TARGET vterm)
set(CURSES_NEED_NCURSES TRUE)
set(CURSES_NEED_WIDE TRUE)
find_package(Curses REQUIRED)

# The fixture the self-tests drive: an ncursesw app built only for the tests.
add_executable(akview_screens_fixture ${CMAKE_CURRENT_LIST_DIR}/fixture_app.cpp)
target_include_directories(akview_screens_fixture PRIVATE ${CURSES_INCLUDE_DIRS})
target_compile_options(akview_screens_fixture PRIVATE ${CURSES_CFLAGS})
target_link_libraries(akview_screens_fixture PRIVATE ${CURSES_LIBRARIES})

target_link_libraries(akview_screens_tests PRIVATE PkgConfig::VTERM util)
target_compile_definitions(akview_screens_tests PRIVATE
  AKVIEW_GOLDEN_DIR="${CMAKE_CURRENT_LIST_DIR}/golden"
  AKVIEW_SCREENS_ACTUAL_DIR="${PROJECT_BINARY_DIR}/screens-actual"
  AKVIEW_SCREENS_FIXTURE="$<TARGET_FILE:akview_screens_fixture>")
add_dependencies(akview_screens_tests akview_screens_fixture)

# The README's screenshots are drawn from goldens by this tool (tests/screens/readme_screens.sh).
add_executable(akview_golden_svg ${CMAKE_CURRENT_LIST_DIR}/tool_golden_svg.cpp ${CMAKE_CURRENT_LIST_DIR}/screen.cpp
               ${CMAKE_CURRENT_LIST_DIR}/svg.cpp)
akview_layer(akview_golden_svg tests tests)
target_link_libraries(akview_golden_svg PRIVATE akview_ui)
target_compile_definitions(akview_screens_tests PRIVATE AKVIEW_README_SCREENS="${PROJECT_SOURCE_DIR}/assets/screens")
