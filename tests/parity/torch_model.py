# torch_model.py - The PyTorch model of a resolved spec, written from the
# language contract (docs/spec-language.md), not from tmc's C++ code.
#
# Input: the `config` object of `tmc check --json` (every key resolved, one
# entry per layer) and the weights as float64 tensors. Everything runs in
# float64, so the error measured against the compiled f32 executable is the
# executable's own.
#
# Two evaluations of each layer:
#   * nn: torch.nn.TransformerEncoderLayer / TransformerDecoderLayer with the
#     weights loaded into them, wherever they compute exactly what the contract
#     says (layernorm, a non-gated ffn, heads * head_dim == d_model, every
#     query head with its own keys, no rope, full attention, every query row
#     with at least one key). Masks and ALiBi are their float attn_mask;
#     `bias = false` is zero biases.
#   * explicit: the contract written out (rope, grouped-query attention,
#     rmsnorm, gated ffns, linformer, rows without keys) with a key/value
#     cache, which is also how a decoder generates.
# Model.forward uses nn where every layer of a stack allows it and the
# explicit code otherwise; run_parity.py checks that the two agree wherever nn
# applies, so the explicit code is itself checked against PyTorch's layers.
#
# `precision` (docs/spec-language.md, Model-level keys): a linear of a layer
# whose precision is bf16, int8 or q4, and the output head under the model's
# precision, multiply quantized inputs (quantized_linear below); the products
# (each exact) are then summed in float64, exactly for int8's integers. nn's
# layers multiply unquantized, so a stack with such a layer takes the
# explicit code.
#
# `kv_cache = f16 | bf16` (the same section): a decoder layer's keys (after
# rope) and values, and its cross-attention's keys and values of the encoded
# source, are rounded from their f32 values to that format as they enter the
# cache, and attention reads the rounded values (round_kv_cache below); such
# a stack takes the explicit code too.

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

MASK64 = (1 << 64) - 1


# ----------------------------------------------------------------------------
# Masks (docs/spec-language.md, "Masks")

def random_keys(term, max_seq, row):
    """The keys `random(per_row = R, seed = S)` adds for query `row` (SplitMix64)."""
    keys = []
    for r in range(term["per_row"]):
        z = (term["seed"] + (row * term["per_row"] + r + 1) * 0x9E3779B97F4A7C15) & MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        keys.append((z ^ (z >> 31)) % max_seq)
    return keys


# The last few mask matrices, keyed by their arguments: a layer's mask is the
# same for the explicit forward, the torch.nn one and its check (a 4k-token
# spec built each 4096 x 4096 matrix 27 times, a third of its parity test).
# Callers only read them. Up to 16 Mi entries each (16 MiB of bools): larger
# ones (the benchmarks' 16k-token references) are built every time.
_MASK_MATRICES = {}
_MASK_MATRICES_KEPT = 8
_MASK_MATRIX_CACHED_MAX = 1 << 24


def mask_matrix(terms, decoder, max_seq, rows, keys, length):
    """Bool [len(rows), keys]: may query position rows[a] see key position b?

    The window, global and random terms allow the union of what each allows
    (everything when there are none of them); causal and padding restrict.
    `length`: keys at or past it are padding (hidden by a padding term)."""
    rows = list(rows)
    if len(rows) * keys > _MASK_MATRIX_CACHED_MAX:
        return _build_mask_matrix(terms, decoder, max_seq, rows, keys, length)
    key = (repr(terms), decoder, max_seq, tuple(rows), keys, length)
    if key not in _MASK_MATRICES:
        if len(_MASK_MATRICES) >= _MASK_MATRICES_KEPT:
            del _MASK_MATRICES[next(iter(_MASK_MATRICES))]
        _MASK_MATRICES[key] = _build_mask_matrix(terms, decoder, max_seq, rows, keys, length)
    return _MASK_MATRICES[key]


