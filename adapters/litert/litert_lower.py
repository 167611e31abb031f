"""wai-ops/1 nodes as LiteRT models (docs/litert.md), one model per node.

Between nodes every tensor is an int64 numpy array `[1, H, W, C]` (NHWC); the certificate
(integer-operators §8.5) proves each tensor and intermediate fits the TFLite type the node forms it
in. `support(node, cx)` decides from the graph and its certificate alone whether a node maps
exactly on the chosen resolver, raising `Unsupported` with the reason; `build(m, node, ins, cx,
dims, scalars)` adds the node's TFLite operators to the model `m` and returns its outputs (int64).

The quantised convolutions' requantisation was established by experiment (experiments.py,
`requantisation`; docs/litert.md, "rq"): three kernels, three roundings.
"""

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
from protocol import Unsupported, check_support  # noqa: E402 - shared by the adapters

from litert_graph import (  # noqa: E402
    B, S, binary, cast, clamp, concat, fits, gather, i32, reshape, slice_,
)

I64 = np.int64
RESOLVER = "auto"  # set by litert_fill.main


def need(cond, reason):
    if not cond:
        raise Unsupported(reason)


def need_fits(iv, dtype, what):
    need(fits(iv[0], iv[1], dtype), f"{what} [{iv[0]}, {iv[1]}] passes {np.dtype(dtype).name}")


# --- §5.1 rq on TFLite's quantised convolutions --------------------------------------------------
#
# A quantised CONV_2D / DEPTHWISE_CONV_2D computes acc = Σ w·x + bias (int32 for int8 activations,
# int64 for int16 activations), then y = clamp(requant(acc) + zero point). With input scale 1,
# output scale 1 and zero points 0, the per-channel filter scale is the real multiplier m/2^s,
# and requant is, by experiment (experiments.py):
#
#   xnnpack  int8, `auto` (XNNPACK takes the node): round-half-even(fl32(fl32(acc) · fl32(scale)));
#            exact R_half_even(acc·m, s) when |acc| ≤ 2^24 and |acc·odd(m)| ≤ 2^24 (no rounding in
#            the float product), scale < 256 (XNNPACK's limit);
#   double   int8, `builtin` and `ref`: TFLite's MultiplyByQuantizedMultiplier, M = round(f·2^31)
#            with real = f·2^e, f ∈ [0.5, 1): the doubling high multiply rounds half up to
#            R_half_up(acc·2^max(e,0)·M, 31), then a rounding right shift by max(−e, 0) rounds a
#            second time (half up in ruy's CONV_2D, half away from zero in the reference kernels
#            and the optimised DEPTHWISE_CONV_2D). Exact R_half_up(acc·m, s) only when there is no
#            second shift: real ≥ 1/2;
#   q16      int16 activations × int8 weights (all resolvers; XNNPACK does not take them): the
#            multiplier reduced to 16 bits, M16 = round(M / 2^16), then one rounding
#            R_half_up(acc·M16, 15 − e). Exact R_half_up(acc·m, s) when odd(m) < 2^15.
#
# A rounding none of them has is reached only where it coincides: an exact product (2^s divides
# m) rounds nothing; R_floor(t·2^k, s) = R_half_up(t − 2^(s−k−1), s − k) for s > k moves into the
# bias. A negative multiplier negates the channel's weights and pre bias: R(t·m, s) = R((−t)·(−m), s).


def odd_part(a):
    k = (a & -a).bit_length() - 1
    return a >> k, k


class Channel:
    """One output channel's rq as a kernel sees it: t' = sign·t − adj, then K(t'·odd·2^e)."""

    def __init__(self, m, s, rnd):
        need(m != 0, "a multiplier of 0 (a zero scale): not mapped")
        self.sign = -1 if m < 0 else 1
        self.odd, k = odd_part(abs(m))
        self.e = k - s  # the real multiplier is odd·2^e
        self.adj = 0
        if self.e >= 0:
            self.needs = "exact"  # an integer product: every rounding is exact
        elif rnd == "half_up":
            self.needs = "half_up"
        elif rnd == "floor" and self.odd == 1:
            self.needs, self.adj = "half_up", 1 << (-self.e - 1)
        else:
            self.needs = rnd

    def scale(self):
        return math.ldexp(self.odd, self.e)

    def exponent(self):
        """frexp's exponent of the real multiplier: odd·2^e = f·2^x with f in [0.5, 1)."""
        return self.e + self.odd.bit_length()


