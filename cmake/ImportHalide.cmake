# Imports Debian's Halide 14 as the target `Halide::Halide` without find_package(Halide),
# whose config would re-find LLVM 14 and silently rewrite LLVM_DIR (see TOOLCHAIN.md).
find_library(HALIDE_LIBRARY NAMES Halide14 REQUIRED)
find_path(HALIDE_INCLUDE_DIR Halide.h PATH_SUFFIXES halide14 REQUIRED)
add_library(Halide::Halide SHARED IMPORTED GLOBAL)
set_target_properties(Halide::Halide PROPERTIES
  IMPORTED_LOCATION ${HALIDE_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${HALIDE_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS}")
# Header-only access to HalideRuntime.h / HalideBuffer.h for code that links no Halide library.
add_library(Halide::RuntimeHeaders INTERFACE IMPORTED GLOBAL)
set_target_properties(Halide::RuntimeHeaders PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${HALIDE_INCLUDE_DIR})
