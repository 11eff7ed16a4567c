# mhacfg_embed_files(<out.cpp> <function-name> <files...>)
# Generates a C++ source defining
#   const std::vector<mhacfg::EmbeddedFile>& <function-name>();
# holding each file's stem and contents, so shipped presets and profiles travel inside the binary.
function(mhacfg_embed_files out_cpp function_name)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DFUNCTION=${function_name} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${function_name}"
    VERBATIM)
endfunction()
