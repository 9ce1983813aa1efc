# Shared build settings for ringrl's own targets.

# Warnings and sanitizers apply to our code only (third-party headers come in as -isystem).
function(ringrl_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  if(RINGRL_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
endfunction()

# ringrl_isa_kernels(<sources-var> <avx2.cc> <avx512.cc>): the kernels built once per
# instruction set and picked at run time. On x86-64 with RINGRL_SAMPLER_DISPATCH and without
# RINGRL_NATIVE, appends the AVX2 and AVX-512 translation units to <sources-var> with their
# flags and sets <sources-var>_DISPATCH to TRUE (the caller defines its HAVE_ macros then).
function(ringrl_isa_kernels sources_var avx2_source avx512_source)
  set(dispatch FALSE)
  if(NOT RINGRL_NATIVE AND RINGRL_SAMPLER_DISPATCH AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    set_source_files_properties(${avx2_source} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
    # GCC 12 warns falsely about _mm512_undefined_* inside its own AVX-512 headers.
    set_source_files_properties(${avx512_source} PROPERTIES
      COMPILE_OPTIONS "-mavx512f;-mavx512dq;-mavx512vl;-mavx512bw;-mavx2;-mfma;-Wno-maybe-uninitialized")
    set(${sources_var} ${${sources_var}} ${avx2_source} ${avx512_source} PARENT_SCOPE)
    set(dispatch TRUE)
  endif()
  set(${sources_var}_DISPATCH ${dispatch} PARENT_SCOPE)
endfunction()

if(RINGRL_SANITIZE)
  add_compile_options(-fsanitize=${RINGRL_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${RINGRL_SANITIZE})
endif()

# ringrl_add_library(NAME name ALIAS ringrl::name SOURCES ... PUBLIC_LIBS ... PRIVATE_LIBS ...)
function(ringrl_add_library)
  cmake_parse_arguments(A "" "NAME;ALIAS" "SOURCES;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(${A_NAME} STATIC ${A_SOURCES})
  add_library(${A_ALIAS} ALIAS ${A_NAME})
  target_include_directories(${A_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${A_NAME} PUBLIC ${A_PUBLIC_LIBS} PRIVATE ${A_PRIVATE_LIBS})
  set_target_properties(${A_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  ringrl_target_defaults(${A_NAME})
endfunction()

# ringrl_add_test(NAME name SOURCES ... LIBS ... [LABELS ...] [TIMEOUT s] [NEEDS_CLI] [SERIAL])
# One GoogleTest binary; each TEST becomes its own ctest entry. The binary sees
# RINGRL_BINARY (path of the `ringrl` executable) and RINGRL_SOURCE_DIR; NEEDS_CLI makes the
# test build after `ringrl` (for tests that run the CLI); SERIAL runs each of its tests alone
# (ctest's RUN_SERIAL: nothing else beside it, for tests that load every core).
# Label "concurrency" marks tests that CI also runs under TSan.
function(ringrl_add_test)
  cmake_parse_arguments(A "NEEDS_CLI;SERIAL" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  add_executable(${A_NAME} ${A_SOURCES})
  target_link_libraries(${A_NAME} PRIVATE ${A_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${A_NAME} PRIVATE
    RINGRL_BINARY="$<TARGET_FILE:ringrl>" RINGRL_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(A_NEEDS_CLI)
    add_dependencies(${A_NAME} ringrl)
  endif()
  ringrl_target_defaults(${A_NAME})
  # Remembered for the aggregate targets (ringrl_tests, ringrl_concurrency_tests) that let a
  # sanitizer build compile only what its tests need.
  set_property(GLOBAL APPEND PROPERTY RINGRL_TEST_TARGETS ${A_NAME})
  if("concurrency" IN_LIST A_LABELS)
    set_property(GLOBAL APPEND PROPERTY RINGRL_CONCURRENCY_TEST_TARGETS ${A_NAME})
  endif()
  set(props TIMEOUT ${A_TIMEOUT})
  if(A_SERIAL)  # runs alone: no other test beside it
    list(APPEND props RUN_SERIAL TRUE)
  endif()
  if(A_LABELS)  # an empty LABELS value would swallow the next property name
    list(APPEND props LABELS "${A_LABELS}")
  endif()
  gtest_discover_tests(${A_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES ${props})
endfunction()

# ringrl_tests: every test binary (and the `ringrl` binary the CLI tests run);
# ringrl_concurrency_tests: the ones labelled "concurrency" (what CI runs under TSan).
# Call once, after every test was added.
function(ringrl_add_test_aggregates)
  get_property(all GLOBAL PROPERTY RINGRL_TEST_TARGETS)
  get_property(conc GLOBAL PROPERTY RINGRL_CONCURRENCY_TEST_TARGETS)
  add_custom_target(ringrl_tests DEPENDS ringrl ${all})
  add_custom_target(ringrl_concurrency_tests DEPENDS ${conc})
endfunction()
