#!/usr/bin/python3
# run_hf.py - Hugging Face model folders through `tmc import`, against the
# float64 reference of hf_models.py.
#
#   run_hf.py TMC WORKDIR [--target T] [--only NAME ...] [--skip NAME ...]
#
# For each case: writes a folder as save_pretrained would (hf_checkpoint),
# runs `TMC import DIR -o DIR/model.tm` (the spec must say
# `weights = huggingface(FAMILY)`), `TMC compile` (an identical spec is
# compiled once), then the executable with `--weights DIR` (for the folder
# with bert-base-uncased's names, whose BertForMaskedLM config tmc import
# refuses, the executable imported from the `bert` case):
# - a causal LM: `--tokens P --output` (the prompt's logits), then
#   `--tokens P --max-new 32 --json --output`: the "generated" ids of the
#   JSON line must be the reference's greedy ids, and every row of the
#   output, prompt and decoding steps, must match the reference run on the
#   prompt and the generated ids (teacher-forced);
# - an encoder: `--tokens P --lengths L --segments S --output` (rows past L
#   are padding, not compared) and the same without --lengths.
# Each comparison's max |tmc - reference| / max |reference| must be at most
# 1e-4. The prompts are drawn from a fixed seed, and a prompt whose reference
# continuation has a near tie (two logits within 1e-4 of the step's largest)
# is replaced by the next draw, so that f32 rounding cannot flip a token.
# Then bad inputs, each of which must end with a non-zero status (not a
# signal) and a message naming the culprit: a folder without weights, a
# missing shard, a misshapen and a missing tensor, and configs that `tmc
# import` must refuse (rope_scaling, model_type t5, n_layer 0, and
# BertForQuestionAnswering, whose span head the language does not have).
# Prints one line per case and exits 1 if any failed.

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "parity"))
import hf_checkpoint  # noqa: E402
import hf_configs  # noqa: E402
import hf_models  # noqa: E402
import safetensors_io  # noqa: E402

TOLERANCE = 1e-4
# A reference continuation whose best two logits at some step lie closer
# than this (relative to the step's max |logit|) is a near tie: its prompt
# is not used.
NEAR_TIE = 1e-4
NEW_TOKENS = 32
PROMPT_TRIES = 20


class Case:
    """One folder: `kind` written with these options, run on prompts of
    these lengths (a causal LM) or on one padded input (an encoder)."""

    def __init__(self, name, kind, dtype="float32", shards=1, legacy_names=False,
                 prompt_lengths=(16,), executable_of=None):
        self.name, self.kind, self.dtype, self.shards = name, kind, dtype, shards
        self.legacy_names, self.prompt_lengths = legacy_names, prompt_lengths
        # Run the executable of that earlier case instead of importing.
        self.executable_of = executable_of


CASES = [
    Case("gpt2", "gpt2"),
    Case("gpt2-sharded", "gpt2", shards=2),
    Case("gpt2-bf16", "gpt2", dtype="bfloat16"),
    Case("gpt2-legacy-names", "gpt2", legacy_names=True),
    Case("bert", "bert"),
    # bert-base-uncased's layout: BertForMaskedLM, `bert.` prefix, gamma/beta.
    Case("bert-legacy-names", "bert", legacy_names=True),
    # BertForSequenceClassification: classifier(pooler = true).
    Case("bert-cls", "bert-cls"),
    Case("llama", "llama"),
    Case("llama-f16", "llama", dtype="float16"),
    Case("llama-tied", "llama-tied"),
    # sliding_window 8: the second prompt's 24 tokens and every decoding
    # step reach past it.
    Case("mistral", "mistral", prompt_lengths=(14, 24)),
    Case("qwen2", "qwen2"),
    # use_sliding_window: a window of 6 in layer 1 only (max_window_layers 1).
    Case("qwen2-window", "qwen2-window", prompt_lengths=(14, 24)),
]


class Failure(Exception):
    pass


def run(cmd, what):
    """stdout of a command that must succeed."""
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise Failure(f"{what} exited with {result.returncode}: {' '.join(cmd)}\n"
                      f"{result.stdout}{result.stderr}".rstrip())
    return result.stdout