def _build_mask_matrix(terms, decoder, max_seq, rows, keys, length):
    i = torch.tensor(rows, dtype=torch.long).unsqueeze(1)
    j = torch.arange(keys, dtype=torch.long).unsqueeze(0)
    kinds = [t["kind"] for t in terms]
    allowing = [t for t in terms if t["kind"] not in ("causal", "padding")]
    if allowing:
        allowed = torch.zeros(len(rows), keys, dtype=torch.bool)
    else:
        allowed = torch.ones(len(rows), keys, dtype=torch.bool)
    for t in allowing:
        if t["kind"] in ("sliding_window", "dilated_window"):
            w = t["size"]
            if decoder:
                inside = (j <= i) & (j > i - w)
            else:
                inside = (i - j).abs() * 2 <= w
            if t["kind"] == "dilated_window":
                inside = inside & ((i - j) % t["dilation"] == 0)
            allowed |= inside
        elif t["kind"] == "global":
            for g in t["tokens"]:
                allowed |= (i == g) | (j == g)
        elif t["kind"] == "random":
            for a, row in enumerate(rows):
                for key in random_keys(t, max_seq, row):
                    if key < keys:
                        allowed[a, key] = True
        else:
            raise ValueError(f"mask term {t['kind']} is not modelled")
    if "causal" in kinds:
        allowed &= j <= i
    if "padding" in kinds:
        allowed &= j < length
    return allowed


# ----------------------------------------------------------------------------
# Elementwise pieces

def sinusoidal(positions, d):
    """PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(same)."""
    p = torch.tensor(positions, dtype=torch.float64).unsqueeze(1)
    dims = torch.arange(d)
    even = (dims - dims % 2).to(torch.float64)
    angle = p / torch.pow(torch.tensor(10000.0, dtype=torch.float64), even / d)
    return torch.where(dims % 2 == 0, torch.sin(angle), torch.cos(angle))


def rope(x, positions, theta):
    """Rotate-half rope on x [T, heads, head_dim] at the given positions."""
    hd = x.shape[-1]
    half = hd // 2
    inv = torch.pow(torch.tensor(theta, dtype=torch.float64),
                    -2.0 * torch.arange(half, dtype=torch.float64) / hd)
    angle = torch.tensor(positions, dtype=torch.float64).unsqueeze(1) * inv.unsqueeze(0)
    cos = torch.cat([angle.cos(), angle.cos()], dim=-1).unsqueeze(1)
    sin = torch.cat([angle.sin(), angle.sin()], dim=-1).unsqueeze(1)
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def activation(kind):
    return {
        "relu": F.relu,
        "gelu": F.gelu,
        "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
        "silu": F.silu,
        "swiglu": F.silu,
        "geglu": F.gelu,
    }[kind]


def alibi_slopes(heads):
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)],
                        dtype=torch.float64)


# ----------------------------------------------------------------------------
# Reduced-precision linears (docs/spec-language.md, `precision`)

class Roundings:
    """One evaluation's activation roundings that lie near a tie, and those
    to take the other way.

    The executable quantizes its own f32 activations, which differ from
    torch's (float64, taken as f32) by f32 rounding error. Where torch's value
    lies within `near` times its row's largest magnitude of a rounding tie
    (half an int8 step, for int8 and q4 alike, whose activations are
    quantized the same way, or the midpoint between two bf16 values), the
    executable's may round to the other neighbour. Each such element is
    recorded in `seen`, keyed by the precision, the f32 bytes of its row and
    its column, so that it has the same key wherever torch quantizes the same
    row again (q, k and v of one input; a decoding step; another evaluation);
    `flips` are keys to round to the other neighbour. seen[key] =
    (distance to the tie, the other neighbour's distance from torch's
    rounding), both relative to the row's largest magnitude.

    With `track`, every rounded activation is a leaf for autograd (passing
    gradients on to its input as if unrounded), and `sites` holds each with
    (the other neighbour - the rounding), so that one backward pass gives the
    first-order effect of every flip (`where` places each key in them)."""

    def __init__(self, near, flips=(), track=False):
        self.near = near
        self.flips = {}
        for precision, row, column in flips:
            self.flips.setdefault((precision, row), []).append(column)
        self.seen = {}
        self.track = track
        self.sites = []
        self.where = {}

    def take(self, precision, x, x32, rounded, other, distance, step, slope=None):
        """The rounded activations x [R, K] multiply with: `rounded`, with
        `other` wherever this evaluation flips, near-ties noted. x32: x as
        f32; distance, step: [R, K] relative to the row's largest magnitude;
        slope: d(rounded)/dx per row for tracking (default 1)."""
        row_keys = {}

        def row_key(r):
            if r not in row_keys:
                row_keys[r] = (precision, x32[r].numpy().tobytes())
            return row_keys[r]

        site = len(self.sites)
        rows, columns = torch.nonzero(distance <= self.near, as_tuple=True)
        for r, c in zip(rows.tolist(), columns.tolist()):
            key = row_key(r) + (c,)
            self.seen[key] = (distance[r, c].item(), step[r, c].item())
            self.where.setdefault(key, []).append((site, r, c))
        if self.flips:
            rounded = rounded.clone()
            for r in range(x32.shape[0]):
                for c in self.flips.get(row_key(r), ()):
                    rounded[r, c] = other[r, c]
        if not self.track:
            return rounded
        leaf = rounded.detach().clone().requires_grad_()
        self.sites.append((leaf, other - rounded))
        through = x if slope is None else x * slope.detach()
        return leaf + (through - through.detach())


