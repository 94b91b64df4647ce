# Helpers shared by every folder's CMakeLists.txt.

# berth_test(NAME SOURCES... LIBS ...): one GoogleTest executable registered with CTest.
function(berth_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT BERTH_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "BERTH_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endfunction()

# berth_bench(NAME SOURCES... LIBS ...): one Google Benchmark executable (not run by CTest).
function(berth_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT BERTH_BUILD_BENCH)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} benchmark::benchmark)
endfunction()
