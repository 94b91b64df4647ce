# Helpers shared by every folder's CMakeLists.txt.

# _berth_executable(NAME FRAMEWORK_LIBS SOURCES... LIBS ...): NAME built from SOURCES and linked with LIBS and
# FRAMEWORK_LIBS (a list).
function(_berth_executable name framework_libs)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} ${framework_libs})
endfunction()

# berth_test(NAME [MAIN OBJLIB] SOURCES... LIBS ...): one GoogleTest executable registered with CTest;
# its main() is GoogleTest's, or the OBJECT library MAIN's (agent/shim/testing: binaries that start
# container supervisors).
function(berth_test name)
  if(NOT BERTH_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "MAIN" "" ${ARGN})
  if(T_MAIN)
    _berth_executable(${name} "GTest::gmock;GTest::gtest;${T_MAIN}" ${T_UNPARSED_ARGUMENTS})
  else()
    _berth_executable(${name} "GTest::gmock;GTest::gtest_main" ${ARGN})
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "BERTH_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endfunction()

# berth_bench(NAME SOURCES... LIBS ...): one Google Benchmark executable (not run by CTest).
function(berth_bench name)
  if(NOT BERTH_BUILD_BENCH)
    return()
  endif()
  _berth_executable(${name} benchmark::benchmark ${ARGN})
endfunction()
