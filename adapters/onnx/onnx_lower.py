"""wai-ops/1 nodes as ONNX graphs (docs/onnx.md), one ONNX graph per node.

Between nodes every tensor is an int64 `[1, C, H, W]` (NCHW, ONNX's own layout); the certificate
(integer-operators §8.5) proves each tensor and intermediate fits the ONNX type the node forms it
in. `support(node, cx)` decides from the graph and its certificate alone whether a node maps
exactly, raising `Unsupported` with the reason; `BUILD[op](g, node, ins, cx, dims)` adds its ONNX
operators and returns its outputs (int64).
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
from protocol import Context, Unsupported, check_support  # noqa: E402,F401 - shared by the adapters

from onnx_graph import cast, fits, i64, reshape, slice_, transpose

I64 = np.int64


def need(cond, reason):
    if not cond:
        raise Unsupported(reason)


def need_fits(iv, dtype, what):
    need(fits(iv[0], iv[1], dtype), f"{what} [{iv[0]}, {iv[1]}] passes {np.dtype(dtype).name}")


# --- §2 rounding of a scaled product, in int64 ONNX operators ---------------------------------
#
# ONNX has no arithmetic right shift on signed integers (BitShift is unsigned only), and its
# integer Div truncates toward zero in both backends (docs/onnx.md, "Observations"). The floor
# quotient is therefore formed as Div(p − Mod(p, d), d): Mod with fmod = 0 takes the divisor's
# sign, so p − Mod(p, d) is an exact multiple of d and the Div is exact whichever way it rounds.


def floor_div_pow2(g, p, s):
    """⌊p / 2^s⌋ for int64 p, 0 ≤ s ≤ 62; and (q, r) with r = p − q·2^s ∈ [0, 2^s)."""
    if s == 0:
        return p, None
    d = i64(g, 1 << s)
    r = g.op("Mod", [p, d], fmod=0)
    return g.op("Div", [g.op("Sub", [p, r]), d]), r


def round_pow2(g, p, s, rnd):
    """§2 R_round(p, s) for one shift s (the caller has checked the widths)."""
    if s == 0:
        return p
    if s >= 63:  # rq.p fits i64, so ⌊p / 2^s⌋ is −1 or 0 (only floor gets here)
        neg = g.op("Less", [p, i64(g, 0)])
        return g.op("Where", [neg, i64(g, -1), i64(g, 0)])
    if rnd == "half_up":  # ⌊(p + 2^(s−1)) / 2^s⌋; rq.p's interval covers p + 2^(s−1)
        q, _ = floor_div_pow2(g, g.op("Add", [p, i64(g, 1 << (s - 1))]), s)
        return q
    q, r = floor_div_pow2(g, p, s)
    if rnd == "floor":
        return q
    # half_even: q + 1 when r > h, or r = h and q is odd
    h = i64(g, 1 << (s - 1))
    up = g.op("Or", [g.op("Greater", [r, h]),
                     g.op("And", [g.op("Equal", [r, h]),
                                  g.op("Equal", [g.op("Mod", [q, i64(g, 2)], fmod=0), i64(g, 1)])])])
    return g.op("Add", [q, cast(g, up, np.int64)])


def shift_ok(s, rnd):
    return s <= 62 or rnd == "floor"


# --- §5.1 rq ----------------------------------------------------------------------------------


def support_rq(node, cx):
    rq = node.p["rq"]
    for key in ("rq.t", "rq.p", "rq.q", "rq.y"):
        need_fits(cx.inter(node, key), I64, key)
    bad = [s for s in set(rq.shift) if not shift_ok(s, rq.round)]
    if bad:
        raise Unsupported(f"shift {max(bad)} with {rq.round}: 2^(s−1) passes int64")


def per_channel(g, values, channels):
    return g.const(values, I64, [1, channels, 1, 1])


def build_rq(g, t, node, channels, cx):
    """§5.1: y = R(t·m, s) + post bias, t (int64) already holding a pre bias, in exact int64
    operators."""
    rq = node.p["rq"]
    q = round_rq(g, t, rq, channels)
    return add_post_bias(g, q, rq, channels)


def add_post_bias(g, q, rq, channels):
    if rq.bias_place == "post":
        return g.op("Add", [q, per_channel(g, rq.bias, channels)])
    return q


def round_rq(g, t, rq, channels):
    """R(t·m, s) per channel in exact int64 operators."""
    p = t if rq.mult_absent else g.op("Mul", [t, per_channel(g, rq.mult, channels)])
    shifts = sorted(set(rq.shift))
    if len(shifts) == 1:
        return round_pow2(g, p, shifts[0], rq.round)
    q = None  # one rounding per distinct shift, each channel taking its own
    for s in shifts:
        qs = round_pow2(g, p, s, rq.round)
        mask = g.const([v == s for v in rq.shift], np.bool_, [1, channels, 1, 1])
        q = qs if q is None else g.op("Where", [mask, qs, q])
    return q


def add_pre_bias(g, t, rq, channels):
    if rq.bias_place == "pre":
        return g.op("Add", [t, per_channel(g, rq.bias, channels)])
    return t


# --- §5.2 conv: QLinearConv when its requantisation is rq's, else ConvInteger and rq in int64 --


def qlinear_scales(node, cx, per_channel=True):
    """QLinearConv's or QLinearMatMul's (w_scale per channel, y_scale) when its output,
    round(t · w_scale / y_scale) half to even with x_scale 1, is rq's R_half_even(t·m, s) exactly,
    or None: multipliers in [1, 2^24) (and so exact binary32 scales), y_scale 2^S for the largest
    shift S and w_scale m·2^(S − s), the pre bias as QLinearConv's int32 bias (rq.t in int32) and
    R's result in int8 (a post bias is added after, in int64). QLinearMatMul (not
    `per_channel`) takes one scale per tensor and no bias."""
    rq = node.p["rq"]
    if not per_channel and (len(set(zip(rq.mult, rq.shift))) > 1
                            or (rq.bias_place == "pre" and any(rq.bias))):
        return None
    big = max(rq.shift)
    ok = (rq.round == "half_even" and all(1 <= m < 1 << 24 for m in rq.mult) and big <= 126
          and all(m << (big - s) < 1 << 127 for m, s in zip(rq.mult, rq.shift))
          and fits(*cx.inter(node, "rq.t"), np.int32) and fits(*cx.inter(node, "rq.q"), np.int8))
    if not ok:
        return None
    return [float(m) * 2.0 ** (big - s) for m, s in zip(rq.mult, rq.shift)], 2.0 ** big


def activation(iv):
    """The 8-bit type an activation interval fits: int8, else uint8 (ONNX's integer convolutions
    and products take either), else None."""
    return next((t for t in (np.int8, np.uint8) if fits(iv[0], iv[1], t)), None)


def need_activation(iv, what):
    need(activation(iv) is not None, f"{what} [{iv[0]}, {iv[1]}] passes int8 and uint8")


def support_conv(node, cx):
    need_activation(cx.interval[node.ins[0]], "input")
    w = node.p["w"]
    need(not w or fits(min(w), max(w), np.int8), f"weights [{min(w)}, {max(w)}] pass int8")
    need_fits(cx.inter(node, "conv.acc"), np.int32, "conv.acc (the int32 accumulator)")
    support_rq(node, cx)


def build_conv(g, node, ins, cx, dims):
    p = node.p
    cin, cout = dims[0][0], p["cout"]
    w = g.const(p["w"], np.int8, [cout, cin // p["groups"], p["kh"], p["kw"]])
    xt = activation(cx.interval[node.ins[0]])
    x = cast(g, ins[0], xt)
    attrs = dict(group=p["groups"], kernel_shape=[p["kh"], p["kw"]], strides=[p["sh"], p["sw"]],
                 pads=[p["ph"], p["pw"], p["ph"], p["pw"]])
    rq = p["rq"]
    scales = qlinear_scales(node, cx)
    if scales is None:
        acc = g.op("ConvInteger", [x, w], **attrs)
        return [build_rq(g, add_pre_bias(g, cast(g, acc, I64), rq, cout), node, cout, cx)]
    w_scale, y_scale = scales
    f32, zero8 = np.float32, np.int8
    bias = rq.bias if rq.bias_place == "pre" else [0] * cout
    q = g.op("QLinearConv", [x, g.const(1.0, f32), g.const(0, xt), w, g.const(w_scale, f32),
                             g.const([0] * cout, zero8), g.const(y_scale, f32), g.const(0, zero8),
                             g.const(bias, np.int32)], **attrs)
    return [add_post_bias(g, cast(g, q, I64), rq, cout)]


# --- §5.4 rescale, chscale, mul ----------------------------------------------------------------


def build_rescale(g, node, ins, cx, dims):
    c = dims[0][0]
    return [build_rq(g, add_pre_bias(g, ins[0], node.p["rq"], c), node, c, cx)]


def support_mul(node, cx):
    need_fits(cx.inter(node, "mul.p"), I64, "mul.p")
    support_rq(node, cx)


def build_mul(g, node, ins, cx, dims):
    # b [1, 1, H, W] broadcasts over C against [1, C, H, W].
    return [build_rq(g, g.op("Mul", [ins[0], ins[1]]), node, dims[0][0], cx)]


# --- §5.5 elementwise, §5.6 lut16 -------------------------------------------------------------


def build_add(g, node, ins, cx, dims):
    return [g.op("Add", [ins[0], ins[1]])]


def build_chunk_add(g, node, ins, cx, dims):
    c = dims[0][0]
    a = slice_(g, ins[0], [0], [c // 2], [1])
    b = slice_(g, ins[0], [c // 2], [c], [1])
    return [g.op("Add", [a, b])]


def clamp(g, x, lo, hi):
    """clamp(v, lo, hi) as Clip on int64 (both backends implement it for int64)."""
    return g.op("Clip", [x, i64(g, lo), i64(g, hi)])


def build_clamp(g, node, ins, cx, dims):
    return [clamp(g, ins[0], node.p["lo"], node.p["hi"])]


def build_relu(g, node, ins, cx, dims):
    return [g.op("Max", [ins[0], i64(g, 0)])]


def build_abs(g, node, ins, cx, dims):
    return [g.op("Abs", [ins[0]])]


def support_leaky(node, cx):
    need_fits(cx.inter(node, "leaky.p"), I64, "leaky.p")


def build_leaky(g, node, ins, cx, dims):
    # v ≥ 0 ? v : ⌊v·a / 2^f⌋, the product formed on min(v, 0) so only leaky.p's values are formed.
    x = ins[0]
    neg = g.op("Mul", [g.op("Min", [x, i64(g, 0)]), i64(g, node.p["a"])])
    neg = round_pow2(g, neg, node.p["f"], "floor")
    return [g.op("Where", [g.op("GreaterOrEqual", [x, i64(g, 0)]), x, neg])]


def build_lut16(g, node, ins, cx, dims):
    # §5.6 T[v + 32768] as Gather over the 65,536-entry int16 table.
    idx = g.op("Add", [ins[0], i64(g, 32768)])
    return [cast(g, g.op("Gather", [g.const(node.p["table"], np.int16), idx], axis=0), I64)]


# --- §5.10 movement ---------------------------------------------------------------------------


def build_concat(g, node, ins, cx, dims):
    return [g.op("Concat", ins, axis=1)]


def build_split(g, node, ins, cx, dims):
    s = node.p["start"]
    return [slice_(g, ins[0], [s], [s + node.p["count"]], [1])]


def build_crop_to(g, node, ins, cx, dims):
    _, h2, w2 = dims[1]
    return [slice_(g, ins[0], [0, 0], [h2, w2], [2, 3])]


def support_crop(node, cx):
    need(all(kind == "const" for kind, _ in (node.p[k] for k in ("y0", "x0", "h", "w"))),
         "a scalar operand: the adapter builds Slice with constant starts and ends only")


def build_crop(g, node, ins, cx, dims):
    y0, x0, h, w = (node.p[k][1] for k in ("y0", "x0", "h", "w"))
    return [slice_(g, ins[0], [y0, x0], [y0 + h, x0 + w], [2, 3])]


def movement_type(cx, t):
    """The type DepthToSpace runs in: onnxruntime's CPU kernel has int8, uint8, float and double,
    no int64; int8 when the interval fits it, double when every value is an exact double."""
    lo, hi = cx.interval[t]
    for dt in (np.int8, np.float64):
        if fits(lo, hi, dt):
            return dt
    return None


def support_pixel_shuffle(node, cx):
    need(movement_type(cx, node.ins[0]) is not None,
         "input interval passes ±2^53: DepthToSpace has no int64 kernel in onnxruntime and double is inexact there")


def build_pixel_shuffle(g, node, ins, cx, dims):
    # DepthToSpace mode CRD: out[c][h·r + i][w·r + j] = in[c·r² + i·r + j][h][w], as §5.10.
    dt = movement_type(cx, node.ins[0])
    y = g.op("DepthToSpace", [cast(g, ins[0], dt)], blocksize=node.p["r"], mode="CRD")
    return [cast(g, y, I64)]


def build_pixel_unshuffle(g, node, ins, cx, dims):
    # SpaceToDepth orders channels (i·r + j)·C + c (DCR), not §5.10's c·r² + i·r + j, so:
    c, h, w = dims[0]
    r = node.p["r"]
    x = reshape(g, ins[0], [1, c, h // r, r, w // r, r])  # [1, C, h, i, w, j]
    x = transpose(g, x, [0, 1, 3, 5, 2, 4])  # [1, C, i, j, h, w]
    return [reshape(g, x, [1, c * r * r, h // r, w // r])]


def build_pad_rep(g, node, ins, cx, dims):
    _, h, w = dims[0]
    m = node.p["m"]
    hn, wn = -(-h // m) * m, -(-w // m) * m
    return [g.op("Pad", [ins[0], g.const([0, 0, 0, 0, 0, 0, hn - h, wn - w])], mode="edge")]


def build_subpos_split(g, node, ins, cx, dims):
    c, h, w = dims[0]
    x = reshape(g, ins[0], [c, h // 2, 2, w // 2, 2])
    outs = []
    for a, b in node.p["order"]:
        part = slice_(g, x, [a, b], [a + 1, b + 1], [2, 4])
        outs.append(reshape(g, part, [1, c, h // 2, w // 2]))
    return outs


def build_subpos_merge(g, node, ins, cx, dims):
    c, h, w = dims[0]
    at = {ab: k for k, ab in enumerate(node.p["order"])}
    rows = []
    for a in (0, 1):
        cols = [reshape(g, ins[at[(a, b)]], [c, h, 1, w, 1]) for b in (0, 1)]
        rows.append(g.op("Concat", cols, axis=4))
    x = g.op("Concat", rows, axis=2)  # [C, H, 2, W, 2]
    return [reshape(g, x, [1, c, 2 * h, 2 * w])]


def build_fill(g, node, ins, cx, dims, value):
    """§5.10 fill: the value fed as a one-element input and Expanded to [1, C, H, W]."""
    _, h, w = dims[0]
    c = cx.graph.tensors[node.outs[0]].channels
    one = g.input(np.full((1, 1, 1, 1), value, dtype=np.int64))
    return [g.op("Expand", [one, g.const([1, c, h, w])])]


# --- §5.9 gram, apply: MatMulInteger per group -------------------------------------------------


def support_contraction(node, cx):
    for t in node.ins:
        need_activation(cx.interval[t], "an input")
    key = node.op + ".acc"
    need_fits(cx.inter(node, key), np.int32, key + " (MatMulInteger's int32 accumulator)")
    support_rq(node, cx)


def build_gram(g, node, ins, cx, dims):
    # out[g·d + i][0][j] = R(Σ_{y,x} A[g·d + i][y][x]·B[g·d + j][y][x], s): per group A_g·B_gᵀ.
    c, h, w = dims[0]
    groups = node.p["groups"]
    d, n = c // groups, h * w
    a = reshape(g, as_activation(g, ins[0], node.ins[0], cx), [groups, d, n])
    b = transpose(g, reshape(g, as_activation(g, ins[1], node.ins[1], cx), [groups, d, n]), [0, 2, 1])
    return [contraction(g, node, cx, a, b, [1, c, 1, d])]  # A_g·B_gᵀ: [G, d, d]


def build_apply(g, node, ins, cx, dims):
    # out[g·d + i][y][x] = R(Σ_j A[g·d + i][0][j]·V[g·d + j][y][x], s): per group A_g·V_g.
    c, h, w = dims[1]
    groups = node.p["groups"]
    d, n = c // groups, h * w
    a = reshape(g, as_activation(g, ins[0], node.ins[0], cx), [groups, d, d])
    v = reshape(g, as_activation(g, ins[1], node.ins[1], cx), [groups, d, n])
    return [contraction(g, node, cx, a, v, [1, c, h, w])]  # A_g·V_g: [G, d, L]


def as_activation(g, x, tensor, cx):
    return cast(g, x, activation(cx.interval[tensor]))


def contraction(g, node, cx, a, b, shape):
    """The batched int8 product a·b, then rq, as an int64 tensor of `shape`: QLinearMatMul when
    its requantisation is rq's (`qlinear_scales`), else MatMulInteger and rq in int64."""
    c, rq = shape[1], node.p["rq"]
    scales = qlinear_scales(node, cx, per_channel=False)
    if scales is None:
        t = reshape(g, cast(g, g.op("MatMulInteger", [a, b]), I64), shape)
        return build_rq(g, t, node, c, cx)
    f32, (ta, tb) = np.float32, (activation(cx.interval[t]) for t in node.ins)
    q = g.op("QLinearMatMul", [a, g.const(1.0, f32), g.const(0, ta), b, g.const(scales[0][0], f32),
                               g.const(0, tb), g.const(scales[1], f32), g.const(0, np.int8)])
    return add_post_bias(g, reshape(g, cast(g, q, I64), shape), rq, c)


