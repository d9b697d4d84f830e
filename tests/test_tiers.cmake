# cmake -P: the tiers of tests/CMakeLists.txt hold over every test of a build folder.
#   cmake -DCTEST=<ctest> -DBUILD_DIR=<build> -DEXPECTED=<file> -P tests/test_tiers.cmake
# EXPECTED (written by tests/CMakeLists.txt) sets SLOW, the tests named slow there, and CLI,
# its GoogleTest patterns of cli tests. Fails when a test has no tier or two (the package
# test apart, which has only `package`), when a SLOW name is not a slow test, or when a CLI
# pattern matches no cli test (a suite renamed: its tests would quietly fall back to unit).
# Tests "<program>_NOT_BUILT" (a partial build) are left out: they have no tests to label.
include(${EXPECTED})
set(tiers unit cli slow gpu)

# The names `ctest -N` lists with the extra arguments (a label selection).
function(tests_of out)
  execute_process(COMMAND ${CTEST} --test-dir ${BUILD_DIR} -N ${ARGN}
    OUTPUT_VARIABLE text ERROR_VARIABLE error RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ctest -N ${ARGN} failed (${rc}): ${error}")
  endif()
  string(REGEX MATCHALL "Test +#[0-9]+: [^\n]*" lines "${text}")
  set(names "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^Test +#[0-9]+: " "" name "${line}")
    if(NOT name MATCHES "_NOT_BUILT$")
      list(APPEND names "${name}")
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

tests_of(all)
tests_of(package -L "^package$")
tests_of(tiered -L "^(unit|cli|slow|gpu)$")
list(LENGTH all total)
list(LENGTH package packaged)
list(LENGTH tiered with_a_tier)
set(sum 0)
set(counts "")
foreach(tier IN LISTS tiers)
  tests_of(${tier} -L "^${tier}$")
  list(LENGTH ${tier} n)
  math(EXPR sum "${sum} + ${n}")
  string(APPEND counts " ${tier} ${n}")
endforeach()
message(STATUS "${total} tests:${counts}, package ${packaged}")

set(failures "")
# Disjoint tiers sum to their union; the union and the package test make up the whole.
math(EXPR want "${total} - ${packaged}")
if(NOT sum EQUAL with_a_tier OR NOT with_a_tier EQUAL want)
  foreach(name IN LISTS all)
    set(found "")
    foreach(tier IN LISTS tiers)
      if(name IN_LIST ${tier})
        list(APPEND found ${tier})
      endif()
    endforeach()
    list(LENGTH found n)
    if(name IN_LIST package)
      if(n GREATER 0)
        string(APPEND failures "\n  ${name}: the package test has tiers ${found}")
      endif()
    elseif(NOT n EQUAL 1)
      string(APPEND failures "\n  ${name}: ${n} tiers (${found}); it needs one of ${tiers}")
    endif()
  endforeach()
endif()

foreach(name IN LISTS SLOW)
  if(NOT name IN_LIST slow)
    string(APPEND failures "\n  SLOW names ${name}, which is no slow test of ${BUILD_DIR}")
  endif()
endforeach()

foreach(pattern IN LISTS CLI)
  # A GoogleTest pattern as a regular expression ('*' any run, '?' one character; test names
  # hold no other special character but '.'); "Suite.*" also names the whole-suite test
  # "Suite".
  string(REPLACE "." "\\." regex "${pattern}")
  string(REPLACE "*" ".*" regex "${regex}")
  string(REPLACE "?" "." regex "${regex}")
  if(pattern MATCHES "^([^*?]*)\\.\\*$")
    string(REPLACE "." "\\." suite "${CMAKE_MATCH_1}")
    set(regex "${regex}|${suite}")
  endif()
  set(matched FALSE)
  foreach(name IN LISTS cli)
    if(name MATCHES "^(${regex})$")
      set(matched TRUE)
      break()
    endif()
  endforeach()
  if(NOT matched)
    string(APPEND failures "\n  CLI pattern ${pattern} matches no cli test of ${BUILD_DIR}")
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "tiers (tests/CMakeLists.txt):${failures}")
endif()
