# lit configuration of the malformed-input suite: every case runs a tool on
# one bad file or argument through expect.py (exit status, message, no crash,
# no hang, no partial output).
import os
import sys
import lit.formats

config.name = "tmc-malformed"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".tm"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tmc_obj_root, "tests", "malformed")

config.environment["PATH"] = os.pathsep.join(
    [config.tmc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "ASAN_SYMBOLIZER_PATH", "TMPDIR",
             "TMC_KERNEL_CACHE"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

here = os.path.dirname(__file__)
python = sys.executable
config.substitutions.append(("%expect", python + " " + os.path.join(here, "expect.py")))
config.substitutions.append(("%mkweights", python + " " + os.path.join(here, "make_weights.py")))
config.substitutions.append(("%mktokenizer", python + " " + os.path.join(here, "make_tokenizer.py")))
config.substitutions.append(("%toydecoder", os.path.join(config.tmc_tools_dir, "runtime_toy_decoder")))
config.substitutions.append(("%toy", os.path.join(config.tmc_tools_dir, "runtime_toy_model")))
config.substitutions.append(("%tmc", os.path.join(config.tmc_tools_dir, "tmc")))
config.substitutions.append(("%examples", os.path.join(config.tmc_src_root, "examples")))
config.substitutions.append(("%frontend", os.path.join(config.tmc_src_root, "tests/lit/frontend")))

# ASan reserves terabytes of address space: `ulimit -v` cases cannot run under it.
if config.tmc_sanitize:
    config.available_features.add("sanitize")
    # expect.py's hang limits (120 s unless a case says) times 5: instrumented
    # tmc runs 3-6x slower, more beside the other sanitizer suites on CI's two
    # cores.
    config.environment["TMC_EXPECT_TIMEOUT_SCALE"] = "5"
if os.getuid() == 0:
    config.available_features.add("root")
