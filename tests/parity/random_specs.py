#!/usr/bin/python3
# random_specs.py - Random valid small specs for the parity suite.
#
#   random_specs.py --seed N --write DIR     write DIR/rand_N.tm, print its path
#   random_specs.py --seed N                 print the spec
#   random_specs.py --check TMC DIR [--count N]
#                                            `tmc check` every spec of seeds 1..N
#                                            (default 300): each must be accepted
#
# A hunt for bugs compares each with PyTorch (tests/parity/README.md):
#   random_specs.py --seed 7 --write /tmp/r && \
#     run_parity.py --tmc build/bin/tmc --spec-file /tmp/r/rand_7.tm --work /tmp/r/7
#
# Draws from the grammar of docs/spec-language.md (the contract), not from a
# list of fixed specs: every model-level key (vocab, d_model, max_seq,
# position, embed_scale, embed_norm, segments, share_embeddings, output with
# its arguments, dtype, precision, kv_cache), every stack key (layers, heads,
# kv_heads, head_dim, d_ff, ffn, norm, final_norm, bias, mask, cross_attention,
# attention, precision, kv_cache) and `layers A..B { }` overrides of every key
# that may be overridden, every mask term (none, causal, padding,
# sliding_window, dilated_window, global, random) in sums, in encoders,
# decoders and encoder-decoders. Keys are sometimes left out (their defaults)
# and call arguments sometimes omitted. Sizes stay small (d_model <= 96,
# layers <= 3, max_seq <= 64, vocab <= 128) so a spec compiles in seconds.
#
# A drawn spec is checked against the contract's validity rules (valid()) and
# redrawn until it passes, so every spec written is one tmc must accept; the
# run_parity.py plan's runs fit any max_seq (a generating decoder decodes
# fewer tokens below max_seq 34), so max_seq is drawn from 1 up. `weights = huggingface(...)` is not drawn: run_parity.py writes canonical weights with tmc init-weights.
# Deterministic per seed (random.Random(seed), no other source).

import argparse
import os
import random
import subprocess
import sys

NORM_KINDS = ["layernorm", "rmsnorm"]
FFNS = ["relu", "gelu", "gelu_tanh", "silu", "swiglu", "geglu"]
PRECISIONS = ["f32", "bf16", "int8", "q4"]
KV_CACHES = ["f32", "f16", "bf16"]
EPS = ["1e-5", "1e-6", "1e-12", "0.001", "1e-05"]


class Draw:
    def __init__(self, rng):
        self.r = rng

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq, weights=None):
        return self.r.choices(seq, weights=weights)[0] if weights else self.r.choice(seq)


def norm_call(d, kind=None):
    kind = kind or d.pick(NORM_KINDS)
    if d.chance(0.2):
        return {"kind": kind, "eps": None}
    return {"kind": kind, "eps": d.pick(EPS)}


def norm_text(n):
    return f"{n['kind']}()" if n["eps"] is None else f"{n['kind']}(eps = {n['eps']})"


def draw_mask(d, decoder, max_seq, linformer):
    """A list of mask terms (dicts)."""
    if linformer:
        return [{"kind": d.pick(["none", "padding"])}]
    if d.chance(0.15):
        return [{"kind": "none"}]
    terms = []
    if decoder:
        if d.chance(0.8):
            terms.append({"kind": "causal"})
    elif d.chance(0.15):
        terms.append({"kind": "causal"})
    if d.chance(0.5):
        terms.append({"kind": "padding"})
    if d.chance(0.35):
        terms.append({"kind": "sliding_window", "size": d.r.randint(1, max_seq)})
    if d.chance(0.25):
        terms.append({"kind": "dilated_window", "size": d.r.randint(1, max_seq),
                      "dilation": d.r.randint(1, 4)})
    if d.chance(0.25):
        count = d.r.randint(1, min(3, max_seq))
        terms.append({"kind": "global", "tokens": sorted(d.r.sample(range(max_seq), count))})
    if d.chance(0.2):
        term = {"kind": "random", "per_row": d.r.randint(1, min(6, max_seq))}
        if d.chance(0.7):
            term["seed"] = d.r.randint(0, 1000)
        terms.append(term)
    if not terms:
        terms = [{"kind": d.pick(["causal", "padding"] if decoder else ["none", "padding"])}]
    d.r.shuffle(terms)
    return terms