KERNEL_ROUNDS = {"xnnpack": ("exact", "half_even"), "double": ("exact", "half_up"), "q16": ("exact", "half_up")}
KERNEL_TYPE = {"xnnpack": np.int8, "double": np.int8, "q16": np.int16}


def kernels():
    """The kernels a quantised convolution reaches on this resolver, in the order tried."""
    return ["xnnpack", "q16"] if RESOLVER == "auto" else ["double", "q16"]


def why_kernel(kernel, chans, t_iv, node, cx, in_iv, weights, post):
    """None when `kernel` computes the node's rq exactly; otherwise the reason it does not."""
    dt = KERNEL_TYPE[kernel]
    name = {"xnnpack": "int8 (XNNPACK)", "double": "int8", "q16": "16x8"}[kernel]
    if not fits(in_iv[0], in_iv[1], dt):
        return f"{name}: input [{in_iv[0]}, {in_iv[1]}] passes {np.dtype(dt).name}"
    for c in chans:
        if c.needs not in KERNEL_ROUNDS[kernel]:
            return f"{name}: rounds {'half to even' if kernel == 'xnnpack' else 'half up'}, not {c.needs}"
    if weights is not None:
        for c, w in zip(chans, weights):
            if c.sign < 0 and -128 in w:
                return f"{name}: a negative multiplier negates the weights, and one is -128"
    ts = [(c.sign * t - c.adj) for c in chans for t in t_iv]
    lo, hi = min(ts), max(ts)
    big = max(-lo, hi)
    if kernel == "xnnpack":
        if any(big * c.odd > 1 << 24 or not -125 <= c.exponent() <= 8 for c in chans):
            return f"{name}: t·odd(mult) past 2^24 (the fp32 product rounds) or a scale outside [2^-126, 256)"
    if kernel in ("xnnpack", "double"):
        acc = cx.inter(node, "conv.acc") if node.op == "conv" else (lo, hi)
        if not fits(lo, hi, np.int32) or not fits(acc[0], acc[1], np.int32):
            return f"{name}: the int32 accumulator (conv.acc, or rq.t [{lo}, {hi}]) passes int32"
    if kernel == "double":
        for c in chans:
            e = c.exponent()
            if e < 0:
                return f"{name}: a real multiplier below 1/2 ({c.odd}·2^{c.e}): the second rounding shift rounds again"
            if c.odd >= 1 << 24 or big << max(e, 0) >= 1 << 31:
                return f"{name}: the multiplier's odd part past 2^24, or t·2^{e} past int32"
    if kernel == "q16":
        for c in chans:
            sh = c.exponent()
            if c.odd >= 1 << 15 or not -31 <= sh <= 7:
                return f"{name}: the multiplier's odd part past 2^15 (its 16-bit reduction rounds) or its exponent outside [-31, 7]"
        if big >= 1 << 47:
            return f"{name}: rq.t past 2^47"
    pre = [b if node.p["rq"].bias_place == "pre" else 0 for b in node.p["rq"].bias]
    bias = [c.sign * b - c.adj for c, b in zip(chans, pre)]
    if not fits(min(bias), max(bias), np.int32 if dt == np.int8 else np.int64):
        return f"{name}: a bias past the kernel's bias type"
    # The kernel's output: q (before a post bias) saturates to the output type.
    q_iv = cx.inter(node, "rq.q")
    out = cx.graph.tensors[node.outs[0]]
    if not fits(q_iv[0], q_iv[1], dt) and not (out.policy == "clamp" and not post and fits(out.lo, out.hi, dt)):
        return f"{name}: rq.q [{q_iv[0]}, {q_iv[1]}] passes {np.dtype(dt).name}"
    return None


def plan_quant(node, cx, in_iv, weights):
    """(kernel, channels) for a node ending in rq, or Unsupported with every kernel's reason."""
    rq = node.p["rq"]
    chans = [Channel(m, s, rq.round) for m, s in zip(rq.mult, rq.shift)]
    t_iv = cx.inter(node, "rq.t")
    need_fits(t_iv, I64, "rq.t")
    post = rq.bias_place == "post" and any(rq.bias)
    if post:
        need_fits(cx.inter(node, "rq.y"), I64, "rq.y")
    whys = []
    for k in kernels():
        why = why_kernel(k, chans, t_iv, node, cx, in_iv, weights, post)
        if why is None:
            return k, chans
        whys.append(why)
    raise Unsupported("; ".join(whys))