def support_chscale(node, cx):
    p = node.p
    need_fits(cx.inter(node, "rq.p"), I64, "rq.p")
    need(shift_ok(p["shift"], p["round"]), f"shift {p['shift']} with {p['round']}: 2^(s−1) passes int64")


def build_chscale(g, node, ins, cx, dims, scalars):
    # The multiplier row M[k] chosen at run time: Gather of the table by the scalar, fed as input.
    c = dims[0][0]
    p = node.p
    k = g.input(np.array(scalars[p["scalar"]], dtype=np.int64))
    row = g.op("Gather", [g.const(p["m"], I64, [p["n_rows"], c]), k], axis=0)
    prod = g.op("Mul", [ins[0], reshape(g, row, [1, c, 1, 1])])
    return [round_pow2(g, prod, p["shift"], p["round"])]


def no_check(node, cx):
    pass


SUPPORT = {
    "conv": support_conv, "rescale": support_rq, "chscale": support_chscale, "mul": support_mul,
    "add": no_check, "chunk_add": no_check, "clamp": no_check, "relu": no_check, "abs": no_check,
    "leaky": support_leaky, "lut16": no_check, "concat": no_check, "split": no_check,
    "crop_to": no_check, "crop": support_crop, "pixel_shuffle": support_pixel_shuffle,
    "pixel_unshuffle": no_check, "pad_rep": no_check, "subpos_split": no_check,
    "subpos_merge": no_check, "fill": no_check, "gram": support_contraction,
    "apply": support_contraction,
}

