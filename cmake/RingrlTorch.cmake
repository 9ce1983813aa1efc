# Finds LibTorch for the learner and the torch-using actors.
#
# Order: an explicit Torch_DIR / CMAKE_PREFIX_PATH wins; otherwise the LibTorch inside the
# python3 `torch` wheel (CUDA build on PyPI); otherwise a system LibTorch (Debian's libtorch-dev,
# CPU only). RINGRL_TORCH_SOURCE=python|system forces one of the two.
set(RINGRL_TORCH_SOURCE "auto" CACHE STRING "Where LibTorch comes from: auto, python or system")
set_property(CACHE RINGRL_TORCH_SOURCE PROPERTY STRINGS auto python system)

if(NOT Torch_DIR AND NOT RINGRL_TORCH_SOURCE STREQUAL "system")
  find_program(RINGRL_TORCH_PYTHON NAMES python3 python)
  if(RINGRL_TORCH_PYTHON)
    execute_process(
      COMMAND ${RINGRL_TORCH_PYTHON} -c "import torch.utils, sys; sys.stdout.write(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE _ringrl_torch_prefix RESULT_VARIABLE _ringrl_torch_rc ERROR_QUIET)
  endif()
  if(_ringrl_torch_rc EQUAL 0 AND _ringrl_torch_prefix)
    message(STATUS "ringrl: LibTorch from the python torch wheel: ${_ringrl_torch_prefix}")
    # The wheel's root (holding lib/) goes first too: TorchConfig's find_library calls would
    # otherwise find a system libtorch (Debian's 1.13) before the wheel's own libraries.
    get_filename_component(RINGRL_TORCH_ROOT "${_ringrl_torch_prefix}/../.." ABSOLUTE)
    list(PREPEND CMAKE_PREFIX_PATH "${_ringrl_torch_prefix}" "${RINGRL_TORCH_ROOT}")
  elseif(RINGRL_TORCH_SOURCE STREQUAL "python")
    message(FATAL_ERROR "ringrl: RINGRL_TORCH_SOURCE=python but '${RINGRL_TORCH_PYTHON} -c \"import torch\"' failed")
  endif()
endif()

# CUDA 12.9+ ships only the header-only nvtx3; older Torch configs still ask for CUDA::nvToolsExt.
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND AND TARGET CUDA::nvtx3 AND NOT TARGET CUDA::nvToolsExt)
  add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
  target_link_libraries(CUDA::nvToolsExt INTERFACE CUDA::nvtx3)
  set(TORCH_CUDA_USE_NVTX3 ON)
endif()

if(RINGRL_TORCH_ROOT AND NOT CUDAToolkit_FOUND)
  # The PyPI wheel is a CUDA build, and its CMake package insists on a CUDA toolkit (nvcc and
  # the CUDA libraries) even for CPU code: a machine without one would stop here. `torch` is
  # then made from the wheel's own CPU libraries, with the headers, definitions and standard
  # the package gives: a CPU-only LibTorch (no torch_cuda target, no CUDA device; docs/gpu.md).
  set(TORCH_INSTALL_PREFIX "${RINGRL_TORCH_ROOT}")
  execute_process(COMMAND ${RINGRL_TORCH_PYTHON} -c "import torch, sys; sys.stdout.write(torch.__version__.split('+')[0])"
                  OUTPUT_VARIABLE Torch_VERSION RESULT_VARIABLE _ringrl_torch_rc)
  set(TORCH_INCLUDE_DIRS "${TORCH_INSTALL_PREFIX}/include" "${TORCH_INSTALL_PREFIX}/include/torch/csrc/api/include")
  set(TORCH_LIBRARY "${TORCH_INSTALL_PREFIX}/lib/libtorch_cpu.so")
  set(c10_LIBRARY "${TORCH_INSTALL_PREFIX}/lib/libc10.so")
  if(NOT _ringrl_torch_rc EQUAL 0 OR NOT EXISTS "${TORCH_LIBRARY}" OR NOT EXISTS "${c10_LIBRARY}")
    message(FATAL_ERROR "ringrl: no CUDA toolkit, and the torch wheel under ${TORCH_INSTALL_PREFIX} has no "
                        "lib/libtorch_cpu.so and lib/libc10.so to build on the CPU with")
  endif()
  add_library(torch INTERFACE IMPORTED)
  set_target_properties(torch PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
    INTERFACE_COMPILE_DEFINITIONS "USE_DISTRIBUTED;USE_C10D_GLOO;USE_RPC;USE_TENSORPIPE"
    INTERFACE_COMPILE_FEATURES cxx_std_20
    INTERFACE_LINK_LIBRARIES "${TORCH_LIBRARY};${c10_LIBRARY}")
  message(STATUS "ringrl: no CUDA toolkit found: LibTorch ${Torch_VERSION} from the wheel's CPU libraries only")
