# TMC_SANITIZE=address,undefined builds the compiler, the runtime and the tests
# with those sanitizers (`make test` does so in build-asan/). Model
# executables that such a tmc links get the same flag (TMC_SANITIZE_LINK_FLAG),
# so they link the instrumented runtime archives of that build; their generated
# C++ (the executor) is compiled at -O0 (compiler/Toolchain.cpp: 10x faster to
# compile instrumented, and the sanitizer suites compile hundreds of models).
#
# Not instrumented: the LLVM, MLIR and Halide libraries (system packages) and
# the Halide-generated kernels; ASan still checks every access our code makes.
set(TMC_SANITIZE "" CACHE STRING
    "Comma-separated -fsanitize= list for tmc, the runtime and the tests (e.g. address,undefined)")

set(TMC_SANITIZE_LINK_FLAG "")
if(TMC_SANITIZE)
  message(STATUS "tmc: building with -fsanitize=${TMC_SANITIZE}")
  # -fno-sanitize-recover: a UBSan report is an error, not a line in a log;
  # frame pointers give ASan's reports whole stacks. -O1 (after the build
  # type's -O3, so it wins) compiles instrumented code far faster and keeps
  # reports close to the source; the tests it runs are small.
  add_compile_options(-fsanitize=${TMC_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -O1)
  add_link_options(-fsanitize=${TMC_SANITIZE})
  set(TMC_SANITIZE_LINK_FLAG -fsanitize=${TMC_SANITIZE})
endif()
