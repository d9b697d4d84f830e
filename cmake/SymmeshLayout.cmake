# Where `cmake --install` puts things (GNUInstallDirs), and the two paths the installed
# symmesh finds from its own folder, so that an install tree works wherever it is moved:
#   <prefix>/bin/symmesh
#   <prefix>/lib/symmesh/libsymmesh_sim.so, libsymmesh_hw.so   the backend modules
#   <prefix>/share/symmesh/scenarios/                         the shipped scenarios
#   <prefix>/include/symmesh/{core,strategies,scenario,sim,evaluation,reports}/*.hpp
#   <prefix>/lib/libsymmesh_*.a, <prefix>/lib/cmake/symmesh/  the package (find_package)
# The headers are namespaced: the targets' installed include directory
# (SYMMESH_INSTALL_INCLUDEDIR, the $<INSTALL_INTERFACE:...> of core/ and hw/) is
# <prefix>/include, so a consumer writes #include <symmesh/core/placement.hpp>, and a bare
# "core/placement.hpp" does not resolve through the package (no clash with another
# project's core/). The headers themselves go to SYMMESH_INSTALL_HEADERDIR, include/symmesh;
# cmake/SymmeshInstallHeaders.cmake rewrites their repository-relative includes on install.
include(GNUInstallDirs)
set(SYMMESH_INSTALL_MODULEDIR "${CMAKE_INSTALL_LIBDIR}/symmesh")
set(SYMMESH_INSTALL_SCENARIOSDIR "${CMAKE_INSTALL_DATADIR}/symmesh/scenarios")
set(SYMMESH_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
set(SYMMESH_INSTALL_HEADERDIR "${CMAKE_INSTALL_INCLUDEDIR}/symmesh")
set(SYMMESH_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/symmesh")

# `dir` relative to the installed executable's folder (an absolute dir stays absolute: such
# a tree cannot be moved).
function(symmesh_path_from_bin out dir)
  if(IS_ABSOLUTE "${dir}" OR IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    file(RELATIVE_PATH relative "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${dir}")
    set(${out} "${relative}" PARENT_SCOPE)
  endif()
endfunction()
symmesh_path_from_bin(SYMMESH_MODULES_FROM_BIN "${SYMMESH_INSTALL_MODULEDIR}")
symmesh_path_from_bin(SYMMESH_SCENARIOS_FROM_BIN "${SYMMESH_INSTALL_SCENARIOSDIR}")
