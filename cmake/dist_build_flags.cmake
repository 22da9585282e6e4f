# How fast the project builds: the test drivers' optimization level and, for CI, debug info.
# Most of the build is test code (the property suite alone is about 40%), and most of its compile
# time goes to optimizing and describing it; the libraries under test keep the build type's flags.

# RelWithDebInfo and Debug emit -g by default; CI turns it off (it never debugs its build), which
# cuts the compile time by about a third.
option(DIST_DEBUG_INFO "Emit debug information in RelWithDebInfo and Debug builds" ON)
if(NOT DIST_DEBUG_INFO)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-g0>)
endif()

# Deterministic sim ranks are fibers on small stacks, each above a guard region: a frame larger
# than the guard probes it page by page instead of jumping over it into another rank's stack.
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fstack-clash-protection>)

set(DIST_TEST_OPT "-Og" CACHE STRING
    "Optimization of the test and property drivers (the code they test keeps the build type's)")

# Test drivers compile as unity batches: most of a test file's compile time is parsing the same
# headers (gtest, dist's API) as its neighbours. The property suite stays one file per unit (its
# files are large template instantiations that gain nothing and need the parallelism).
option(DIST_UNITY_TESTS "Compile test drivers in unity batches" ON)
set(DIST_UNITY_BATCH 6 CACHE STRING "Test files per unity batch")

# dist_test_driver(target [NO_UNITY]): compiles a test executable's own sources with DIST_TEST_OPT,
# in unity batches unless NO_UNITY.
function(dist_test_driver target)
  cmake_parse_arguments(arg "NO_UNITY" "" "" ${ARGN})
  if(DIST_TEST_OPT)
    target_compile_options(${target} PRIVATE ${DIST_TEST_OPT})
  endif()
  if(DIST_UNITY_TESTS AND NOT arg_NO_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${DIST_UNITY_BATCH})
  endif()
endfunction()
