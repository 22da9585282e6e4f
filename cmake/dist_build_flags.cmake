# How fast the project builds: the test drivers' optimization level and, for CI, debug info.
# Most of the build is test code (the property suite alone is about 40%), and most of its compile
# time goes to optimizing and describing it; the libraries under test keep the build type's flags.

# RelWithDebInfo and Debug emit -g by default; CI turns it off (it never debugs its build), which
# cuts the compile time by about a third.
option(DIST_DEBUG_INFO "Emit debug information in RelWithDebInfo and Debug builds" ON)
if(NOT DIST_DEBUG_INFO)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-g0>)
endif()

set(DIST_TEST_OPT "-Og" CACHE STRING
    "Optimization of the test and property drivers (the code they test keeps the build type's)")

# dist_test_driver(target): compiles a test executable's own sources with DIST_TEST_OPT.
function(dist_test_driver target)
  if(DIST_TEST_OPT)
    target_compile_options(${target} PRIVATE ${DIST_TEST_OPT})
  endif()
endfunction()
