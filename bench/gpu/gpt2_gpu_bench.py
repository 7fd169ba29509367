#!/usr/bin/env python3
"""GPT-2 small on one GPU: tmc's CUDA executable against PyTorch, same weights.

Runs on the GPU machine (it needs torch with CUDA and numpy, not tmc):

  python3 bench/gpu/gpt2_gpu_bench.py --exe gpt2-cuda --manifest manifest.json --out DIR

where gpt2-cuda is `tmc compile examples/gpt2-small.tm --target cuda` and
manifest.json `tmc manifest examples/gpt2-small.tm --json`, both made where
tmc is built (bench/gpu/README.md). Writes seeded weights (normal, std 0.02;
norms 1, biases 0) under the manifest's names, then measures in one run:

  - prefill of 128 and 1024 tokens: tmc (`--bench`, median of its runs) and
    PyTorch eager (median of CUDA-event timings after warm-up), f32, and
    PyTorch with TF32 matmuls;
  - a decoding step after a 128-token prompt (median over 32 consecutive
    steps, as llama-bench's tg measures), PyTorch with a KV cache;
  - the logits of the 128-token prompt, tmc against PyTorch f32 (max
    relative error), so both ran the same model.

Prints a table and writes DIR/gpu_bench.json.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import time

import numpy as np
import torch
import torch.nn.functional as F

LAYERS, HEADS, D_MODEL, VOCAB = 12, 12, 768, 50257
HEAD_DIM = D_MODEL // HEADS


def write_weights(manifest, path, seed=2019):
    rng = np.random.default_rng(seed)
    tensors = {}
    for entry in manifest:
        name, shape = entry["name"], entry["shape"]
        if len(shape) == 2:
            tensors[name] = rng.normal(0.0, 0.02, size=shape).astype(np.float32)
        elif "norm" in name and name.endswith(".weight"):
            tensors[name] = np.ones(shape, np.float32)
        else:
            tensors[name] = np.zeros(shape, np.float32)
    header, offset = {}, 0
    for name, array in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 128)  # data 128-byte aligned, as tmc writes it
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for array in tensors.values():
            f.write(array.tobytes())
    return {name: torch.from_numpy(array).cuda() for name, array in tensors.items()}


class TorchGPT2:
    """GPT-2 small from tmc's tensor names: pre-norm, learned positions, tied head."""

    def __init__(self, w):
        self.w = w

    def layer(self, i, x, cache=None):
        p = f"decoder.layers.{i}."
        w = self.w
        h = F.layer_norm(x, (D_MODEL,), w[p + "norm1.weight"], w[p + "norm1.bias"], 1e-5)
        q, k, v = (F.linear(h, w[p + f"self_attn.{n}.weight"], w[p + f"self_attn.{n}.bias"])
                   for n in "qkv")
        b, t, _ = x.shape
        q, k, v = (a.view(b, t, HEADS, HEAD_DIM).transpose(1, 2) for a in (q, k, v))
        if cache is not None:
            if i in cache:
                k = torch.cat([cache[i][0], k], 2)
                v = torch.cat([cache[i][1], v], 2)
            cache[i] = (k, v)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
        x = x + F.linear(a.transpose(1, 2).reshape(b, t, D_MODEL), w[p + "self_attn.o.weight"],
                         w[p + "self_attn.o.bias"])
        h = F.layer_norm(x, (D_MODEL,), w[p + "norm2.weight"], w[p + "norm2.bias"], 1e-5)
        h = F.gelu(F.linear(h, w[p + "ffn.up.weight"], w[p + "ffn.up.bias"]), approximate="tanh")
        return x + F.linear(h, w[p + "ffn.down.weight"], w[p + "ffn.down.bias"])

    def __call__(self, ids, start=0, cache=None):
        w = self.w
        x = w["embed.tokens"][ids] + w["embed.positions"][start:start + ids.shape[1]]
        for i in range(LAYERS):
            x = self.layer(i, x, cache)
        x = F.layer_norm(x, (D_MODEL,), w["decoder.final_norm.weight"],
                         w["decoder.final_norm.bias"], 1e-5)
        return x @ w["embed.tokens"].t()


def cuda_median_ms(fn, warmup=3, runs=10):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def torch_decode_ms(model, prompt, steps=32):
    cache = {}
    with torch.no_grad():
        logits = model(prompt, 0, cache)
        token = logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()
        times = []
        for s in range(steps):
            start = time.perf_counter()
            logits = model(token, prompt.shape[1] + s, cache)
            token = logits[:, -1:].argmax(-1)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def tmc_run(exe, weights, tokens, extra):
    cmd = [exe, "--weights", weights, "--tokens", ",".join(map(str, tokens)), "--json"] + extra
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exe", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--out", required=True, help="where gpu_bench.json goes")
    parser.add_argument("--work", default="/tmp/gpt2-gpu-bench", help="weights and logits")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    weights_path = os.path.join(args.work, "gpt2.safetensors")
    w = write_weights(json.load(open(args.manifest)), weights_path)
    model = TorchGPT2(w)
    rows = {}
    gen = torch.Generator().manual_seed(1)
    for tokens in (128, 1024):
        ids = torch.randint(0, VOCAB, (1, tokens), generator=gen)
        got = tmc_run(args.exe, weights_path, ids[0].tolist(), ["--bench", "--bench-runs", "10"])
        ids_cuda = ids.cuda()
        with torch.no_grad():
            torch.backends.cuda.matmul.allow_tf32 = False
            f32 = cuda_median_ms(lambda: model(ids_cuda))
            torch.backends.cuda.matmul.allow_tf32 = True
            tf32 = cuda_median_ms(lambda: model(ids_cuda))
            torch.backends.cuda.matmul.allow_tf32 = False
        rows[f"prefill {tokens}"] = {"tmc_ms": got["prefill_ms"], "torch_f32_ms": f32,
                                     "torch_tf32_ms": tf32}
    prompt = torch.randint(0, VOCAB, (1, 128), generator=gen)
    got = tmc_run(args.exe, weights_path, prompt[0].tolist(),
                  ["--max-new", "32", "--bench", "--bench-runs", "3"])
    rows["decode step after 128"] = {"tmc_ms": got["decode_ms"],
                                     "torch_f32_ms": torch_decode_ms(model, prompt.cuda())}
    # The same model on both sides: the prompt's logits.
    npy = os.path.join(args.work, "tmc_logits.npy")
    tmc_run(args.exe, weights_path, prompt[0].tolist(), ["--output", npy])
    with torch.no_grad():
        want = model(prompt.cuda()).double().cpu().numpy()
    got_logits = np.load(npy).astype(np.float64)
    error = float(np.abs(got_logits - want).max() / np.abs(want).max())
    result = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows,
              "logits_max_relative_error": error}
    json.dump(result, open(os.path.join(args.out, "gpu_bench.json"), "w"), indent=1)
    print(f"{result['gpu']}, torch {torch.__version__}; prompt logits tmc vs torch f32: "
          f"max relative error {error:.2e}")
    print(f"{'':24s} {'tmc ms':>9s} {'torch f32':>10s} {'torch tf32':>10s} {'tmc/f32':>8s}")
    for name, row in rows.items():
        tf32 = row.get("torch_tf32_ms", math.nan)
        print(f"{name:24s} {row['tmc_ms']:9.3f} {row['torch_f32_ms']:10.3f} {tf32:10.3f} "
              f"{row['tmc_ms'] / row['torch_f32_ms']:8.2f}x")


if __name__ == "__main__":
    main()