def round16(x, dtype):
    """Each element rounded from its f32 value to the 16-bit float `dtype`
    (torch.bfloat16 or torch.float16: to nearest, ties to even, as torch
    converts from float32), returned as float64."""
    return x.to(torch.float32).to(dtype).to(torch.float64)


def round_bf16(x):
    """Each element rounded from its f32 value to bf16 (to nearest, ties to
    even), returned as float64."""
    return round16(x, torch.bfloat16)


def round16_rows(x, roundings, dtype, tag):
    """round16(x, dtype) for rows x [R, K], noting near-ties and taking the
    flips of `roundings` (None: neither), keyed under `tag`."""
    rounded = round16(x, dtype)
    if roundings is None:
        return rounded
    x32 = x.detach().to(torch.float32)
    # The other neighbour of x in `dtype`: one step of the magnitude away
    # from the rounded value, on x's side of it (both formats keep the sign
    # in bit 15 and the magnitude, exponent then mantissa, in the rest, so a
    # step of the magnitude's bits is a step to the adjacent value).
    bits = x32.to(dtype).view(torch.int16).to(torch.int32)
    magnitude, sign = bits & 0x7FFF, bits & 0x8000
    away = x32.abs().to(torch.float64) > rounded.abs()
    other_bits = sign | torch.where(away, magnitude + 1, (magnitude - 1).clamp(min=0))
    other = (torch.where(other_bits >= 0x8000, other_bits - 0x10000, other_bits)
             .to(torch.int16).view(dtype).to(torch.float64))
    m = x32.abs().amax(dim=-1, keepdim=True).to(torch.float64)
    step = (other - rounded).abs() / m
    distance = (x32.to(torch.float64) - (rounded + other) / 2).abs() / m
    distance = torch.where(x32 == 0, torch.full_like(distance, math.inf), distance)
    return roundings.take(tag, x, x32, rounded, other, distance, step)


def round_bf16_activations(x, roundings):
    """round_bf16(x) for a GEMM's input [T, K], noting near-ties and taking
    the flips of `roundings` (None: neither)."""
    return round16_rows(x, roundings, torch.bfloat16, "bf16")


# `kv_cache` (docs/spec-language.md, Model-level keys): the 16-bit format a
# decoder layer's cached keys and values are rounded to.
KV_CACHE_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def round_kv_cache(x, kv_cache, roundings):
    """Keys or values x [T, kv_heads, head_dim] as a `kv_cache = f16 | bf16`
    cache stores them: each element rounded from its f32 value to that
    format, to nearest even, and read back exactly. Like a bf16 linear's
    activations, the executable rounds its own f32 values, which may lie on
    the other side of a tie than torch's: near-ties are noted per position's
    row of kv_heads * head_dim values and the flips of `roundings` taken,
    keyed as "kv-f16" / "kv-bf16" (apart from the linears' "bf16")."""
    if kv_cache == "f32":
        return x
    rows = x.reshape(x.shape[0], -1)
    rounded = round16_rows(rows, roundings, KV_CACHE_DTYPES[kv_cache], "kv-" + kv_cache)
    return rounded.view(x.shape)


