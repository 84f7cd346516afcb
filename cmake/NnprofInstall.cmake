# cmake/NnprofInstall.cmake - what `cmake --install` puts under the prefix: the library and
# its header, the CLI, the PMPI library (src/collect/mpi/), a pkg-config file (nnprof.pc),
# the CMake package (find_package(nnprof) -> nnprof::nnprof), the man page generated from
# docs/CLI.md, and the bash completion. The Python package installs apart, with
# `pip install ./python` (docs/INSTALL.md).
include(CMakePackageConfigHelpers)

install(TARGETS nnprof EXPORT nnprofTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/nnprof/nnprof.h
              ${CMAKE_SOURCE_DIR}/include/nnprof/nnprof_version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nnprof)
install(TARGETS nnprof_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# pkg-config: written at install time, so its paths are those of the prefix actually
# installed to (`cmake --install build --prefix P`), absolute as in Debian's own .pc files.
file(READ ${CMAKE_SOURCE_DIR}/cmake/nnprof.pc.in NNP_PC_TEMPLATE)
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(NNP_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(NNP_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(NNP_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  foreach(dir NNP_PC_LIBDIR NNP_PC_INCLUDEDIR)
    if(NOT IS_ABSOLUTE \"\${\${dir}}\")
      set(\${dir} \"\${NNP_PC_PREFIX}/\${\${dir}}\")
    endif()
  endforeach()
  set(pc \"\$ENV{DESTDIR}\${NNP_PC_LIBDIR}/pkgconfig/nnprof.pc\")
  message(STATUS \"Installing: \${pc}\")
  file(CONFIGURE OUTPUT \"\${pc}\" CONTENT [==[${NNP_PC_TEMPLATE}]==] @ONLY)
")

# CMake package: relocatable (paths relative to the config file), version-checked.
set(NNP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/nnprof)
install(EXPORT nnprofTargets NAMESPACE nnprof:: DESTINATION ${NNP_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/nnprofConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/nnprofConfig.cmake
                              INSTALL_DESTINATION ${NNP_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/nnprofConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/nnprofConfig.cmake ${CMAKE_BINARY_DIR}/nnprofConfigVersion.cmake
        DESTINATION ${NNP_CMAKE_DIR})

# man nnprof: generated from docs/CLI.md (the one description of the command line) with
# lowdown (Debian package lowdown, installed by scripts/bootstrap); docs/man/nnprof.1.head.md
# adds the NAME and SYNOPSIS sections man pages start with.
find_program(NNP_LOWDOWN lowdown)
if(NNP_LOWDOWN)
  set(NNP_MAN_MD ${CMAKE_BINARY_DIR}/nnprof.1.md)
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/nnprof.1
    COMMAND ${CMAKE_COMMAND} -DHEAD=${CMAKE_SOURCE_DIR}/docs/man/nnprof.1.head.md
            -DBODY=${CMAKE_SOURCE_DIR}/docs/CLI.md -DOUT=${NNP_MAN_MD}
            -P ${CMAKE_SOURCE_DIR}/cmake/man_source.cmake
    COMMAND ${NNP_LOWDOWN} -s -Tman --out-no-smarty -M title=nnprof -M section=1
            -M "date=${PROJECT_VERSION}" -M "source=nnprof ${PROJECT_VERSION}"
            -o ${CMAKE_BINARY_DIR}/nnprof.1 ${NNP_MAN_MD}
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/CLI.md ${CMAKE_SOURCE_DIR}/docs/man/nnprof.1.head.md
            ${CMAKE_SOURCE_DIR}/cmake/man_source.cmake
    COMMENT "man page nnprof.1 from docs/CLI.md")
  add_custom_target(nnprof_man ALL DEPENDS ${CMAKE_BINARY_DIR}/nnprof.1)
  install(FILES ${CMAKE_BINARY_DIR}/nnprof.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "lowdown not found: the man page is not built (scripts/bootstrap installs it)")
endif()

install(FILES ${CMAKE_SOURCE_DIR}/tools/completion/nnprof.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME nnprof)