BUILD = {
    "conv": build_conv, "rescale": build_rescale, "mul": build_mul, "add": build_add,
    "chunk_add": build_chunk_add, "clamp": build_clamp, "relu": build_relu, "abs": build_abs,
    "leaky": build_leaky, "lut16": build_lut16, "concat": build_concat, "split": build_split,
    "crop_to": build_crop_to, "crop": build_crop, "pixel_shuffle": build_pixel_shuffle,
    "pixel_unshuffle": build_pixel_unshuffle, "pad_rep": build_pad_rep,
    "subpos_split": build_subpos_split, "subpos_merge": build_subpos_merge,
    "gram": build_gram, "apply": build_apply,
}

WHY_NOT = {
    "conv_transpose": "conv_transpose: ONNX's ConvTranspose has no integer form (float types only), and there is no ConvTransposeInteger",
    "igdn": "igdn: isqrt has no ONNX operator (Sqrt is floating-point)",
    "layernorm_c": "layernorm_c: rsqrt_q16 (isqrt) has no ONNX operator (Sqrt is floating-point)",
    "l2norm": "l2norm: rsqrt_q16 (isqrt) has no ONNX operator (Sqrt is floating-point)",
    "softmax": "softmax: exp_neg_q16 has no exact ONNX mapping (Exp and Softmax are floating-point)",
    "sigmoid": "sigmoid: exp_neg_q16 has no exact ONNX mapping (Exp and Sigmoid are floating-point)",
    "elu": "elu: exp_neg_q16 has no exact ONNX mapping (Exp and Elu are floating-point)",
}


def support(node, cx):
    check_support(SUPPORT, WHY_NOT, node, cx)
