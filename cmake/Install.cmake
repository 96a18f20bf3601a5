# SPDX-License-Identifier: Apache-2.0
# `cmake --install` and `cpack -G DEB` (issue 25): the tandem CLI, the public
# headers, the libraries with a CMake package (find_package(tandem CONFIG):
# tandem::runtime, tandem::kernels, tandem::scenario), the scenario library
# and the schemas under share/tandem/. examples/consumer is the project that
# uses it; scripts/check-install builds and runs it against an installed copy.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TANDEM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)

# The libraries are static: base (header-only) and driver are exported too,
# since runtime links them, but a consumer names only the three above.
set_target_properties(tandem_base PROPERTIES EXPORT_NAME base)
set_target_properties(tandem_driver PROPERTIES EXPORT_NAME driver)
set_target_properties(tandem_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(tandem_kernels PROPERTIES EXPORT_NAME kernels)
set(_tandem_libs tandem_base tandem_driver tandem_runtime tandem_kernels)
if(TARGET tandem_scenario)
  set_target_properties(tandem_scenario PROPERTIES EXPORT_NAME scenario)
  list(APPEND _tandem_libs tandem_scenario)
endif()

install(TARGETS ${_tandem_libs} EXPORT tandemTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET tandem)
  install(TARGETS tandem RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# Every layer's public include/ tree (tandem/detail/* included: the public
# headers include them). The layers' src/ directories stay private.
foreach(_dir src/base/include src/driver/include src/runtime/include kernels/include src/scenario/include)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_dir})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()

install(EXPORT tandemTargets NAMESPACE tandem:: DESTINATION ${TANDEM_CMAKE_DIR})
configure_package_config_file(cmake/tandemConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tandemConfig.cmake INSTALL_DESTINATION ${TANDEM_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_DATADIR)
# 0.x: a minor version may break the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tandemConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tandemConfig.cmake ${PROJECT_BINARY_DIR}/tandemConfigVersion.cmake
  DESTINATION ${TANDEM_CMAKE_DIR})

# The scenario library, and the schemas: share/tandem/schemas is made even
# while schemas/ does not exist; its files are picked up at install time.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tandem/scenarios)
install(DIRECTORY DESTINATION ${CMAKE_INSTALL_DATADIR}/tandem/schemas)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tandem/schemas OPTIONAL)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)

# cpack -G DEB: one package with all of the above under /usr.
set(CPACK_PACKAGE_NAME tandem)
set(CPACK_PACKAGE_VENDOR "tandem authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "tandem: a shared CUDA runtime for SIMT and Tile kernels, its CLI and a simulated device")
set(CPACK_PACKAGE_DESCRIPTION "The tandem command, the runtime, kernel and scenario libraries (static) \
with their headers and CMake package (find_package(tandem CONFIG)), the scenario library and schemas under \
share/tandem.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "tandem authors")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The CLI without its debug info (CMake never strips static libraries: it
# would take the symbol tables a consumer links against).
set(CPACK_STRIP_FILES ON)
# libcuda is opened at run time, so no CUDA package is a dependency; the
# CMake package finds nlohmann_json for tandem::scenario's headers.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, nlohmann-json3-dev (>= 3.11)")
include(CPack)
