# lit configuration for tmc's IR, diagnostics and driver tests.
import os
import lit.formats

config.name = "tmc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".tm", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tmc_obj_root, "tests", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.tmc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# The suite's shared kernel cache (tests/CMakeLists.txt), which lit would
# otherwise leave out of the tests' environment.
if "TMC_KERNEL_CACHE" in os.environ:
    config.environment["TMC_KERNEL_CACHE"] = os.environ["TMC_KERNEL_CACHE"]
# `UNSUPPORTED: sanitized` keeps a test out of the TMC_SANITIZE build's run:
# the precision tests, whose time under ASan is compiling whole models while
# their lowering code runs instrumented in the kernel unit tests; tests of
# generated code only (no_libm_calls, the mutants of emit_stmt_asm); and
# executor_batching, whose generator paths sanitize-e2e runs.
if getattr(config, "tmc_sanitize", ""):
    config.available_features.add("sanitized")
config.substitutions.append(("%tmc-opt", os.path.join(config.tmc_tools_dir, "tmc-opt")))
config.substitutions.append(("%tmc", os.path.join(config.tmc_tools_dir, "tmc")))
config.substitutions.append(("%examples", os.path.join(config.tmc_src_root, "examples")))
