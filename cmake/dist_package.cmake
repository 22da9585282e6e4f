# CPack: `cpack -G DEB` in a build directory makes a .deb of the install (headers, libraries,
# the CMake package, the pkg-config files and distrun), depending on the Debian packages that
# a program built against it needs.
set(DIST_PACKAGE_MAINTAINER "dist developers <dist-dev@localhost>" CACHE STRING
    "Maintainer field of the .deb made by cpack")

set(CPACK_PACKAGE_NAME "libdist-dev")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "MMEngine's distributed-communication API for C++, with a simulated cluster and real backends")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "dist gives C++20 programs mmengine.dist's API (all_reduce, broadcast_object_list, "
  "collect_results, ...) over a simulated cluster inside one process (dist::sim) and real "
  "multi-process backends (dist::real: gloo, mpi, nccl where built), with the distrun launcher.")
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${DIST_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)

# The headers include cereal's; distConfig.cmake finds cereal, dlpack and nlohmann_json, and the
# backends' libraries (linked by consumers of a static build, loaded by a shared one). NCCL and
# CUDA are not Debian packages: a package built with nccl expects them at their build path.
set(depends "libcereal-dev" "libdlpack-dev" "nlohmann-json3-dev")
if(DIST_WITH_GLOO)
  list(APPEND depends "libgloo-dev")
endif()
if(DIST_WITH_MPI)
  list(APPEND depends "libopenmpi-dev")
endif()
list(JOIN depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)

include(CPack)
