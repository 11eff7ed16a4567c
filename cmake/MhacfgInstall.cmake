# `cmake --install`: headers, static libraries, the CLI, shipped profiles and JSON Schemas, and a CMake
# package so other projects can find_package(mhacfg) and link mhacfg::costmodel / mhacfg::configurator.
include(CMakePackageConfigHelpers)

set(MHACFG_INSTALL_TARGETS mhacfg_costmodel mhacfg_configurator mhacfg_kernels mhacfg_bench)
if(MHACFG_WITH_CUDA)
  list(APPEND MHACFG_INSTALL_TARGETS mhacfg_kernels_cuda)
endif()
install(TARGETS ${MHACFG_INSTALL_TARGETS} EXPORT mhacfgTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mhacfg RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir costmodel/include configurator/include kernels/cpu/include kernels/bench/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
if(MHACFG_WITH_CUDA)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/cuda/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mhacfg/profiles FILES_MATCHING PATTERN "*.json" PATTERN "*.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configurator/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mhacfg/schemas)

install(EXPORT mhacfgTargets NAMESPACE mhacfg:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mhacfgConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mhacfgConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mhacfgConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mhacfgConfig.cmake ${PROJECT_BINARY_DIR}/mhacfgConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