def mask_text(terms):
    out = []
    for t in terms:
        k = t["kind"]
        if k in ("none", "causal", "padding"):
            out.append(k)
        elif k == "sliding_window":
            out.append(f"sliding_window(size = {t['size']})")
        elif k == "dilated_window":
            out.append(f"dilated_window(size = {t['size']}, dilation = {t['dilation']})")
        elif k == "global":
            out.append(f"global(tokens = [{', '.join(map(str, t['tokens']))}])")
        elif k == "random":
            seed = f", seed = {t['seed']}" if "seed" in t else ""
            out.append(f"random(per_row = {t['per_row']}{seed})")
    return " + ".join(out)


def mask_rows_ok(terms, decoder, max_seq):
    """No row without a key in a full sequence (the contract's compile-time
    error), computed as the contract says."""
    kinds = [t["kind"] for t in terms]
    allowing = [t for t in terms if t["kind"] not in ("causal", "padding", "none")]
    MASK64 = (1 << 64) - 1
    for i in range(max_seq):
        keys = set()
        if not allowing:
            keys = set(range(max_seq))
        for t in allowing:
            if t["kind"] in ("sliding_window", "dilated_window"):
                w = t["size"]
                for j in range(max_seq):
                    inside = (i - w < j <= i) if decoder else abs(i - j) * 2 <= w
                    if t["kind"] == "dilated_window":
                        inside = inside and (i - j) % t["dilation"] == 0
                    if inside:
                        keys.add(j)
            elif t["kind"] == "global":
                for g in t["tokens"]:
                    if i == g:
                        keys |= set(range(max_seq))
                    keys.add(g)
            elif t["kind"] == "random":
                for r in range(t["per_row"]):
                    z = (t.get("seed", 0) + (i * t["per_row"] + r + 1) * 0x9E3779B97F4A7C15) & MASK64
                    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
                    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
                    keys.add((z ^ (z >> 31)) % max_seq)
        if "causal" in kinds:
            keys = {j for j in keys if j <= i}
        if not keys:
            return False
    return True


STACK_LAYER_KEYS = ["heads", "kv_heads", "head_dim", "d_ff", "ffn", "norm", "bias", "mask",
                    "attention", "precision", "kv_cache"]


def draw_layer_keys(d, m, decoder, keys_wanted, stack_keys):
    """Values for `keys_wanted` (a stack block or an override)."""
    out = {}
    dm, max_seq = m["d_model"], m["max_seq"]
    for key in keys_wanted:
        if key == "heads":
            divisors = [h for h in range(1, 9) if dm % h == 0]
            out[key] = d.pick(divisors) if d.chance(0.75) else d.r.randint(1, 8)
        elif key == "kv_heads":
            out[key] = None  # resolved after heads
        elif key == "head_dim":
            out[key] = d.r.randint(2, 24)
        elif key == "d_ff":
            out[key] = d.r.randint(1, 160)
        elif key == "ffn":
            out[key] = d.pick(FFNS)
        elif key == "norm":
            out[key] = (d.pick(["pre", "post"]), norm_call(d))
        elif key == "bias":
            out[key] = d.chance(0.6)
        elif key == "attention":
            if d.chance(0.25):
                out[key] = ("linformer", d.r.randint(1, max_seq) if d.chance(0.95) else None)
            else:
                out[key] = ("full", None)
        elif key == "mask":
            out[key] = None  # after attention
        elif key == "precision":
            out[key] = d.pick(PRECISIONS, [6, 1, 1, 1])
        elif key == "kv_cache":
            out[key] = d.pick(KV_CACHES, [3, 1, 1])
    if "kv_heads" in out:
        heads = out.get("heads", stack_keys.get("heads", 1))
        divs = [k for k in range(1, heads + 1) if heads % k == 0]
        out["kv_heads"] = d.pick(divs)
    att = out.get("attention", stack_keys.get("attention", ("full", None)))
    if att[0] == "linformer" and "mask" not in out and d.chance(0.8):
        out["mask"] = None  # linformer takes only none or padding
    if "mask" in out:
        out["mask"] = draw_mask(d, decoder, max_seq, att[0] == "linformer")
    return out