def quantize_rows(x, roundings=None, precision="int8"):
    """Symmetric int8 quantization of each row of x [R, K], in float32 as
    tmc's kernels hold it: m = max |x[r, :]|, scale m / 127,
    q = round_half_even(x * (127 / m)) clamped to [-127, 127]; a row of zeros
    has q = 0 and scale 0. Returns (q as float64 integers [R, K], scale as
    float64 [R] holding f32 values). With `roundings` (for activations), notes
    near-ties and takes its flips, keyed under `precision` (the linear's:
    int8, or q4, whose activations are quantized alike without int8's u8
    shift, which changes no value)."""
    x32 = x.detach().to(torch.float32)
    m = x32.abs().amax(dim=-1)
    scale = m / 127.0  # an f32 tensor by a scalar: one f32 division
    # 127 / m as an f32 division: torch's `127.0 / m` is reciprocal(m) * 127,
    # two roundings, so divide a tensor of 127s.
    factor = torch.full_like(m, 127.0) / m
    scaled = x32 * factor.unsqueeze(-1)  # an f32 product
    q = torch.round(scaled).clamp(-127, 127)  # half to even
    zero = m == 0
    q = torch.where(zero.unsqueeze(-1), torch.zeros_like(q), q)
    scale = torch.where(zero, torch.zeros_like(scale), scale)
    q, scale = q.to(torch.float64), scale.to(torch.float64)
    if roundings is not None:
        v = scaled.to(torch.float64)
        other = torch.where(v > q, q + 1, q - 1)
        distance = (v - torch.floor(v) - 0.5).abs() / 127
        distance = torch.where(zero.unsqueeze(-1), torch.full_like(distance, math.inf), distance)
        q = roundings.take(precision, x, x32, q, other, distance,
                           torch.full_like(distance, 1 / 127),
                           slope=factor.to(torch.float64).unsqueeze(-1))
    return q, scale


Q4_BLOCK = 32


