# Install and package (included by the top-level CMakeLists.txt).
#
#   cmake --install build --prefix /usr/local     qpo, its lab, examples, schemas, docs, man pages,
#                                                 bash completion
#   cd build && cpack                             build/qpo_VERSION_ARCH.deb
#
# An installed qpo finds its lab beside itself (PREFIX/bin/qpo -> PREFIX/share/qpo/lab/lab.sh,
# src/cli/lab.cpp); the rule tables, the providers' deviations, the Lua built-ins and the BPF
# program are compiled in. Man pages and the completion are made from qpo's own --help
# (scripts/package/from_help.py), so they say what the binary says.
include(GNUInstallDirs)

install(TARGETS qpo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/lab/ DESTINATION ${CMAKE_INSTALL_DATADIR}/qpo/lab USE_SOURCE_PERMISSIONS)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/qpo/scenarios)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/qpo/schemas)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lua/ DESTINATION ${CMAKE_INSTALL_DATADIR}/qpo/lua)  # the built-ins, to read and copy
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/scripts/package/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Man pages (gzipped, as Debian installs them) and the bash completion, from the built qpo.
# Not in the sanitizer builds: their qpo reports leaks at exit, and nobody installs them.
if(NOT QPO_FUZZ AND NOT QPO_SANITIZE)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  set(QPO_HELP_DIR ${PROJECT_BINARY_DIR}/help)
  add_custom_command(OUTPUT ${QPO_HELP_DIR}/stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${QPO_HELP_DIR}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/package/from_help.py --gzip $<TARGET_FILE:qpo> ${QPO_HELP_DIR}
    COMMAND sh -c "gzip -9n -c ${PROJECT_SOURCE_DIR}/scripts/package/changelog > ${QPO_HELP_DIR}/changelog.gz"
    COMMAND ${CMAKE_COMMAND} -E touch ${QPO_HELP_DIR}/stamp
    DEPENDS qpo ${PROJECT_SOURCE_DIR}/scripts/package/from_help.py ${PROJECT_SOURCE_DIR}/scripts/package/changelog
    COMMENT "man pages and bash completion from qpo --help; the changelog"
    VERBATIM)
  add_custom_target(qpo_help ALL DEPENDS ${QPO_HELP_DIR}/stamp)
  install(DIRECTORY ${QPO_HELP_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${QPO_HELP_DIR}/completion/qpo DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  install(FILES ${QPO_HELP_DIR}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()

# The .deb. Depends come from the libraries qpo links (dpkg-shlibdeps), plus the verbs
# providers libibverbs loads at run time; the lab's tools are Recommends: qpo runs on real RDMA
# devices without them.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME qpo)
set(CPACK_PACKAGE_CONTACT "qpo maintainers <qpo-maintainers@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "declarative RDMA queue-pair orchestrator")
# The synopsis line is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the extended description.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "qpo reads an RDMA experiment from a YAML scenario (hosts, devices, PDs, MRs,
CQs, QPs and the attributes of every ibv_modify_qp transition), validates it
against the kernel's verbs rule tables, plans the verbs calls per host, brings
the QPs up with libibverbs across hosts and runs Lua-scripted workloads.
Without an RDMA device it runs in a Soft-RoCE lab (a QEMU guest with rdma_rxe).")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "ibverbs-providers")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qemu-system-x86, busybox-static, kmod, cpio, xz-utils, iproute2, python3, ca-certificates")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "perftest, rdmacm-utils, ibverbs-utils, tshark")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