def resolve(m, stack, kind, overrides_of_model):
    """Per-layer resolved keys of a stack (dicts), as the contract's defaults
    say: each key from its override, else the stack block, else the default;
    head_dim and kv_heads worked out per layer."""
    layers = []
    for i in range(stack["layers"]):
        keys = dict(stack["keys"])
        for (a, b), ov in stack["overrides"]:
            if a <= i <= b:
                keys.update(ov)
        heads = keys["heads"]
        lay = {
            "heads": heads,
            "kv_heads": keys.get("kv_heads", heads),
            "head_dim": keys.get("head_dim", m["d_model"] // heads if m["d_model"] % heads == 0 else None),
            "d_ff": keys.get("d_ff", 4 * m["d_model"]),
            "ffn": keys.get("ffn", "relu"),
            "norm": keys.get("norm", ("post", {"kind": "layernorm", "eps": "1e-5"})),
            "bias": keys.get("bias", True),
            "mask": keys.get("mask", [{"kind": "causal"}] if kind == "decoder" else [{"kind": "none"}]),
            "attention": keys.get("attention", ("full", None)),
            "precision": keys.get("precision", m.get("precision", "f32")),
            "kv_cache": keys.get("kv_cache", m.get("kv_cache", "f32")) if kind == "decoder" else "f32",
            "explicit_kv_cache": "kv_cache" in keys,
        }
        layers.append(lay)
    return layers


def covered(stack, keys):
    """Whether every layer of the stack takes one of `keys` from its
    override (tmc then skips the stack block's own check of a rule over them)."""
    hit = [False] * stack["layers"]
    for (a, b), ov in stack["overrides"]:
        if any(k in ov for k in keys):
            for i in range(a, b + 1):
                hit[i] = True
    return all(hit)


def valid(m):
    """The contract's rules that a drawn spec could break."""
    enc, dec = m["encoder"], m["decoder"]
    both = enc is not None and dec is not None
    if m["segments"] and enc is None:
        return False
    for kind, stack in (("encoder", enc), ("decoder", dec)):
        if stack is None:
            continue
        if kind == "encoder" and ("kv_cache" in stack["keys"]
                                  or any("kv_cache" in ov for _, ov in stack["overrides"])):
            return False
        if stack.get("cross_attention") is True and not (kind == "decoder" and both):
            return False
        layers = resolve(m, stack, kind, None)
        # tmc also checks the stack block's own keys as a layer of their own
        # (frontend/SemaStack.cpp), a rule at a time: not where every layer's
        # override sets one of the rule's keys. Linformer's k is checked
        # where it is read, whatever the overrides.
        whole = resolve(m, dict(stack, layers=1, overrides=[]), kind, None)[0]
        for lay in layers + [whole]:
            def rule(*keys):
                return lay is not whole or not covered(stack, keys)
            if (lay["head_dim"] is None or lay["head_dim"] <= 0) and rule("heads", "head_dim"):
                return False
            if lay["heads"] % lay["kv_heads"] and rule("heads", "kv_heads"):
                return False
            if m["position"][0] == "rope" and lay["head_dim"] and lay["head_dim"] % 2 \
                    and rule("heads", "head_dim"):
                return False
            if lay["attention"][0] == "linformer":
                if m["position"][0] == "alibi" and rule("attention"):
                    return False
                if [t["kind"] for t in lay["mask"]] not in (["none"], ["padding"]) \
                        and rule("attention", "mask"):
                    return False
                if kind == "decoder" and lay["kv_cache"] != "f32" and rule("attention", "kv_cache"):
                    return False
                if lay["attention"][1] is not None and lay["attention"][1] > m["max_seq"]:
                    return False
                if lay["attention"][1] is None and 256 > m["max_seq"]:
                    return False  # linformer's default k = 256 needs max_seq >= 256
            if not mask_rows_ok(lay["mask"], kind == "decoder", m["max_seq"]) and rule("mask"):
                return False
        last = layers[-1]
        if last["norm"][0] == "pre" and stack.get("final_norm", "absent") == "absent":
            return False
    return True


def draw_stack(d, m, kind, both):
    stack = {"layers": d.r.randint(1, 3), "keys": {}, "overrides": []}
    wanted = ["heads"]  # required
    for key in ["kv_heads", "head_dim", "d_ff", "ffn", "norm", "bias", "mask", "attention",
                "precision", "kv_cache"]:
        p = {"kv_heads": 0.35, "head_dim": 0.25, "d_ff": 0.7, "ffn": 0.85, "norm": 0.8,
             "bias": 0.4, "mask": 0.75, "attention": 0.3, "precision": 0.15,
             "kv_cache": 0.25 if kind == "decoder" else 0.0}[key]
        if d.chance(p):
            wanted.append(key)
    stack["keys"] = draw_layer_keys(d, m, kind == "decoder", wanted, {})
    # final_norm: required when the last layer is pre-norm (checked in valid()).
    if d.chance(0.7):
        stack["final_norm"] = norm_call(d) if d.chance(0.8) else "none"
    if both and kind == "decoder" and d.chance(0.2):
        stack["cross_attention"] = d.chance(0.6)
    # Overrides: disjoint ranges.
    if stack["layers"] > 1 and d.chance(0.45) or d.chance(0.15):
        i = 0
        while i < stack["layers"]:
            if d.chance(0.5):
                b = d.r.randint(i, stack["layers"] - 1)
                keys = d.r.sample([k for k in STACK_LAYER_KEYS
                                   if kind == "decoder" or k != "kv_cache"],
                                  d.r.randint(1, 4))
                ov = draw_layer_keys(d, m, kind == "decoder", keys, stack["keys"])
                if "kv_heads" in ov and "heads" not in ov:
                    pass
                stack["overrides"].append(((i, b), ov))
                i = b + 1
            else:
                i += 1
    return stack


def draw_model(d, seed):
    m = {"name": f"rand_{seed}"}
    arch = d.pick(["encoder", "decoder", "encdec"], [3, 4, 3])
    m["d_model"] = d.r.randint(4, 96) if d.chance(0.4) else d.pick([8, 12, 16, 24, 30, 32, 36, 40, 48, 60, 64, 72, 80, 96])
    m["vocab"] = d.r.randint(2, 128)
    m["max_seq"] = d.pick([d.r.randint(34, 64), d.r.randint(17, 64), d.r.randint(1, 16)],
                          [7, 2, 1])
    m["position"] = d.pick([("sinusoidal",), ("learned",), ("rope", None), ("alibi",), ("none",),
                            ("default",)])
    if m["position"][0] == "rope" and d.chance(0.7):
        m["position"] = ("rope", d.pick(["10000", "500", "1e6", "10000.0", "100"]))
    m["embed_scale"] = d.pick([None, True, False])
    m["embed_norm"] = d.pick([None, "none", "norm", "norm"])
    if m["embed_norm"] == "norm":
        m["embed_norm"] = norm_call(d)
    m["segments"] = d.r.randint(0, 3) if arch != "decoder" and d.chance(0.5) else 0
    m["segments_written"] = m["segments"] > 0 or d.chance(0.1)
    m["share_embeddings"] = d.pick([None, True, False]) if arch == "encdec" else None
    out = d.pick(["lm_head", "classifier", "hidden", "default"], [5, 3, 2, 1])
    if out == "lm_head":
        args = []
        if d.chance(0.7):
            args.append(("tied", d.chance(0.5)))
        if d.chance(0.4):
            args.append(("bias", d.chance(0.5)))
        m["output"] = ("lm_head", args)
    elif out == "classifier":
        args = [("classes", d.r.randint(1, 9))]
        if d.chance(0.7):
            args.append(("pool", d.pick(["first", "mean"])))
        if d.chance(0.5):
            args.append(("pooler", d.chance(0.5)))
        m["output"] = ("classifier", args)
    else:
        m["output"] = (out, [])
    m["dtype"] = d.pick([None, "f32", "f16", "bf16"], [4, 1, 2, 2])
    m["precision"] = d.pick([None, "f32", "bf16", "int8", "q4"], [8, 1, 1, 1, 1])
    m["kv_cache"] = d.pick([None, "f32", "f16", "bf16"], [8, 1, 1, 1]) if arch != "encoder" else None
    m["encoder"] = draw_stack(d, m, "encoder", arch == "encdec") if arch != "decoder" else None
    m["decoder"] = draw_stack(d, m, "decoder", arch == "encdec") if arch != "encoder" else None
    return m


def bool_text(b):
    return "true" if b else "false"


def text(m):
    lines = [f"# random_specs.py seed {m['name'].split('_', 1)[1]}", f"model {m['name']} {{"]
    keys = [("vocab", m["vocab"]), ("d_model", m["d_model"]), ("max_seq", m["max_seq"])]
    pos = m["position"]
    if pos[0] == "rope":
        keys.append(("position", "rope" if pos[1] is None else f"rope(theta = {pos[1]})"))
    elif pos[0] != "default":
        keys.append(("position", pos[0]))
    if m["embed_scale"] is not None:
        keys.append(("embed_scale", bool_text(m["embed_scale"])))
    if m["embed_norm"] is not None:
        keys.append(("embed_norm", "none" if m["embed_norm"] == "none" else norm_text(m["embed_norm"])))
    if m["segments_written"]:
        keys.append(("segments", m["segments"]))
    if m["share_embeddings"] is not None:
        keys.append(("share_embeddings", bool_text(m["share_embeddings"])))
    kind, args = m["output"]
    if kind != "default":
        if kind == "hidden":
            keys.append(("output", "hidden"))
        else:
            parts = [f"{k} = {bool_text(v) if isinstance(v, bool) else v}" for k, v in args]
            keys.append(("output", f"{kind}({', '.join(parts)})" if parts or kind == "classifier"
                         else kind))
    for k in ("dtype", "precision", "kv_cache"):
        if m[k] is not None:
            keys.append((k, m[k]))
    for k, v in keys:
        lines.append(f"  {k} = {v}")

    def value(key, v):
        if key == "norm":
            return f"{v[0]}({norm_text(v[1])})"
        if key == "bias":
            return bool_text(v)
        if key == "mask":
            return mask_text(v)
        if key == "attention":
            if v[0] == "full":
                return "full"
            return "linformer" if v[1] is None else f"linformer(k = {v[1]})"
        return str(v)

    for kind in ("encoder", "decoder"):
        stack = m[kind]
        if stack is None:
            continue
        lines.append(f"  {kind} {{")
        lines.append(f"    layers = {stack['layers']}")
        for key in STACK_LAYER_KEYS:
            if key in stack["keys"]:
                lines.append(f"    {key} = {value(key, stack['keys'][key])}")
        if "final_norm" in stack:
            fn = stack["final_norm"]
            lines.append(f"    final_norm = {'none' if fn == 'none' else norm_text(fn)}")
        if "cross_attention" in stack:
            lines.append(f"    cross_attention = {bool_text(stack['cross_attention'])}")
        for (a, b), ov in stack["overrides"]:
            body = "; ".join(f"{k} = {value(k, v)}" for k, v in ov.items())
            lines.append(f"    layers {a}..{b} {{ {body} }}")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate(seed):
    rng = random.Random(f"random-spec/{seed}")
    d = Draw(rng)
    for _ in range(10000):
        m = draw_model(d, seed)
        # The model-level output's tied/bias for valid(): the kind is enough.
        if valid(m):
            return text(m)
    raise RuntimeError(f"seed {seed}: no valid spec drawn")


def check(tmc, directory, count):
    """`tmc check` on the specs of seeds 1..count: every one drawn is valid
    under the contract, so every rejection is a failure (tmc's or valid()'s),
    printed with its message."""
    os.makedirs(directory, exist_ok=True)
    rejected = 0
    for seed in range(1, count + 1):
        path = os.path.join(directory, f"rand_{seed}.tm")
        with open(path, "w") as f:
            f.write(generate(seed))
        result = subprocess.run([tmc, "check", path], capture_output=True, text=True)
        if result.returncode != 0:
            rejected += 1
            print(f"FAIL: seed {seed}: tmc check {path} exited {result.returncode}:\n"
                  f"{result.stdout}{result.stderr}", flush=True)
    print(f"random_specs: {count - rejected} of {count} specs accepted by tmc check")
    return 1 if rejected else 0


def main():
    parser = argparse.ArgumentParser(description="random valid specs")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--seed", type=int)
    which.add_argument("--check", nargs=2, metavar=("TMC", "DIR"))
    parser.add_argument("--write", metavar="DIR")
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args()
    if args.check:
        return check(args.check[0], args.check[1], args.count)
    spec = generate(args.seed)
    if args.write:
        os.makedirs(args.write, exist_ok=True)
        path = os.path.join(args.write, f"rand_{args.seed}.tm")
        with open(path, "w") as f:
            f.write(spec)
        print(path)
    else:
        sys.stdout.write(spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
