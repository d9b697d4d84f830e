# Install rules and the exported package (find_package(symmesh CONFIG)), in one place so
# that the folders' CMakeLists.txt stay about building. The layout: cmake/SymmeshLayout.cmake.
include(CMakePackageConfigHelpers)

# The installed executable finds its modules and scenarios from its own folder
# (evaluation/module_search.hpp, scenario/scenario_paths.hpp).
target_compile_definitions(symmesh_scenario PRIVATE
  SYMMESH_SCENARIOS_FROM_BIN="${SYMMESH_SCENARIOS_FROM_BIN}")
target_compile_definitions(symmesh_evaluation PRIVATE
  SYMMESH_MODULES_FROM_BIN="${SYMMESH_MODULES_FROM_BIN}")

# The libraries, exported as symmesh::<name>. symmesh_hw_info is linked (privately) into
# evaluation, so a static evaluation needs it exported too.
set(symmesh_exported_libraries
  symmesh_core:core symmesh_strategies:strategies symmesh_scenario:scenario
  symmesh_sim_api:sim_api symmesh_sim:sim symmesh_evaluation:evaluation
  symmesh_reports:reports)
if(TARGET symmesh_hw_info)
  list(APPEND symmesh_exported_libraries symmesh_hw_info:hw_info)
endif()
set(symmesh_library_targets "")
foreach(pair IN LISTS symmesh_exported_libraries)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 target)
  list(GET pair 1 name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  list(APPEND symmesh_library_targets ${target})
endforeach()
install(TARGETS ${symmesh_library_targets} EXPORT symmeshTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT development
  INCLUDES DESTINATION "${SYMMESH_INSTALL_INCLUDEDIR}")

# The command and the modules it opens (symmesh::symmesh, symmesh::sim_module,
# symmesh::hw_module: a consumer can run the command or point $SYMMESH_SIM_MODULE at
# $<TARGET_FILE:symmesh::sim_module>).
set_target_properties(symmesh_sim_module PROPERTIES EXPORT_NAME sim_module)
set(symmesh_module_targets symmesh_sim_module)
if(TARGET symmesh_hw_module)
  # The installed module keeps the run path to the CUDA and NCCL libraries it was linked
  # with (/usr/local/cuda/lib64 is no system folder); the build tree's has it already.
  set_target_properties(symmesh_hw_module PROPERTIES EXPORT_NAME hw_module
    INSTALL_RPATH_USE_LINK_PATH ON)
  list(APPEND symmesh_module_targets symmesh_hw_module)
endif()
if(TARGET symmesh_mpi_module)
  # Opened under mpirun only (tools/cli/mpi_launch.cpp); found in lib/symmesh like the others.
  set_target_properties(symmesh_mpi_module PROPERTIES EXPORT_NAME mpi_module)
  list(APPEND symmesh_module_targets symmesh_mpi_module)
endif()
install(TARGETS symmesh EXPORT symmeshTargets
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)
install(TARGETS ${symmesh_module_targets} EXPORT symmeshTargets
  LIBRARY DESTINATION "${SYMMESH_INSTALL_MODULEDIR}" COMPONENT runtime)

# Headers: the folders the exported libraries' headers live in, as the sources lay them out,
# into include/symmesh/<folder>/ with their includes of each other namespaced
# (#include <symmesh/core/x.hpp>: cmake/SymmeshInstallHeaders.cmake, at install time).
# reports/ (the report writers, out of tools/cli/) is installed once it exists.
set(symmesh_header_folders core strategies scenario sim evaluation)
if(IS_DIRECTORY "${SYMMESH_ROOT}/reports")
  list(APPEND symmesh_header_folders reports)
endif()
install(CODE "
  set(SYMMESH_HEADER_SOURCE \"${SYMMESH_ROOT}\")
  set(SYMMESH_HEADER_FOLDERS \"${symmesh_header_folders}\")
  set(SYMMESH_HEADER_DESTINATION \"${SYMMESH_INSTALL_HEADERDIR}\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/SymmeshInstallHeaders.cmake\")"
  COMPONENT development)
# The shipped scenarios (clusters/, models/, training/ included) and the documentation.
install(DIRECTORY scenarios/ DESTINATION "${SYMMESH_INSTALL_SCENARIOSDIR}" COMPONENT runtime)
install(FILES README.md DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT runtime)
install(DIRECTORY docs/ DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs" COMPONENT runtime)

install(EXPORT symmeshTargets NAMESPACE symmesh:: DESTINATION "${SYMMESH_INSTALL_CMAKEDIR}"
  COMPONENT development)
configure_package_config_file(cmake/symmeshConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/symmeshConfig.cmake"
  INSTALL_DESTINATION "${SYMMESH_INSTALL_CMAKEDIR}"
  PATH_VARS SYMMESH_INSTALL_SCENARIOSDIR SYMMESH_INSTALL_MODULEDIR)
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/symmeshConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/symmeshConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/symmeshConfigVersion.cmake"
  DESTINATION "${SYMMESH_INSTALL_CMAKEDIR}" COMPONENT development)
