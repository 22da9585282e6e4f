# Unit tests: the test executables of the library folders (reference, core, sim, real), not the
# property suite, the benchmarks or the examples. CI runs them once, under AddressSanitizer +
# UndefinedBehaviorSanitizer (ci/sanitize), and runs everything else in the optimized build
# (ci/test). dist_unit_test(<target>) marks one (after dist_test_driver's flags): target
# `unit_tests` builds them all, their ctest tests carry the label `unit` (given where they are
# registered), and -DDIST_UNIT_TESTS_IN_ALL=OFF leaves them out of `all`.
option(DIST_UNIT_TESTS_IN_ALL "Build the unit test executables as part of 'all'" ON)
if(NOT TARGET unit_tests)
  add_custom_target(unit_tests)
endif()

function(dist_unit_test target)
  dist_test_driver(${target})
  add_dependencies(unit_tests ${target})
  if(NOT DIST_UNIT_TESTS_IN_ALL)
    set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
endfunction()