def quantize_q4(weight):
    """ggml's Q4_0 quantization (quantize_row_q4_0_ref) of each output
    channel's row of weight [N, K], as docs/spec-language.md writes it: the
    row cut into blocks of 32 along K (the last one padded with zeros), and
    for each block, in float32: mx the first value of the largest magnitude,
    d = mx / -8, id = 1 / d (0 where d = 0), q = min(15, trunc(f32(f32(w * id)
    + 8.5))), the scale d rounded to float16 (to nearest, ties to even).
    Returns the dequantized weight (q - 8) * float(scale16) as float64
    [N, K] (exact: a 4-bit integer times an f16 value)."""
    n, k = weight.shape
    blocks = -(-k // Q4_BLOCK)
    w32 = torch.zeros(n, blocks * Q4_BLOCK, dtype=torch.float32)
    w32[:, :k] = weight.to(torch.float32)
    w32 = w32.view(n, blocks, Q4_BLOCK)
    # argmax gives the first index of the largest magnitude.
    first = w32.abs().argmax(dim=-1, keepdim=True)
    mx = torch.gather(w32, -1, first)  # [n, blocks, 1]
    d = mx / -8.0  # an f32 division (exact but for subnormals)
    # 1 / d as an f32 division (not reciprocal): divide a tensor of ones.
    inverse = torch.where(d != 0, torch.ones_like(d) / d, torch.zeros_like(d))
    scaled = w32 * inverse  # an f32 product, rounded
    shifted = scaled + 8.5  # an f32 sum, rounded
    q = torch.trunc(shifted).clamp(max=15)  # ggml's (int8_t) cast: toward zero
    scale16 = d.to(torch.float16).to(torch.float64)
    values = (q.to(torch.float64) - 8) * scale16
    return values.view(n, blocks * Q4_BLOCK)[:, :k]


def quantized_linear(x, weight, precision, roundings=None):
    """x [T, K] @ weight[N, K].T under `precision` (no bias). bf16: both
    sides rounded to bf16, products summed in float64. int8: the weight per
    output channel and x per token row quantized alike (quantize_rows), the
    integer products summed exactly (float64 holds K * 127 * 127 exactly),
    then scaled by the row's and the channel's scales. q4: the weight in
    ggml's Q4_0 blocks (quantize_q4), x per token row as int8 quantizes it
    (no u8 shift: it changes no value); y = a_t * sum_k (q_k - 8) *
    scale16_b * xq_k in float64 (each product exact, the sum float64's:
    far closer than the kernel's f32 sum over blocks).
    `roundings`: see Roundings (the weights are rounded alike on both sides:
    they are read from the same file)."""
    if precision == "f32":
        return x @ weight.T
    if precision == "bf16":
        return round_bf16_activations(x, roundings) @ round_bf16(weight).T
    if precision == "int8":
        q, s = quantize_rows(weight)
        u, a = quantize_rows(x, roundings)
        return (u @ q.T) * a.unsqueeze(-1) * s.unsqueeze(0)
    if precision == "q4":
        xq, a = quantize_rows(x, roundings, precision="q4")
        return (xq @ quantize_q4(weight).T) * a.unsqueeze(-1)
    raise ValueError(f"precision {precision} is not modelled")


def dequantized_table(weight, precision):
    """A tied head's token table [V, D] as the embedding lookup reads it when
    the head multiplies it under `precision` (docs/spec-language.md: the
    lookup reads the head's packed copy): bf16 rounded; int8 each row's q
    times its scale, an f32 product; q4 (q - 8) * scale16 (exact). float64."""
    if precision == "bf16":
        return round_bf16(weight)
    if precision == "int8":
        q, s = quantize_rows(weight)
        return (q.to(torch.float32) * s.to(torch.float32).unsqueeze(-1)).to(torch.float64)
    if precision == "q4":
        return quantize_q4(weight)
    return weight


# ----------------------------------------------------------------------------

class Model:
    def __init__(self, config, weights):
        self.c = config
        self.w = weights
        self.d = config["d_model"]
        self.max_seq = config["max_seq"]
        self.position = config["position"]
        self.enc = config["encoder"]
        self.dec = config["decoder"]
        # Roundings for the reduced-precision linears' activations (None:
        # plain rounding); run_parity.py sets it per evaluation.
        self.roundings = None

    # -- weights ---------------------------------------------------------------

    def tensor(self, name):
        return self.w[name]

    def linear(self, x, prefix, bias, precision):
        y = quantized_linear(x, self.tensor(prefix + ".weight"), precision, self.roundings)
        if bias:
            y = y + self.tensor(prefix + ".bias")
        return y

    def norm(self, x, spec, prefix):
        weight = self.tensor(prefix + ".weight")
        if spec["kind"] == "layernorm":
            return F.layer_norm(x, (x.shape[-1],), weight, self.tensor(prefix + ".bias"),
                                spec["eps"])
        rms = torch.sqrt((x * x).mean(dim=-1, keepdim=True) + spec["eps"])
        return x / rms * weight

    # -- embedding ---------------------------------------------------------------

    def embed(self, tokens, table, start=0, segments=None):
        out = self.c["output"]
        rows = self.tensor(table)
        if out["kind"] == "lm_head" and out["tied"] and table == self.decoder_table():
            rows = dequantized_table(rows, self.c["precision"])
        x = rows[torch.tensor(tokens, dtype=torch.long)]
        if self.c["embed_scale"]:
            x = x * math.sqrt(self.d)
        positions = list(range(start, start + len(tokens)))
        if self.position["kind"] == "sinusoidal":
            x = x + sinusoidal(positions, self.d)
        elif self.position["kind"] == "learned":
            x = x + self.tensor("embed.positions")[positions]
        if self.c["segments"] > 0:
            # A token's segment is 0 unless ids are given; they are given for
            # the first stack's input only (an encoder-decoder's source).
            ids = segments if segments is not None else [0] * len(tokens)
            x = x + self.tensor("embed.segments")[torch.tensor(ids, dtype=torch.long)]
        if self.c["embed_norm"] is not None:
            x = self.norm(x, self.c["embed_norm"], "embed.norm")
        return x

    # -- explicit attention ------------------------------------------------------

    def attention(self, layer, prefix, x, positions, kv_cache, decoder, length,
                  memory=None, memory_length=None, layer_prefix=None):
        """Self-attention of rows x (at `positions`, after the cached ones) or,
        with `memory`, cross-attention to the encoder output."""
        heads, kvh, hd = layer["heads"], layer["kv_heads"], layer["head_dim"]
        bias = layer["bias"]
        # The layer's precision, for cross-attention's k and v (which read
        # the encoder's output) too.
        precision = layer["precision"]
        cross = memory is not None
        # A decoder layer's caches (self-attention's, and cross-attention's
        # of the encoded source) store keys and values in the layer's
        # kv_cache format; every read, the prompt's own attention included,
        # sees the stored values. The encoder keeps no cache (its layers say
        # f32).
        stored = layer["kv_cache"] if decoder or cross else "f32"
        q = self.linear(x, prefix + ".q", bias, precision).view(len(positions), heads, hd)
        if cross:
            k = self.linear(memory, prefix + ".k", bias, precision).view(-1, kvh, hd)
            v = self.linear(memory, prefix + ".v", bias, precision).view(-1, kvh, hd)
            k = round_kv_cache(k, stored, self.roundings)
            v = round_kv_cache(v, stored, self.roundings)
        else:
            k = self.linear(x, prefix + ".k", bias, precision).view(len(positions), kvh, hd)
            v = self.linear(x, prefix + ".v", bias, precision).view(len(positions), kvh, hd)
            # Positional schemes act on self-attention only: across two
            # sequences a distance between positions means nothing.
            if self.position["kind"] == "rope":
                q = rope(q, positions, self.position["theta"])
                k = rope(k, positions, self.position["theta"])
            # Rounded as they are appended: keys after rope.
            k = round_kv_cache(k, stored, self.roundings)
            v = round_kv_cache(v, stored, self.roundings)
            if kv_cache is not None:
                if "k" in kv_cache:
                    k = torch.cat([kv_cache["k"], k])
                    v = torch.cat([kv_cache["v"], v])
                kv_cache["k"], kv_cache["v"] = k, v
        keys = k.shape[0]
        linformer = not cross and layer["attention"]["kind"] == "linformer"
        if linformer:
            # Keys and values of n positions times the first n columns of
            # the [k, max_seq] projections; under padding n is the valid part.
            # These sequence projections stay f32 whatever the precision.
            n = min(length, keys) if any(t["kind"] == "padding" for t in layer["mask"]) else keys
            ek = self.tensor(layer_prefix + ".attn_proj.k.weight")[:, :n]
            ev = self.tensor(layer_prefix + ".attn_proj.v.weight")[:, :n]
            k = torch.einsum("rt,tkd->rkd", ek, k[:n])
            v = torch.einsum("rt,tkd->rkd", ev, v[:n])
            allowed = torch.ones(len(positions), k.shape[0], dtype=torch.bool)
        elif cross:
            allowed = (torch.arange(keys) < memory_length).unsqueeze(0).expand(len(positions), -1)
        else:
            allowed = mask_matrix(layer["mask"], decoder, self.max_seq, positions, keys, length)

        group = heads // kvh
        k = k.repeat_interleave(group, dim=1)  # query head h reads kv head h // group
        v = v.repeat_interleave(group, dim=1)
        # In place where autograd allows (explain's backward pass needs the
        # softmax's own output): each [heads, T, T] temporary of a 4k-token
        # spec is 256 MiB of fresh pages.
        scores = torch.einsum("ihd,jhd->hij", q, k).div_(math.sqrt(hd))
        if not cross and not linformer and self.position["kind"] == "alibi":
            scores.add_(self.alibi_bias(heads, positions, keys, decoder))
        scores.masked_fill_(~allowed.unsqueeze(0), float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        # A query that may see no key reads nothing (zeros, never NaN).
        probs = torch.where(allowed.any(dim=-1).unsqueeze(0).unsqueeze(-1), probs, 0.0)
        context = torch.einsum("hij,jhd->ihd", probs, v).reshape(len(positions), heads * hd)
        return self.linear(context, prefix + ".o", bias, precision)

    def alibi_bias(self, heads, positions, keys, decoder):
        i = torch.tensor(positions, dtype=torch.float64).unsqueeze(1)
        j = torch.arange(keys, dtype=torch.float64).unsqueeze(0)
        distance = (i - j) if decoder else (i - j).abs()
        return -alibi_slopes(heads).view(-1, 1, 1) * distance.unsqueeze(0)

    def ffn(self, x, layer, prefix):
        act = activation(layer["ffn"])
        bias, precision = layer["bias"], layer["precision"]
        up = self.linear(x, prefix + ".up", bias, precision)
        if layer["ffn"] in ("swiglu", "geglu"):
            hidden = act(self.linear(x, prefix + ".gate", bias, precision)) * up
        else:
            hidden = act(up)
        return self.linear(hidden, prefix + ".down", bias, precision)

    def layer(self, x, layer, prefix, positions, cache, decoder, length, cross,
              memory, memory_length):
        """One block: norm1 with self-attention; with cross-attention norm2
        with it and norm3 with the ffn, else norm2 with the ffn."""
        norm = layer["norm"]
        n_ffn = prefix + (".norm3" if cross else ".norm2")

        def self_attn(h):
            return self.attention(layer, prefix + ".self_attn", h, positions, cache, decoder,
                                  length, layer_prefix=prefix)

        def cross_attn(h):
            return self.attention(layer, prefix + ".cross_attn", h, positions, None, decoder,
                                  length, memory=memory, memory_length=memory_length)

        if norm["placement"] == "post":
            h = self.norm(x + self_attn(x), norm, prefix + ".norm1")
            if cross:
                h = self.norm(h + cross_attn(h), norm, prefix + ".norm2")
            return self.norm(h + self.ffn(h, layer, prefix + ".ffn"), norm, n_ffn)
        h = x + self_attn(self.norm(x, norm, prefix + ".norm1"))
        if cross:
            h = h + cross_attn(self.norm(h, norm, prefix + ".norm2"))
        return h + self.ffn(self.norm(h, norm, n_ffn), layer, prefix + ".ffn")

    def stack_explicit(self, x, stack, name, start, caches, decoder, length, memory=None,
                       memory_length=None):
        positions = list(range(start, start + x.shape[0]))
        for i, layer in enumerate(stack["layer_specs"]):
            x = self.layer(x, layer, f"{name}.layers.{i}", positions,
                           caches[i] if caches is not None else None, decoder, length,
                           stack["cross_attention"], memory, memory_length)
        if stack["final_norm"] is not None:
            x = self.norm(x, stack["final_norm"], name + ".final_norm")
        return x

    # -- torch.nn layers ---------------------------------------------------------

    def nn_applies(self, stack, decoder, length, tokens, memory_length):
        """Whether every layer of `stack` is exactly an nn.Transformer*Layer."""
        if self.position["kind"] == "rope":
            return False
        for layer in stack["layer_specs"]:
            if (layer["precision"] != "f32"  # nn's linears are not quantized
                    or layer["kv_cache"] != "f32"  # nor its keys and values rounded
                    or layer["norm"]["kind"] != "layernorm" or layer["ffn"] in ("swiglu", "geglu")
                    or layer["heads"] != layer["kv_heads"]
                    or layer["heads"] * layer["head_dim"] != self.d
                    or layer["attention"]["kind"] != "full"):
                return False
            allowed = mask_matrix(layer["mask"], decoder, self.max_seq, range(tokens), tokens,
                                  length)
            if not bool(allowed.any(dim=-1).all()):
                return False  # nn's softmax gives NaN for a row without keys
        return memory_length is None or memory_length > 0

    def nn_layer(self, layer, prefix, cross):
        d, bias = self.d, layer["bias"]
        act = {"relu": "relu", "gelu": "gelu"}.get(layer["ffn"], activation(layer["ffn"]))
        kind = nn.TransformerDecoderLayer if cross else nn.TransformerEncoderLayer
        module = kind(d, layer["heads"], dim_feedforward=layer["d_ff"], dropout=0.0,
                      activation=act, layer_norm_eps=layer["norm"]["eps"], batch_first=True,
                      norm_first=layer["norm"]["placement"] == "pre", dtype=torch.float64)

        def w(name):
            return self.tensor(f"{prefix}.{name}.weight")

        def b(name, size):
            if bias:
                return self.tensor(f"{prefix}.{name}.bias")
            return torch.zeros(size, dtype=torch.float64)

        def load_attention(mha, site):
            mha.in_proj_weight.copy_(torch.cat([w(f"{site}.q"), w(f"{site}.k"), w(f"{site}.v")]))
            mha.in_proj_bias.copy_(torch.cat([b(f"{site}.q", d), b(f"{site}.k", d),
                                              b(f"{site}.v", d)]))
            mha.out_proj.weight.copy_(w(f"{site}.o"))
            mha.out_proj.bias.copy_(b(f"{site}.o", d))

        with torch.no_grad():
            load_attention(module.self_attn, "self_attn")
            module.linear1.weight.copy_(w("ffn.up"))
            module.linear1.bias.copy_(b("ffn.up", layer["d_ff"]))
            module.linear2.weight.copy_(w("ffn.down"))
            module.linear2.bias.copy_(b("ffn.down", d))
            norms = ["norm1", "norm2"]
            if cross:
                load_attention(module.multihead_attn, "cross_attn")
                norms.append("norm3")
            for n in norms:
                getattr(module, n).weight.copy_(w(n))
                getattr(module, n).bias.copy_(self.tensor(f"{prefix}.{n}.bias"))
        module.eval()
        return module

    def stack_nn(self, x, stack, name, decoder, length, memory=None, memory_length=None):
        t = x.shape[0]
        for i, layer in enumerate(stack["layer_specs"]):
            cross = stack["cross_attention"]
            module = self.nn_layer(layer, f"{name}.layers.{i}", cross)
            allowed = mask_matrix(layer["mask"], decoder, self.max_seq, range(t), t, length)
            bias = torch.zeros(layer["heads"], t, t, dtype=torch.float64)
            if self.position["kind"] == "alibi":
                bias = self.alibi_bias(layer["heads"], list(range(t)), t, decoder)
            attn_mask = bias.masked_fill(~allowed.unsqueeze(0), float("-inf"))
            with torch.no_grad():
                if cross:
                    memory_mask = torch.arange(memory.shape[0]) >= memory_length
                    x = module(x.unsqueeze(0), memory.unsqueeze(0), tgt_mask=attn_mask,
                               memory_key_padding_mask=memory_mask.unsqueeze(0))[0]
                else:
                    x = module(x.unsqueeze(0), src_mask=attn_mask)[0]
        if stack["final_norm"] is not None:
            x = self.norm(x, stack["final_norm"], name + ".final_norm")
        return x

    # -- the model -------------------------------------------------------------

    def head(self, h, length, table):
        out = self.c["output"]
        if out["kind"] == "hidden":
            return h
        # The head multiplies under the model-level precision (a tied head's
        # table quantized as a weight; the embedding lookup reads the same
        # values, dequantized: embed above).
        precision = self.c["precision"]
        if out["kind"] == "lm_head":
            weight = self.tensor(table if out["tied"] else "output.weight")
            logits = quantized_linear(h, weight, precision, self.roundings)
            return logits + self.tensor("output.bias") if out["bias"] else logits
        pooled = h[:1] if out["pool"] == "first" else h[:length].mean(dim=0, keepdim=True)
        if out["pooler"]:  # BERT's pooler: a linear layer with tanh
            pooled = torch.tanh(
                quantized_linear(pooled, self.tensor("classifier.pooler.weight"), precision,
                                 self.roundings)
                + self.tensor("classifier.pooler.bias"))
        return (quantized_linear(pooled, self.tensor("classifier.weight"), precision,
                                 self.roundings)
                + self.tensor("classifier.bias"))

    def decoder_table(self):
        if self.enc is not None and self.dec is not None and not self.c["share_embeddings"]:
            return "decoder.embed.tokens"
        return "embed.tokens"

    def forward(self, tokens, segments=None, length=None, source=None, source_length=None,
                use_nn=True):
        """The executable's --output: [rows, width]. Also returns which path ran."""
        used_nn = True
        if self.enc is not None and self.dec is not None:
            src_len = source_length or len(source)
            xs = self.embed(source, "embed.tokens", segments=segments)
            if use_nn and self.nn_applies(self.enc, False, src_len, len(source), None):
                memory = self.stack_nn(xs, self.enc, "encoder", False, src_len)
            else:
                used_nn = False
                memory = self.stack_explicit(xs, self.enc, "encoder", 0, None, False, src_len)
            table = self.decoder_table()
            x = self.embed(tokens, table)
            t = len(tokens)
            if use_nn and self.nn_applies(self.dec, True, t, t, src_len):
                h = self.stack_nn(x, self.dec, "decoder", True, t, memory, src_len)
            else:
                used_nn = False
                h = self.stack_explicit(x, self.dec, "decoder", 0, None, True, t, memory,
                                        src_len)
            return self.head(h, t, table), used_nn
        stack, name, decoder = (self.enc, "encoder", False) if self.enc else (self.dec, "decoder", True)
        t = len(tokens)
        length = length or t
        x = self.embed(tokens, "embed.tokens", segments=segments)
        if use_nn and self.nn_applies(stack, decoder, length, t, None):
            h = self.stack_nn(x, stack, name, decoder, length)
        else:
            used_nn = False
            h = self.stack_explicit(x, stack, name, 0, None, decoder, length)
        return self.head(h, length, "embed.tokens"), used_nn

    def generate_logits(self, prompt, continuation, source=None, source_length=None,
                        segments=None):
        """Logits of each decoding step (a [vocab] tensor per step) when the
        decoder is fed `prompt` once and then `continuation` token by token,
        with a key/value cache per layer: step s predicts the token after
        prompt + continuation[:s], for s = 0 .. len(continuation), so the last
        step is the one after the last token (len(continuation) + 1 steps, as
        the executable's --output rows from the prompt's last one on)."""
        memory, src_len = None, None
        if self.enc is not None:
            src_len = source_length or len(source)
            xs = self.embed(source, "embed.tokens", segments=segments)
            memory = self.stack_explicit(xs, self.enc, "encoder", 0, None, False, src_len)
        table = self.decoder_table()
        caches = [dict() for _ in self.dec["layer_specs"]]

        def step(tokens, start):
            x = self.embed(tokens, table, start=start)
            h = self.stack_explicit(x, self.dec, "decoder", start, caches, True,
                                    start + len(tokens), memory, src_len)
            return self.head(h[-1:], start + len(tokens), table)[0]

        steps = [step(prompt, 0)]
        for s, token in enumerate(continuation):
            steps.append(step([token], len(prompt) + s))
        return steps
