# `cmake --install`: headers, static libraries, the CLI, shipped profiles and JSON Schemas, and a CMake
# package so other projects can find_package(mhacfg) and link mhacfg::costmodel / mhacfg::configurator.
include(CMakePackageConfigHelpers)

# The package is the lean library (mhacfg::costmodel, mhacfg::configurator: nlohmann only); the
# CLI's own libraries (commands, calibration, kernels, harness) stay inside the installed binary.
install(TARGETS mhacfg_costmodel mhacfg_configurator EXPORT mhacfgTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mhacfg RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/costmodel/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(room common inputs search report)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/configurator/include/mhacfg/configurator/${room}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mhacfg/configurator)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mhacfg/profiles FILES_MATCHING PATTERN "*.json" PATTERN "*.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configurator/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mhacfg/schemas)

install(EXPORT mhacfgTargets NAMESPACE mhacfg:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mhacfgConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mhacfgConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mhacfgConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mhacfgConfig.cmake ${PROJECT_BINARY_DIR}/mhacfgConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
