# Shared builds (-DBUILD_SHARED_LIBS=ON): dist::dist, dist::sim and dist::real become shared
# libraries with hidden symbols, exporting only what include/dist/export.hpp's DIST_API marks; the
# backend libraries stay static (position-independent) inside libdist_real.so.
option(BUILD_SHARED_LIBS "Build dist::dist, dist::sim and dist::real as shared libraries" OFF)
set(DIST_STATIC ON)
if(BUILD_SHARED_LIBS)
  set(DIST_STATIC OFF)
  set(CMAKE_CXX_VISIBILITY_PRESET hidden)
  set(CMAKE_CUDA_VISIBILITY_PRESET hidden)
  set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  # A library must resolve every symbol it uses at its own link: a missing DIST_API on an internal
  # another dist library calls shows up when dist is built, not in a consumer's link.
  string(APPEND CMAKE_SHARED_LINKER_FLAGS " -Wl,--no-undefined")
  # An installed library finds the others beside it wherever the prefix is moved.
  set(CMAKE_INSTALL_RPATH "$ORIGIN")
endif()

# dist_shared_versions(targets...): the shared libraries' file version and soname (major.minor
# while the version is 0.x: every minor release may break the ABI).
function(dist_shared_versions)
  set_target_properties(${ARGN} PROPERTIES VERSION ${PROJECT_VERSION}
                        SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
endfunction()
