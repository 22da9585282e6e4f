# Installation: headers, the dist::dist and dist::sim libraries, and a CMake package so another
# project can `find_package(dist)` and link dist::dist / dist::sim.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/dist DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS dist_core dist_sim EXPORT distTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT distTargets NAMESPACE dist:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dist)

configure_package_config_file(cmake/distConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/distConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dist)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/distConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/distConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/distConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dist)