def quant_conv(m, x, node, kernel, chans, w_hwio, kind, cin, cout, kh, kw, sh, sw, ph, pw, mult=1):
    """One quantised convolution (kind "conv" or "depthwise") of the int64 NHWC tensor x, with the
    channels' rq; returns the int64 output. w_hwio: CONV_2D's [cout, kh, kw, cin] or
    DEPTHWISE_CONV_2D's [1, kh, kw, cout] weights (already signed per channel)."""
    dt = KERNEL_TYPE[kernel]
    rq = node.p["rq"]
    scales = [c.scale() for c in chans]
    zeros = [0] * cout
    xin_q = cast(m, x, dt)  # the values fit dt (why_kernel); scale 1, zero point 0
    m.tensors[xin_q].quantization = quant_params([1.0], [0], 0)
    if ph or pw:
        n, h, w, c = m.shape(xin_q)
        pads = i32(m, [[0, 0], [ph, ph], [pw, pw], [0, 0]], [4, 2])
        xin_q = m.op(B.PAD, [xin_q, pads], [n, h + 2 * ph, w + 2 * pw, c], dt, S.PadOptionsT(), quant=([1.0], [0], 0))
    pre = [b if rq.bias_place == "pre" else 0 for b in rq.bias]
    bias = [c.sign * b - c.adj for c, b in zip(chans, pre)]
    bdt = np.int32 if dt == np.int8 else np.int64
    qdim = 0 if kind == "conv" else 3
    wt = m.const(w_hwio, np.int8, quant=(scales, zeros, qdim))
    bt = m.const(bias, bdt, quant=(scales, zeros, 0))
    n, h, w, _ = m.shape(xin_q)
    ho, wo = (h - kh) // sh + 1, (w - kw) // sw + 1
    if kind == "conv":
        o = S.Conv2DOptionsT()
        code = B.CONV_2D
    else:
        o = S.DepthwiseConv2DOptionsT()
        o.depthMultiplier = mult
        code = B.DEPTHWISE_CONV_2D
    o.padding, o.strideH, o.strideW = S.Padding.VALID, sh, sw
    o.dilationHFactor = o.dilationWFactor = 1
    y = m.op(code, [xin_q, wt, bt], [1, ho, wo, cout], dt, o, quant=([1.0], [0], 0))
    return cast(m, y, I64)


def quant_params(scales, zps, dim):
    q = S.QuantizationParametersT()
    q.scale, q.zeroPoint, q.quantizedDimension = list(scales), list(zps), dim
    return q


def post_bias(m, y, rq, channels):
    if rq.bias_place == "post" and any(rq.bias):
        return binary(m, B.ADD, y, m.const(rq.bias, I64, [1, 1, 1, channels]))
    return y


# --- §5.2 conv --------------------------------------------------------------------------------


