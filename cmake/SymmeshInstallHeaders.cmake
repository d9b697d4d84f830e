# Run by `cmake --install` (install(CODE) in cmake/SymmeshInstall.cmake), not at configure
# time: installs the headers of the folders in SYMMESH_HEADER_FOLDERS (under
# SYMMESH_HEADER_SOURCE) into SYMMESH_HEADER_DESTINATION/<folder>/, each rewritten so that
# its repository-relative includes of those folders become namespaced:
#   #include "core/device_mesh.hpp"   ->   #include <symmesh/core/device_mesh.hpp>
# The sources keep their own style (the build tree compiles them unchanged); a consumer's
# include directory is <prefix>/include, so the installed headers find each other there.
# Includes of anything else (system, Eigen, yaml-cpp, a folder that is not installed) are
# left alone; tests/package/run.sh fails on any quoted include left in the install tree.
#
# Inputs: SYMMESH_HEADER_SOURCE (the source tree), SYMMESH_HEADER_FOLDERS (a list),
# SYMMESH_HEADER_DESTINATION (relative to the install prefix, or absolute), and the
# variables CMake's install scripts have: CMAKE_INSTALL_PREFIX (--prefix included), $DESTDIR,
# CMAKE_INSTALL_MANIFEST_FILES. Its own variables stay in the block.
block(SCOPE_FOR VARIABLES PROPAGATE CMAKE_INSTALL_MANIFEST_FILES)
if(IS_ABSOLUTE "${SYMMESH_HEADER_DESTINATION}")
  set(destination "$ENV{DESTDIR}${SYMMESH_HEADER_DESTINATION}")
else()
  set(destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${SYMMESH_HEADER_DESTINATION}")
endif()

list(JOIN SYMMESH_HEADER_FOLDERS "|" folders)
# `#  include "core/x.hpp"` (any spacing, a trailing comment kept) -> `#  include <symmesh/core/x.hpp>`.
set(own_include "(#[ \t]*include[ \t]*)\"((${folders})/[^\"\n]*)\"")

foreach(folder IN LISTS SYMMESH_HEADER_FOLDERS)
  file(GLOB_RECURSE headers RELATIVE "${SYMMESH_HEADER_SOURCE}"
    "${SYMMESH_HEADER_SOURCE}/${folder}/*.hpp")
  list(SORT headers)
  foreach(header IN LISTS headers)
    file(READ "${SYMMESH_HEADER_SOURCE}/${header}" text)
    string(REGEX REPLACE "${own_include}" "\\1<symmesh/\\2>" text "${text}")
    set(target "${destination}/${header}")
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${target}")
    # As install(FILES) does: an unchanged file keeps its time stamp (no rebuild of consumers).
    if(EXISTS "${target}")
      file(READ "${target}" installed)
      if(installed STREQUAL text)
        if(NOT CMAKE_INSTALL_MESSAGE STREQUAL "NEVER" AND NOT CMAKE_INSTALL_MESSAGE STREQUAL "LAZY")
          message(STATUS "Up-to-date: ${target}")
        endif()
        continue()
      endif()
    endif()
    if(NOT CMAKE_INSTALL_MESSAGE STREQUAL "NEVER")
      message(STATUS "Installing: ${target}")
    endif()
    file(WRITE "${target}" "${text}")
  endforeach()
endforeach()
endblock()
