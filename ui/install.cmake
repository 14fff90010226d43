# What `cmake --install` (and so `cpack`) puts on a machine: the binary, its man page and its bash,
# zsh and fish completions, where Debian keeps them (with the prefix /usr: /usr/share/man/man1,
# /usr/share/bash-completion/completions, /usr/share/zsh/vendor-completions,
# /usr/share/fish/vendor_completions.d). The binary prints the man page and the completions itself
# (`akview --man`, `akview --completion SHELL`) from the tables its --help and Help pane come from,
# so they are written here at build time and cannot drift from the parser. Included by ui/CMakeLists.txt.
include(GNUInstallDirs)

set(AKVIEW_SHARE_DIR ${PROJECT_BINARY_DIR}/share)
set(AKVIEW_MAN_PAGE ${AKVIEW_SHARE_DIR}/akview.1.gz)
set(AKVIEW_COMPLETIONS ${AKVIEW_SHARE_DIR}/akview.bash ${AKVIEW_SHARE_DIR}/_akview ${AKVIEW_SHARE_DIR}/akview.fish)
add_custom_command(
  OUTPUT ${AKVIEW_MAN_PAGE} ${AKVIEW_COMPLETIONS}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${AKVIEW_SHARE_DIR}
  # gzip -n: no name or time stamp inside, so the same sources give the same bytes.
  COMMAND sh -c "\"$1\" --man | gzip -9n > \"$2\"" sh $<TARGET_FILE:akview> ${AKVIEW_MAN_PAGE}
  COMMAND sh -c "\"$1\" --completion bash > \"$2\"" sh $<TARGET_FILE:akview> ${AKVIEW_SHARE_DIR}/akview.bash
  COMMAND sh -c "\"$1\" --completion zsh > \"$2\"" sh $<TARGET_FILE:akview> ${AKVIEW_SHARE_DIR}/_akview
  COMMAND sh -c "\"$1\" --completion fish > \"$2\"" sh $<TARGET_FILE:akview> ${AKVIEW_SHARE_DIR}/akview.fish
  DEPENDS akview
  COMMENT "akview: man page and shell completions"
  VERBATIM)
add_custom_target(akview_man_and_completions ALL DEPENDS ${AKVIEW_MAN_PAGE} ${AKVIEW_COMPLETIONS})

install(TARGETS akview RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${AKVIEW_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${AKVIEW_SHARE_DIR}/akview.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME akview)
install(FILES ${AKVIEW_SHARE_DIR}/_akview DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${AKVIEW_SHARE_DIR}/akview.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