else()
  find_package(Torch REQUIRED)
endif()
if(RINGRL_TORCH_ROOT)
  foreach(_lib TORCH_LIBRARY c10_LIBRARY)
    string(FIND "${${_lib}}" "${RINGRL_TORCH_ROOT}/" _at)
    if(NOT _at EQUAL 0)
      message(FATAL_ERROR "ringrl: ${_lib} is ${${_lib}}, not the wheel's library under ${RINGRL_TORCH_ROOT}/lib; "
                          "remove the build directory's CMakeCache.txt and configure again")
    endif()
  endforeach()
endif()
if(TARGET torch_cuda)
  set(RINGRL_HAVE_TORCH_CUDA ON)
else()
  set(RINGRL_HAVE_TORCH_CUDA OFF)
endif()
message(STATUS "ringrl: Torch ${Torch_VERSION}, torch_cuda target: ${RINGRL_HAVE_TORCH_CUDA}")

# The torch wheel ships its own fmt headers (fmt 12) in its include directory. Every target
# that links torch would then compile spdlog (built against Debian's fmt 9) with fmt 12 and
# fail. A directory holding only a link to the system's fmt headers, searched before torch's,
# keeps one fmt for all our code; torch's public headers do not include fmt.
get_target_property(_fmt_inc fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
list(GET _fmt_inc 0 _fmt_inc)
foreach(_dir IN LISTS TORCH_INCLUDE_DIRS)
  if(EXISTS "${_dir}/fmt/core.h" AND NOT _dir STREQUAL _fmt_inc)
    set(RINGRL_FMT_FIRST_DIR "${CMAKE_BINARY_DIR}/fmt-first")
    file(MAKE_DIRECTORY "${RINGRL_FMT_FIRST_DIR}")
    file(CREATE_LINK "${_fmt_inc}/fmt" "${RINGRL_FMT_FIRST_DIR}/fmt" SYMBOLIC)
    include_directories(BEFORE SYSTEM "${RINGRL_FMT_FIRST_DIR}")
    message(STATUS "ringrl: torch ships fmt headers in ${_dir}; using ${_fmt_inc}/fmt first")
    break()
  endif()
endforeach()
if(Torch_VERSION VERSION_GREATER_EQUAL 2.10)
  # LibTorch's own headers require C++20 from 2.x on; its target raises the standard of the
  # translation units that use it. Everything else stays C++17 (CMAKE_CXX_STANDARD).
  message(STATUS "ringrl: torch translation units compile as C++20 (required by LibTorch ${Torch_VERSION})")
endif()

# The pip wheel's libtorch_cuda needs the wheel's own NCCL/NVSHMEM/cuDNN (found at run time
# through its $ORIGIN runpath); at link time ld would pick older copies from the -rpath of
# the CUDA toolkit instead, so every target linking torch points -rpath-link at the wheel's
# nvidia/*/lib first.
function(ringrl_torch_link_options target)
  if(TORCH_INSTALL_PREFIX)
    file(GLOB _libs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
    foreach(_dir IN LISTS _libs)
      target_link_options(${target} INTERFACE "LINKER:-rpath-link,${_dir}")
    endforeach()
  endif()
endfunction()
