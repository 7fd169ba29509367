# ARM64: when the aarch64 cross compiler is installed (Debian:
# g++-aarch64-linux-gnu), build a second copy of the runtime archives with it
# into lib/aarch64-linux-gnu/, for `tmc compile --target arm64-linux`
# (compiler/Toolchain.cpp). Without it, that target says what to install.
include(ExternalProject)

# Not in the sanitizer tree: its tests (tests/sanitize) leave arm64 out, and
# an aarch64 runtime could not carry the host's sanitizer runtime anyway.
if(TMC_SANITIZE)
  return()
endif()

find_program(TMC_AARCH64_CXX aarch64-linux-gnu-g++)
if(NOT TMC_AARCH64_CXX)
  message(STATUS "aarch64-linux-gnu-g++ not found: --target arm64-linux will be unavailable")
  return()
endif()

# The json headers alone, linked into a directory of their own (see cross/CMakeLists.txt).
get_target_property(_tmc_json_dirs nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
find_path(_tmc_json_dir nlohmann/json.hpp HINTS ${_tmc_json_dirs} REQUIRED)
set(_tmc_cross_include ${PROJECT_BINARY_DIR}/runtime-aarch64-include)
file(MAKE_DIRECTORY ${_tmc_cross_include})
file(CREATE_LINK ${_tmc_json_dir}/nlohmann ${_tmc_cross_include}/nlohmann SYMBOLIC)
# Boost's headers (Beast and Asio, for `MODEL serve`) the same way.
find_path(_tmc_boost_dir boost/beast.hpp REQUIRED)
file(CREATE_LINK ${_tmc_boost_dir}/boost ${_tmc_cross_include}/boost SYMBOLIC)

set(TMC_AARCH64_LIB_DIR ${CMAKE_ARCHIVE_OUTPUT_DIRECTORY}/aarch64-linux-gnu)
ExternalProject_Add(tmr_runtime_aarch64
  SOURCE_DIR ${PROJECT_SOURCE_DIR}/runtime/cross
  BINARY_DIR ${PROJECT_BINARY_DIR}/runtime-aarch64
  CMAKE_ARGS
    -DCMAKE_SYSTEM_NAME=Linux
    -DCMAKE_SYSTEM_PROCESSOR=aarch64
    -DCMAKE_CXX_COMPILER=${TMC_AARCH64_CXX}
    -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_ARCHIVE_OUTPUT_DIRECTORY=${TMC_AARCH64_LIB_DIR}
    -DTMC_SOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DTMC_JSON_INCLUDE_DIR=${_tmc_cross_include}
    -DTMC_HALIDE_INCLUDE_DIR=${HALIDE_INCLUDE_DIR}
  # The runtime's sources live outside SOURCE_DIR: let its own build decide
  # what is out of date, every time (a no-op when nothing is).
  BUILD_ALWAYS ON
  INSTALL_COMMAND ""
  BUILD_BYPRODUCTS ${TMC_AARCH64_LIB_DIR}/libtmr_runtime.a ${TMC_AARCH64_LIB_DIR}/libtmr_main.a)
