# Detects what the nccl backend needs (nvcc, NCCL, Thrust, the CUDA runtime) under DIST_CUDA_ROOT
# and sets DIST_WITH_NCCL; when on, enables CUDA. Included from the top level (enable_language must
# run there). When something is missing DIST_NCCL_MISSING says what, and real/nccl builds its stub.
set(DIST_CUDA_ROOT "/usr/local/cuda" CACHE PATH "Where CUDA (nvcc, NCCL, Thrust) is installed")
set(DIST_NCCL_MISSING "")

# check_language compiles a test program, so a broken nvcc also falls back to the stub.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS "${DIST_CUDA_ROOT}/bin/nvcc")
  set(ENV{CUDACXX} "${DIST_CUDA_ROOT}/bin/nvcc")
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  set(DIST_NCCL_MISSING "no working nvcc was found (looked for ${DIST_CUDA_ROOT}/bin/nvcc)")
endif()

if(NOT DIST_NCCL_MISSING)
  find_path(DIST_NCCL_INCLUDE_DIR nccl.h HINTS "${DIST_CUDA_ROOT}/include" NO_DEFAULT_PATH)
  find_library(DIST_NCCL_LIBRARY nccl HINTS "${DIST_CUDA_ROOT}/lib64" "${DIST_CUDA_ROOT}/lib"
               NO_DEFAULT_PATH)
  if(NOT DIST_NCCL_INCLUDE_DIR OR NOT DIST_NCCL_LIBRARY)
    set(DIST_NCCL_MISSING "NCCL (nccl.h, libnccl) was not found under ${DIST_CUDA_ROOT}")
  endif()
endif()

if(NOT DIST_NCCL_MISSING)
  set(CUDAToolkit_ROOT "${DIST_CUDA_ROOT}")
  find_package(CUDAToolkit QUIET)
  list(PREPEND CMAKE_PREFIX_PATH "${DIST_CUDA_ROOT}")
  find_package(Thrust 3 CONFIG QUIET)
  if(NOT CUDAToolkit_FOUND)
    set(DIST_NCCL_MISSING "the CUDA runtime (libcudart) was not found under ${DIST_CUDA_ROOT}")
  elseif(NOT Thrust_FOUND)
    set(DIST_NCCL_MISSING "Thrust 3 (CUDA's CCCL) was not found under ${DIST_CUDA_ROOT}")
  endif()
endif()

if(DIST_NCCL_MISSING)
  option(DIST_WITH_NCCL "Build the nccl backend (needs CUDA, NCCL and Thrust)" OFF)
else()
  option(DIST_WITH_NCCL "Build the nccl backend (needs CUDA, NCCL and Thrust)" ON)
endif()
if(DIST_WITH_NCCL AND DIST_NCCL_MISSING)
  message(FATAL_ERROR "DIST_WITH_NCCL is ON but ${DIST_NCCL_MISSING}")
endif()
if(NOT DIST_WITH_NCCL AND NOT DIST_NCCL_MISSING)
  set(DIST_NCCL_MISSING "DIST_WITH_NCCL was set OFF at configure time")
endif()

if(DIST_WITH_NCCL)
  # 90 = H100/H200; "native" would fail on a machine without a GPU.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures to build device code for")
  endif()
  # CMake 3.25 does not know nvcc's C++20 flag; the .cu file is built as C++17 anyway.
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  enable_language(CUDA)
endif()