def relative_error(got, ref):
    if got.shape != ref.shape:
        raise Failure(f"output shape {list(got.shape)}, expected {list(ref.shape)}")
    return float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))


def default_target():
    """x86-64-avx2 where the CPU has AVX2 (its kernels compile in about half
    the time of an AVX-512 host's), else the host."""
    if platform.machine() in ("x86_64", "AMD64"):
        try:
            with open("/proc/cpuinfo") as f:
                if re.search(r"^flags\s*:.*\bavx2\b", f.read(), re.M):
                    return "x86-64-avx2"
        except OSError:
            pass
    return "host"


class Driver:
    def __init__(self, tmc, work, target):
        self.tmc, self.work, self.target = tmc, work, target
        self.executables = {}  # spec text less name and comments -> executable
        self.case_exe = {}  # case name -> (folder, executable)

    def compile(self, folder):
        """Imports `folder` and compiles its spec (once per distinct text)."""
        spec_path = os.path.join(folder, "model.tm")
        run([self.tmc, "import", folder, "-o", spec_path], "tmc import")
        with open(spec_path) as f:
            spec = f.read()
        with open(os.path.join(folder, "config.json")) as f:
            config = json.load(f)
        family = hf_configs.family_of(config)
        named = re.search(r"\bweights\s*=\s*huggingface\(\s*(\w+)\s*\)", spec)
        if not named or named.group(1) != family:
            raise Failure(f"{spec_path} does not say `weights = huggingface({family})`")
        # The same model under another name or comment compiles to the same
        # kernels: the cases differing only in their files share one.
        key = re.sub(r"^\s*model\s+\w+", "model", re.sub(r"#[^\n]*", "", spec), flags=re.M)
        if key not in self.executables:
            exe = os.path.join(folder, "model")
            run([self.tmc, "compile", spec_path, "--target", self.target, "-o", exe],
                "tmc compile")
            self.executables[key] = exe
        return self.executables[key]

    def choose_prompts(self, model, config, lengths, rng):
        """Prompts of `lengths`, each the first draw whose reference greedy
        continuation has no near tie; with their reference ids."""
        prompts = []
        for length in lengths:
            for _ in range(PROMPT_TRIES):
                prompt = [int(t) for t in rng.randint(3, config["vocab_size"] - 1, size=length)]
                ids, margin = hf_models.greedy(model, prompt, NEW_TOKENS)
                if margin >= NEAR_TIE:
                    break
            else:
                raise Failure(f"no prompt of {length} tokens without a near tie in "
                              f"{PROMPT_TRIES} draws")
            prompts.append((prompt, ids))
        return prompts

    def check_lm(self, exe, folder, model, config, case, rng):
        worst, matched, total = 0.0, 0, 0
        for prompt, ref_ids in self.choose_prompts(model, config, case.prompt_lengths, rng):
            tokens = ",".join(map(str, prompt))
            out = folder + "-out.npy"  # outside the folder: the executable's input
            run([exe, "--weights", folder, "--tokens", tokens, "--output", out], "the model")
            ref = hf_models.forward(model, prompt)
            worst = max(worst, relative_error(np.load(out), ref))
            stdout = run([exe, "--weights", folder, "--tokens", tokens, "--max-new",
                          str(NEW_TOKENS), "--json", "--output", out], "the model, generating")
            generated = json.loads(stdout.strip().splitlines()[-1])["generated"]
            got = np.load(out)
            # Rows: the prompt's, then one per decoding step as it computed it.
            sequence = (prompt + generated)[:got.shape[1]]
            worst = max(worst, relative_error(got, hf_models.forward(model, sequence)))
            total += NEW_TOKENS
            matched += sum(a == b for a, b in zip(generated, ref_ids))
            if generated != ref_ids:
                step = next((i for i, (a, b) in enumerate(zip(generated, ref_ids)) if a != b),
                            min(len(generated), len(ref_ids)))
                raise Failure(f"prompt of {len(prompt)} tokens: generated {generated}, the "
                              f"reference {ref_ids} (first difference at step {step}); max "
                              f"rel err so far {worst:.1e}")
        if worst > TOLERANCE:
            raise Failure(f"max rel err {worst:.1e} > {TOLERANCE:g}")
        return f"max rel err {worst:.1e}, {matched}/{total} tokens"

    def check_encoder(self, exe, folder, model, config, rng):
        length = 18
        tokens = [int(t) for t in rng.randint(3, config["vocab_size"] - 1, size=length)]
        segments = [0] * (length // 2) + [1] * (length - length // 2)
        out = folder + "-out.npy"  # outside the folder: the executable's input
        worst = 0.0
        for valid in (length - 4, None):
            cmd = [exe, "--weights", folder, "--tokens", ",".join(map(str, tokens)),
                   "--segments", ",".join(map(str, segments)), "--output", out]
            if valid is not None:
                cmd += ["--lengths", str(valid)]
            run(cmd, "the model")
            got, ref = np.load(out), hf_models.forward(model, tokens, valid, segments)
            if ref.shape[1] == length and valid is not None:  # per-token rows: drop padding
                got, ref = got[:, :valid], ref[:, :valid]
            worst = max(worst, relative_error(got, ref))
        if worst > TOLERANCE:
            raise Failure(f"max rel err {worst:.1e} > {TOLERANCE:g}")
        return f"max rel err {worst:.1e} (padded to {length - 4} of {length}, and unpadded)"

    def check(self, case, seed):
        folder = os.path.join(self.work, case.name)
        shutil.rmtree(folder, ignore_errors=True)
        hf_checkpoint.write_folder(case.kind, folder, seed=seed, dtype=case.dtype,
                                   shards=case.shards, legacy_names=case.legacy_names)
        config, model = hf_models.load_folder(folder)
        if case.executable_of:
            if case.executable_of not in self.case_exe:
                raise Failure(f"needs the executable of case {case.executable_of}, which "
                              "did not build")
            exe = self.case_exe[case.executable_of][1]
        else:
            exe = self.compile(folder)
        self.case_exe[case.name] = (folder, exe)
        rng = np.random.RandomState(seed + 1)
        if hf_models.is_causal_lm(config):
            return self.check_lm(exe, folder, model, config, case, rng)
        return self.check_encoder(exe, folder, model, config, rng)


def expect_refusal(cmd, needle, what):
    """Runs a command that must fail: a non-zero exit status (not a signal)
    and `needle` in what it printed."""
    result = subprocess.run(cmd, capture_output=True, text=True)
    said = (result.stdout + result.stderr).strip()
    if result.returncode == 0:
        raise Failure(f"{what}: exited with 0, expected an error naming {needle!r}")
    if result.returncode < 0:
        raise Failure(f"{what}: killed by signal {-result.returncode}\n{said}")
    if needle not in said:
        raise Failure(f"{what}: the error does not name {needle!r}:\n{said}")
    return said.splitlines()[-1] if said else ""


def bad_inputs(driver, seed):
    """(name, check) pairs; each check returns the message it saw."""
    work = os.path.join(driver.work, "bad")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    def exe_of(case_name):
        if case_name not in driver.case_exe:
            raise Failure(f"needs the executable of case {case_name}, which did not build")
        return driver.case_exe[case_name][1]

    def gpt2_folder(name, **options):
        folder = os.path.join(work, name)
        hf_checkpoint.write_folder("gpt2", folder, seed=seed, **options)
        return folder

    def run_model(case_name, folder, needle, what):
        return expect_refusal([exe_of(case_name), "--weights", folder, "--tokens", "1,2,3",
                               "--output", os.path.join(work, "out.npy")], needle, what)

    def no_weights():
        folder = os.path.join(work, "no-weights")
        os.makedirs(folder)
        with open(os.path.join(folder, "config.json"), "w") as f:
            f.write(hf_configs.config_text(hf_configs.config_for("gpt2")))
        return run_model("gpt2", folder, folder, "a folder without model.safetensors")

    def missing_shard():
        folder = gpt2_folder("missing-shard", shards=2)
        shard = hf_checkpoint.shard_name(2, 2)
        os.remove(os.path.join(folder, shard))
        return run_model("gpt2-sharded", folder, shard, "an index naming a missing shard")

    def rewrite(folder, change):
        path = os.path.join(folder, hf_checkpoint.SINGLE_FILE)
        tensors = safetensors_io.load_raw(path)[0]
        change(tensors)
        safetensors_io.save(path, tensors, {"format": "pt"})

    def wrong_shape():
        folder = gpt2_folder("wrong-shape")
        name = "transformer.h.0.mlp.c_fc.weight"  # Conv1D [in, out]: written as [out, in]

        def transpose(tensors):
            tensors[name] = np.ascontiguousarray(tensors[name].T)
        rewrite(folder, transpose)
        return run_model("gpt2", folder, name, "a tensor of the wrong shape")

    def missing_head():
        folder = os.path.join(work, "missing-head")
        hf_checkpoint.write_folder("llama", folder, seed=seed)
        rewrite(folder, lambda tensors: tensors.pop("lm_head.weight"))
        return run_model("llama", folder, "lm_head.weight", "an untied model without lm_head")

    def import_refuses(kind, edit, needle, what):
        def check():
            folder = os.path.join(work, what.replace(" ", "-"))
            hf_checkpoint.write_folder(kind, folder, seed=seed)
            path = os.path.join(folder, "config.json")
            with open(path) as f:
                config = json.load(f)
            edit(config)
            with open(path, "w") as f:
                f.write(hf_configs.config_text(config))
            return expect_refusal([driver.tmc, "import", folder, "-o",
                                   os.path.join(folder, "model.tm")], needle, what)
        return check

    return [
        ("folder without weights", no_weights),
        ("missing shard", missing_shard),
        ("wrong shape", wrong_shape),
        ("missing lm_head", missing_head),
        ("rope_scaling", import_refuses(
            "llama", lambda c: c.update(rope_scaling={"type": "linear", "factor": 2.0}),
            "rope_scaling", "llama with linear rope scaling")),
        ("model_type t5", import_refuses(
            "gpt2", lambda c: c.update(model_type="t5",
                                       architectures=["T5ForConditionalGeneration"]),
            "t5", "model type t5")),
        ("n_layer 0", import_refuses("gpt2", lambda c: c.update(n_layer=0), "n_layer",
                                     "gpt2 with n_layer 0")),
        ("BertForQuestionAnswering", import_refuses(
            "bert-cls", lambda c: c.update(architectures=["BertForQuestionAnswering"]),
            "BertForQuestionAnswering", "bert with a question-answering head")),
    ]


def main():
    parser = argparse.ArgumentParser(description="Hugging Face folders through tmc import")
    parser.add_argument("tmc")
    parser.add_argument("work", help="a folder for the model folders and executables")
    parser.add_argument("--target", default=os.environ.get("TMC_HF_TARGET") or default_target(),
                        help="tmc compile --target (default: $TMC_HF_TARGET, else x86-64-avx2 "
                             "on an AVX2 machine, else host)")
    parser.add_argument("--only", nargs="*", help="run these cases (names as printed)")
    parser.add_argument("--skip", nargs="*", default=[],
                        help="leave these cases out (names as printed)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    os.makedirs(args.work, exist_ok=True)
    driver = Driver(os.path.abspath(args.tmc), os.path.abspath(args.work), args.target)
    start, failures = time.monotonic(), 0
    checks = [(case.name, lambda case=case: driver.check(case, args.seed)) for case in CASES]
    checks += [("bad input: " + name, check) for name, check in bad_inputs(driver, args.seed)]
    unknown = set(args.only or []).union(args.skip) - {name for name, _ in checks}
    if unknown:
        parser.error(f"no such case: {', '.join(sorted(unknown))}")
    for name, check in checks:
        if (args.only and name not in args.only) or name in args.skip:
            continue
        try:
            print(f"ok {name}: {check()}", flush=True)
        except Failure as error:
            failures += 1
            print(f"FAIL {name}: {error}", flush=True)
    print(f"{'FAILED' if failures else 'passed'}: {failures} failure(s), "
          f"{len(driver.executables)} compile(s), target {args.target}, "
          f"{time.monotonic() - start:.0f} s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
