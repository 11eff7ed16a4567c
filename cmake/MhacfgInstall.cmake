# `cmake --install`: headers, static libraries, the CLI and its backend plugins, shipped profiles and
# JSON Schemas, and a CMake package so other projects can find_package(mhacfg) and link
# mhacfg::costmodel / mhacfg::configurator, or, with COMPONENTS kernels, the kernels and harnesses.
include(CMakePackageConfigHelpers)

# Two export sets: the core (mhacfg::costmodel, mhacfg::configurator) needs nlohmann_json only; the
# kernels and harnesses bring Eigen, OpenMP, Google Benchmark (and CUDA), which a consumer of the core
# never needs. The CLI's own libraries (commands, calibration, the backend loader) stay in the binary.
install(TARGETS mhacfg_costmodel mhacfg_configurator EXPORT mhacfgTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(MHACFG_KERNEL_TARGETS mhacfg_kernels mhacfg_bench)
if(MHACFG_WITH_CUDA)
  list(APPEND MHACFG_KERNEL_TARGETS mhacfg_kernels_cuda)
endif()
install(TARGETS ${MHACFG_KERNEL_TARGETS} EXPORT mhacfgKernelsTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mhacfg RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The plugins where the installed CLI's loader looks: <bindir>/../<libdir>/mhacfg.
set(MHACFG_PLUGIN_TARGETS mhacfg_backend_cpu)
if(MHACFG_WITH_CUDA)
  list(APPEND MHACFG_PLUGIN_TARGETS mhacfg_backend_cuda)
endif()
install(TARGETS ${MHACFG_PLUGIN_TARGETS} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/mhacfg)
foreach(dir costmodel/include kernels/cpu/include kernels/bench/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
foreach(room common inputs search report)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/configurator/include/mhacfg/configurator/${room}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mhacfg/configurator)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mhacfg/profiles FILES_MATCHING PATTERN "*.json" PATTERN "*.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configurator/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mhacfg/schemas)

install(EXPORT mhacfgTargets NAMESPACE mhacfg:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
install(EXPORT mhacfgKernelsTargets NAMESPACE mhacfg:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mhacfgConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mhacfgConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mhacfgConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mhacfgConfig.cmake ${PROJECT_BINARY_DIR}/mhacfgConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mhacfg)
