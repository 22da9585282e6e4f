# Installation: headers, the dist::dist, dist::sim and dist::real libraries (with the static
# backend libraries dist::real links), dist::benchmark, the distrun launcher and dist_calibrate, and
# a CMake package so another project can `find_package(dist)` and link dist::dist / dist::sim / dist::real.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/dist DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The backend libraries are static and linked privately by
# dist_real: a consumer's link line needs them (and Gloo and MPI, when built with them, which
# distConfig.cmake finds).
# A shared build links them into libdist_real.so instead, and installs none of them.
# The network model (dist_model) is static in the same way, linked by dist_sim.
if(BUILD_SHARED_LIBS)
  set(dist_installed_backends "")
else()
  set(dist_installed_backends ${DIST_BACKEND_TARGETS} dist_model)
endif()
# dist::benchmark (<dist/benchmark.hpp>'s interface target) when Google Benchmark was found; the
# package's config then finds Google Benchmark too.
if(TARGET dist_benchmark)
  set(dist_installed_benchmark dist_benchmark)
  set(DIST_WITH_BENCHMARK ON)
else()
  set(dist_installed_benchmark "")
  set(DIST_WITH_BENCHMARK OFF)
endif()
install(TARGETS dist_core dist_sim dist_real ${dist_installed_backends} ${dist_installed_benchmark}
        EXPORT distTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT distTargets NAMESPACE dist:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dist)
install(TARGETS distrun dist_calibrate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

configure_package_config_file(cmake/distConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/distConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dist)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/distConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/distConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/distConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dist)