def conv_weights(node, cin):
    """Wt[o][ci][i][j] as per-output-channel lists."""
    p = node.p
    per = (cin // p["groups"]) * p["kh"] * p["kw"]
    return [p["w"][o * per:(o + 1) * per] for o in range(p["cout"])]


def support_conv(node, cx):
    p = node.p
    cin = cx.graph.tensors[node.ins[0]].channels
    w = p["w"]
    need(not w or fits(min(w), max(w), np.int8), f"weights [{min(w)}, {max(w)}] pass int8 (TFLite's quantised convolutions take int8 filters)")
    need_fits(cx.inter(node, "conv.acc"), I64, "conv.acc")
    node.plan = plan_quant(node, cx, cx.interval[node.ins[0]], conv_weights(node, cin))


def build_conv(m, node, ins, cx, dims, scalars):
    p = node.p
    kernel, chans = node.plan
    cin = dims[0][0]
    groups, cout, kh, kw = p["groups"], p["cout"], p["kh"], p["kw"]
    cg, og = cin // groups, cout // groups
    w = np.array(p["w"], dtype=np.int64).reshape(cout, cg, kh, kw) * np.array([c.sign for c in chans]).reshape(cout, 1, 1, 1)
    args = dict(sh=p["sh"], sw=p["sw"], ph=p["ph"], pw=p["pw"], kh=kh, kw=kw)
    if groups == 1:
        y = quant_conv(m, ins[0], node, kernel, chans, w.transpose(0, 2, 3, 1), "conv", cin=cin, cout=cout, **args)
    elif groups == cin:
        # DEPTHWISE_CONV_2D: output channel c·M + m reads input channel c, as §5.2's ⌊o/og⌋·cg.
        y = quant_conv(m, ins[0], node, kernel, chans, w[:, 0].transpose(1, 2, 0)[None], "depthwise",
                       cin=cin, cout=cout, mult=og, **args)
    else:
        parts = []
        for g in range(groups):
            sub = Sub(node, g * og, og)
            _, h, wd, _ = m.shape(ins[0])
            xg = slice_(m, ins[0], [0, 0, 0, g * cg], [1, h, wd, cg])
            parts.append(quant_conv(m, xg, sub, kernel, chans[g * og:(g + 1) * og],
                                    w[g * og:(g + 1) * og].transpose(0, 2, 3, 1), "conv", cin=cg, cout=og, **args))
        y = concat(m, parts, 3)
    return [post_bias(m, y, p["rq"], cout)]


class Sub:
    """A group's view of a conv node: its rq restricted to the group's output channels."""

    def __init__(self, node, start, count):
        rq = node.p["rq"]
        view = type(rq).__new__(type(rq))
        view.__dict__.update(rq.__dict__)
        view.bias = rq.bias[start:start + count]
        self.p = {"rq": view}


# --- §5.4 rescale: a 1×1 DEPTHWISE_CONV_2D of weight ±1 ------------------------------------------


def support_rescale(node, cx):
    c = cx.graph.tensors[node.ins[0]].channels
    node.plan = plan_quant(node, cx, cx.interval[node.ins[0]], [[1]] * c)


def build_rescale(m, node, ins, cx, dims, scalars):
    kernel, chans = node.plan
    c = dims[0][0]
    w = np.array([ch.sign for ch in chans], dtype=np.int64).reshape(1, 1, 1, c)
    y = quant_conv(m, ins[0], node, kernel, chans, w, "depthwise", cin=c, cout=c,
                   kh=1, kw=1, sh=1, sw=1, ph=0, pw=0)
    return [post_bias(m, y, node.p["rq"], c)]


# --- §5.5 elementwise, §5.6 lut16 -------------------------------------------------------------


def build_add(m, node, ins, cx, dims, scalars):
    return [binary(m, B.ADD, ins[0], ins[1])]


def build_chunk_add(m, node, ins, cx, dims, scalars):
    c, h, w = dims[0]
    a = slice_(m, ins[0], [0, 0, 0, 0], [1, h, w, c // 2])
    b = slice_(m, ins[0], [0, 0, 0, c // 2], [1, h, w, c // 2])
    return [binary(m, B.ADD, a, b)]


def build_clamp(m, node, ins, cx, dims, scalars):
    return [clamp(m, ins[0], node.p["lo"], node.p["hi"])]


def build_relu(m, node, ins, cx, dims, scalars):
    return [binary(m, B.MAXIMUM, ins[0], m.const([0]))]


def support_abs(node, cx):
    lo, hi = cx.interval[node.ins[0]]
    need(fits(lo, hi, np.int32) and lo > -(1 << 31), f"input [{lo}, {hi}]: LiteRT's ABS has no int64 kernel, and |v| passes int32")


def build_abs(m, node, ins, cx, dims, scalars):
    return [cast(m, m.op(B.ABS, [cast(m, ins[0], np.int32)], m.shape(ins[0]), np.int32), I64)]


def support_leaky(node, cx):
    need_fits(cx.interval[node.ins[0]], np.int32, "input")
    need_fits(cx.inter(node, "leaky.p"), np.int32, "leaky.p (RIGHT_SHIFT has no int64 kernel)")
    need(fits(node.p["a"], node.p["a"], np.int32), f"a = {node.p['a']} passes int32")
    need(node.p["f"] <= 31, f"f = {node.p['f']}: an int32 shift past 31")


def build_leaky(m, node, ins, cx, dims, scalars):
    # v ≥ 0 ? v : ⌊min(v, 0)·a / 2^f⌋ (RIGHT_SHIFT of a signed int32 shifts arithmetically, a floor).
    x = cast(m, ins[0], np.int32)
    neg = binary(m, B.MINIMUM, x, m.const([0], np.int32), np.int32)
    p = binary(m, B.MUL, neg, m.const([node.p["a"]], np.int32), np.int32)
    q = m.op(B.RIGHT_SHIFT, [p, m.const([node.p["f"]], np.int32)], m.shape(x), np.int32)
    ge = m.op(B.GREATER_EQUAL, [x, m.const([0], np.int32)], m.shape(x), np.bool_)
    y = m.op(B.SELECT_V2, [ge, x, q], m.shape(x), np.int32)
    return [cast(m, y, I64)]


def build_lut16(m, node, ins, cx, dims, scalars):
    # §5.6 T[v + 32768] as GATHER from the 65,536-entry int16 table.
    idx = binary(m, B.ADD, ins[0], m.const([32768]))
    o = S.GatherOptionsT()
    o.axis = 0
    y = m.op(B.GATHER, [m.const(node.p["table"], np.int16), idx], m.shape(idx), np.int16, o)
    return [cast(m, y, I64)]


# --- §5.10 movement ---------------------------------------------------------------------------


def build_concat(m, node, ins, cx, dims, scalars):
    return [concat(m, ins, 3)]


def build_split(m, node, ins, cx, dims, scalars):
    _, h, w = dims[0]
    return [slice_(m, ins[0], [0, 0, 0, node.p["start"]], [1, h, w, node.p["count"]])]


def build_crop_to(m, node, ins, cx, dims, scalars):
    c = dims[0][0]
    _, h2, w2 = dims[1]
    return [slice_(m, ins[0], [0, 0, 0, 0], [1, h2, w2, c])]


def support_crop(node, cx):
    need(all(kind == "const" for kind, _ in (node.p[k] for k in ("y0", "x0", "h", "w"))),
         "a scalar operand: the adapter builds SLICE with constant begins and sizes only")


def build_crop(m, node, ins, cx, dims, scalars):
    y0, x0, h, w = (node.p[k][1] for k in ("y0", "x0", "h", "w"))
    return [slice_(m, ins[0], [0, y0, x0, 0], [1, h, w, dims[0][0]])]


def build_pixel_shuffle(m, node, ins, cx, dims, scalars):
    # DEPTH_TO_SPACE (TensorFlow's DCR order): out[h·r + i][w·r + j][c] = in[h][w][(i·r + j)·C′ + c];
    # §5.10 reads channel c·r² + i·r + j, so a GATHER first puts it at (i·r + j)·C′ + c.
    c, h, w = dims[0]
    r = node.p["r"]
    cp = c // (r * r)
    perm = [cc * r * r + k for k in range(r * r) for cc in range(cp)]
    x = gather(m, ins[0], perm, 3)
    o = S.DepthToSpaceOptionsT()
    o.blockSize = r
    return [m.op(B.DEPTH_TO_SPACE, [x], [1, h * r, w * r, cp], I64, o)]


def build_pixel_unshuffle(m, node, ins, cx, dims, scalars):
    # SPACE_TO_DEPTH gives channel (i·r + j)·C + c; §5.10 wants c·r² + i·r + j: a GATHER after.
    c, h, w = dims[0]
    r = node.p["r"]
    o = S.SpaceToDepthOptionsT()
    o.blockSize = r
    x = m.op(B.SPACE_TO_DEPTH, [ins[0]], [1, h // r, w // r, c * r * r], I64, o)
    perm = [k * c + cc for cc in range(c) for k in range(r * r)]
    return [gather(m, x, perm, 3)]


def build_pad_rep(m, node, ins, cx, dims, scalars):
    # §5.10 out[y][x] = in[min(y, H−1)][min(x, W−1)]: GATHER of rows, then of columns.
    _, h, w = dims[0]
    mm = node.p["m"]
    hn, wn = -(-h // mm) * mm, -(-w // mm) * mm
    x = gather(m, ins[0], [min(y, h - 1) for y in range(hn)], 1)
    return [gather(m, x, [min(v, w - 1) for v in range(wn)], 2)]


def build_subpos_split(m, node, ins, cx, dims, scalars):
    c, h, w = dims[0]
    outs = []
    for a, b in node.p["order"]:
        o = S.StridedSliceOptionsT()
        outs.append(m.op(B.STRIDED_SLICE, [ins[0], i32(m, [0, a, b, 0]), i32(m, [1, h, w, c]), i32(m, [1, 2, 2, 1])],
                         [1, h // 2, w // 2, c], I64, o))
    return outs


def build_subpos_merge(m, node, ins, cx, dims, scalars):
    c, h, w = dims[0]
    at = {ab: k for k, ab in enumerate(node.p["order"])}
    rows = []
    for a in (0, 1):
        cols = [reshape(m, ins[at[(a, b)]], [1, h, w, 1, c]) for b in (0, 1)]
        rows.append(reshape(m, concat(m, cols, 3), [1, h, 1, 2 * w, c]))  # [1, H, W, 2, C] → row a
    return [reshape(m, concat(m, rows, 2), [1, 2 * h, 2 * w, c])]


def build_fill(m, node, ins, cx, dims, scalars):
    """§5.10 fill: FILL of the value (a constant, or this decode's scalar: one model per decode)."""
    _, h, w = dims[0]
    c = cx.graph.tensors[node.outs[0]].channels
    value = node.p["value"] if node.p["kind"] == "const" else scalars[node.p["value"]]
    v = m.const(value, np.int64, [])
    return [m.op(B.FILL, [i32(m, [1, h, w, c]), v], [1, h, w, c], I64)]


def no_check(node, cx):
    pass


SUPPORT = {
    "conv": support_conv, "rescale": support_rescale,
    "add": no_check, "chunk_add": no_check, "clamp": no_check, "relu": no_check, "abs": support_abs,
    "leaky": support_leaky, "lut16": no_check, "concat": no_check, "split": no_check,
    "crop_to": no_check, "crop": support_crop, "pixel_shuffle": no_check,
    "pixel_unshuffle": no_check, "pad_rep": no_check, "subpos_split": no_check,
    "subpos_merge": no_check, "fill": no_check,
}

BUILD = {
    "conv": build_conv, "rescale": build_rescale, "add": build_add,
    "chunk_add": build_chunk_add, "clamp": build_clamp, "relu": build_relu, "abs": build_abs,
    "leaky": build_leaky, "lut16": build_lut16, "concat": build_concat, "split": build_split,
    "crop_to": build_crop_to, "crop": build_crop, "pixel_shuffle": build_pixel_shuffle,
    "pixel_unshuffle": build_pixel_unshuffle, "pad_rep": build_pad_rep,
    "subpos_split": build_subpos_split, "subpos_merge": build_subpos_merge, "fill": build_fill,
}

WHY_NOT = {
    "conv_transpose": "conv_transpose: not mapped in this adapter (TRANSPOSE_CONV's int8 requantisation is the convolutions'; its padding rules are not worked out here)",
    "mul": "mul: not mapped in this adapter (the quantised MUL's requantisation is not worked out here; an int64 MUL has no rounding shift)",
    "chscale": "chscale: its multiplier row is chosen by a run-time scalar; TFLite's requantisation multipliers are model constants",
    "gram": "gram: not mapped in this adapter (BATCH_MATMUL's int8 requantisation is not worked out here)",
    "apply": "apply: not mapped in this adapter (BATCH_MATMUL's int8 requantisation is not worked out here)",
    "igdn": "igdn: isqrt has no TFLite operator (SQRT and RSQRT are floating-point or table-based)",
    "layernorm_c": "layernorm_c: rsqrt_q16 (isqrt) has no TFLite operator",
    "l2norm": "l2norm: rsqrt_q16 (isqrt) has no TFLite operator (L2_NORMALIZATION is floating-point or table-based)",
    "softmax": "softmax: exp_neg_q16 has no exact TFLite mapping (SOFTMAX is floating-point or table-based)",
    "sigmoid": "sigmoid: exp_neg_q16 has no exact TFLite mapping (LOGISTIC is floating-point or table-based)",
    "elu": "elu: exp_neg_q16 has no exact TFLite mapping (ELU is floating-point or table-based)",
}


def support(node, cx):
    check_support(SUPPORT, WHY_NOT, node, cx)
