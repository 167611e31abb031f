"""wai-ops/1 nodes as TOSA graphs (docs/tosa.md), one TOSA graph per node.

Between nodes every tensor is carried as TOSA INT64 in NHWC (`[1, H, W, C]`); the certificate
(integer-operators §8.5) proves each tensor and intermediate fits the TOSA type the node uses.
`support(node, cx)` decides from the graph and its certificate alone whether a node maps exactly,
raising `Unsupported` with the reason; `build(g, node, ins, cx, dims)` adds its TOSA operators.
"""

import sys
from pathlib import Path

import numpy as np
import tosa_serializer as ts

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
from protocol import Context, Unsupported, check_support  # noqa: E402,F401 - shared by the adapters

from tosa_graph import (D, binary, cast, concat, fits, minmax, mul, reshape, shift_right, slice_,
                        tile, transpose, attr)

I32 = (-(1 << 31), (1 << 31) - 1)


def need(cond, reason):
    if not cond:
        raise Unsupported(reason)


def need_fits(iv, dtype, what):
    need(fits(iv[0], iv[1], dtype), f"{what} [{iv[0]}, {iv[1]}] passes {dtype.name}")


# --- §5.1 rq: RESCALE (half_up, §9.4 rewrites) or INT64 MUL + ARITHMETIC_RIGHT_SHIFT ---------


def rescale_params(m, s):
    """§9.4 'a shift outside a unit's range': (m', s') with R(t·m, s) = R(t·m', s'), m' < 2^31,
    2 ≤ s' ≤ 62, s' as large as the multiplier allows (widening RESCALE's input range), or None."""
    if s > 62:
        k = s - 62
        if m % (1 << k):
            return None
        m, s = m >> k, 62
    while m >= 1 << 31 and m % 2 == 0 and s > 2:  # the same identity read backwards
        m, s = m >> 1, s - 1
    if m >= 1 << 31:
        return None
    if m == 0:
        return 0, 62
    while s < 62 and 2 * m < 1 << 31:
        m, s = 2 * m, s + 1
    return (m, s) if s >= 2 else None


def rq_path(node, cx):
    """Which mapping the node's rq takes: "rescale", "int64", or Unsupported."""
    rq = node.p["rq"]
    need(rq.round != "half_even", "rq rounds half_even: TOSA rounds ties only up (SINGLE_ROUND) or floors")
    t, q, y = cx.inter(node, "rq.t"), cx.inter(node, "rq.q"), cx.inter(node, "rq.y")
    need_fits(y, D.INT64, "rq.y")
    if rq.round == "half_up" and fits(*t, D.INT32) and fits(*q, D.INT32) and t[0] > I32[0]:
        params = [rescale_params(abs(m), s) for m, s in zip(rq.mult, rq.shift)]
        if all(p is not None and -(1 << (p[1] - 1)) <= t[0] and t[1] < 1 << (p[1] - 1) for p in params):
            return "rescale"
    p = cx.inter(node, "rq.p")
    need_fits(p, D.INT64, "rq.p (no RESCALE mapping)")
    need(max(rq.shift) <= 63, f"shift {max(rq.shift)} passes ARITHMETIC_RIGHT_SHIFT's 63")
    return "int64"


def build_rq(g, t, node, cx, channels):
    """§5.1: y = R(t·m, s) + post bias, t already holding a pre bias."""
    rq = node.p["rq"]
    c4 = [1, 1, 1, channels]
    if rq_path(node, cx) == "rescale":
        t = cast(g, t, D.INT32)
        signs = [-1 if m < 0 else 1 for m in rq.mult]
        if -1 in signs:  # §9.4 'a negative multiplier': R(t·m, s) = R((−t)·(−m), s)
            t = mul(g, t, g.const(signs, D.INT32, c4))
        params = [rescale_params(abs(m), s) for m, s in zip(rq.mult, rq.shift)]
        ins = [t, g.const([p[0] for p in params], D.INT32, [channels]),
               g.const([p[1] for p in params], D.INT8, [channels]),
               g.const([0], D.INT32, [1]), g.const([0], D.INT32, [1])]
        a = attr("Rescale", True, ts.RoundingMode.SINGLE_ROUND, True, False, False)
        q = cast(g, g.op(ts.Op.RESCALE, ins, t.shape, D.INT32, a), D.INT64)
    else:
        p = cast(g, t, D.INT64)
        if not rq.mult_absent:
            p = mul(g, p, g.const(rq.mult, D.INT64, c4))
        q = shift_right(g, p, g.const(rq.shift, D.INT64, c4), rq.round == "half_up")
    if rq.bias_place == "post":
        q = binary(g, ts.Op.ADD, q, g.const(rq.bias, D.INT64, c4))
    return q


def pre_bias(rq):
    return rq.bias if rq.bias_place == "pre" else [0] * len(rq.bias)


# --- §5.2 conv, §5.3 conv_transpose ----------------------------------------------------------


def conv_types(node, cx, acc_key):
    """int8 inputs and weights with an INT32 accumulator (TOSA's i8 conv); the accumulator
    interval (every partial sum, §8.2) must fit, since TOSA does not flag its overflow."""
    x = cx.interval[node.ins[0]]
    need_fits(x, D.INT8, "input")
    w = node.p["w"]
    need(not w or fits(min(w), max(w), D.INT8), f"weights [{min(w)}, {max(w)}] pass INT8")
    need_fits(cx.inter(node, acc_key), D.INT32, acc_key)
    need_fits(cx.inter(node, "rq.t"), D.INT32, "rq.t")


def support_conv(node, cx):
    conv_types(node, cx, "conv.acc")
    rq_path(node, cx)


def conv_weights(p, cin, groups):
    """[cout][cg][kh][kw] as nested lists, from the flat §10.4 order."""
    cg, kh, kw = cin // groups, p["kh"], p["kw"]
    w = p["w"]
    return [[[[w[((o * cg + c) * kh + i) * kw + j] for j in range(kw)] for i in range(kh)]
             for c in range(cg)] for o in range(p["cout"])]


def build_conv(g, node, ins, cx, dims):
    p = node.p
    cin, h, w = dims[0]
    groups, cout = p["groups"], p["cout"]
    x = cast(g, ins[0], D.INT8)
    # CONV2D needs the padded size to divide exactly: the bottom/right pad is ph − r, and rows
    # past the last window are never read, so a negative pad crops them instead (§5.2 Ho).
    pads = []
    for side, k, s, pd in ((h, p["kh"], p["sh"], p["ph"]), (w, p["kw"], p["sw"], p["pw"])):
        pads.append((pd, pd - (side + 2 * pd - k) % s))
    (top, bottom), (left, right) = pads
    if bottom < 0 or right < 0:
        x = slice_(g, x, [0, 0, 0, 0], [1, h + min(bottom, 0), w + min(right, 0), cin])
    pad = [top, max(bottom, 0), left, max(right, 0)]
    wt = conv_weights(p, cin, groups)
    bias = pre_bias(p["rq"])
    zp = g.const([0], D.INT8, [1])
    ho = (h + 2 * p["ph"] - p["kh"]) // p["sh"] + 1
    wo = (w + 2 * p["pw"] - p["kw"]) // p["sw"] + 1
    stride, dil = [p["sh"], p["sw"]], [1, 1]
    cg, og = cin // groups, cout // groups
    if groups == cin and groups > 1:
        # DEPTHWISE_CONV2D: output channel c·M + m reads input channel c, as §5.2's ⌊o/og⌋·cg.
        wd = [[[[wt[c * og + m][0][i][j] for m in range(og)] for c in range(cin)]
               for j in range(p["kw"])] for i in range(p["kh"])]
        a = attr("DepthwiseConv2d", pad, stride, dil, False, D.INT32)
        ins_ = [x, g.const(wd, D.INT8), g.const(bias, D.INT32, [cout]), zp, zp]
        acc = g.op(ts.Op.DEPTHWISE_CONV2D, ins_, [1, ho, wo, cout], D.INT32, a)
    else:
        parts = []
        for k in range(groups):
            xg = x if groups == 1 else slice_(g, x, [0, 0, 0, k * cg], x.shape[:3] + [cg])
            wg = [[[[wt[o][c][i][j] for c in range(cg)] for j in range(p["kw"])]
                   for i in range(p["kh"])] for o in range(k * og, (k + 1) * og)]
            a = attr("Conv2d", pad, stride, dil, False, D.INT32)
            ins_ = [xg, g.const(wg, D.INT8), g.const(bias[k * og:(k + 1) * og], D.INT32, [og]), zp, zp]
            parts.append(g.op(ts.Op.CONV2D, ins_, [1, ho, wo, og], D.INT32, a))
        acc = parts[0] if groups == 1 else concat(g, parts, 3)
    return [build_rq(g, acc, node, cx, cout)]


def support_conv_transpose(node, cx):
    p = node.p
    # TRANSPOSE_CONV2D's out_pad must exceed −KH (and −KW).
    need(p["ph"] < p["kh"] and p["ph"] - p["oph"] < p["kh"], "ph ≥ kh or ph − oph ≥ kh (TOSA out_pad > −KH)")
    need(p["pw"] < p["kw"] and p["pw"] - p["opw"] < p["kw"], "pw ≥ kw or pw − opw ≥ kw (TOSA out_pad > −KW)")
    conv_types(node, cx, "convT.acc")
    rq_path(node, cx)


def build_conv_transpose(g, node, ins, cx, dims):
    p = node.p
    cin, h, w = dims[0]
    cout, kh, kw = p["cout"], p["kh"], p["kw"]
    x = cast(g, ins[0], D.INT8)
    flat = p["w"]  # Wt[cin][cout][kh][kw] -> TOSA [OC, KH, KW, IC]
    wt = [[[[flat[((c * cout + o) * kh + i) * kw + j] for c in range(cin)] for j in range(kw)]
            for i in range(kh)] for o in range(cout)]
    out_pad = [-p["ph"], p["oph"] - p["ph"], -p["pw"], p["opw"] - p["pw"]]
    ho = (h - 1) * p["sh"] + kh + p["oph"] - 2 * p["ph"]
    wo = (w - 1) * p["sw"] + kw + p["opw"] - 2 * p["pw"]
    zp = g.const([0], D.INT8, [1])
    a = attr("TransposeConv2d", out_pad, [p["sh"], p["sw"]], False, D.INT32)
    ins_ = [x, g.const(wt, D.INT8), g.const(pre_bias(p["rq"]), D.INT32, [cout]), zp, zp]
    acc = g.op(ts.Op.TRANSPOSE_CONV2D, ins_, [1, ho, wo, cout], D.INT32, a)
    return [build_rq(g, acc, node, cx, cout)]


# --- §5.4 rescale, mul -----------------------------------------------------------------------


def support_rescale(node, cx):
    need_fits(cx.inter(node, "rq.t"), D.INT64, "rq.t")
    rq_path(node, cx)


def build_rescale(g, node, ins, cx, dims):
    c = dims[0][0]
    t = ins[0]
    if node.p["rq"].bias_place == "pre":
        t = binary(g, ts.Op.ADD, t, g.const(node.p["rq"].bias, D.INT64, [1, 1, 1, c]))
    return [build_rq(g, t, node, cx, c)]


def support_mul(node, cx):
    need_fits(cx.inter(node, "mul.p"), D.INT64, "mul.p")
    rq_path(node, cx)


def build_mul(g, node, ins, cx, dims):
    # b [1, H, W] broadcasts over C: NHWC [1, H, W, 1] against [1, H, W, C].
    return [build_rq(g, mul(g, ins[0], ins[1]), node, cx, dims[0][0])]


# --- §5.5 elementwise, §5.6 lut16 -------------------------------------------------------------


def scalar4(g, v):
    return g.const([v], D.INT64, [1, 1, 1, 1])


def build_add(g, node, ins, cx, dims):
    return [binary(g, ts.Op.ADD, ins[0], ins[1])]


def build_chunk_add(g, node, ins, cx, dims):
    c, h, w = dims[0]
    a = slice_(g, ins[0], [0, 0, 0, 0], [1, h, w, c // 2])
    b = slice_(g, ins[0], [0, 0, 0, c // 2], [1, h, w, c // 2])
    return [binary(g, ts.Op.ADD, a, b)]


def clamp(g, x, lo, hi):
    """clamp(v, lo, hi) as MAXIMUM then MINIMUM (TOSA's CLAMP takes no integer wider than 16)."""
    return minmax(g, ts.Op.MINIMUM, minmax(g, ts.Op.MAXIMUM, x, scalar4(g, lo)), scalar4(g, hi))


def build_clamp(g, node, ins, cx, dims):
    return [clamp(g, ins[0], node.p["lo"], node.p["hi"])]


def build_relu(g, node, ins, cx, dims):
    return [minmax(g, ts.Op.MAXIMUM, ins[0], scalar4(g, 0))]


def build_abs(g, node, ins, cx, dims):
    return [g.op(ts.Op.ABS, [ins[0]], ins[0].shape, D.INT64, attr("Abs"))]


def support_leaky(node, cx):
    need_fits(cx.inter(node, "leaky.p"), D.INT64, "leaky.p")
    need(node.p["f"] <= 63, "f passes ARITHMETIC_RIGHT_SHIFT's 63")


def build_leaky(g, node, ins, cx, dims):
    # v ≥ 0 ? v : ⌊v·a / 2^f⌋; the product is formed on min(v, 0) so that only leaky.p's
    # values (§5.5) are ever formed.
    x = ins[0]
    neg = mul(g, minmax(g, ts.Op.MINIMUM, x, scalar4(g, 0)), scalar4(g, node.p["a"]))
    neg = shift_right(g, neg, scalar4(g, node.p["f"]), False)
    ge = binary(g, ts.Op.GREATER_EQUAL, x, scalar4(g, 0), out_dtype=D.BOOL)
    return [g.op(ts.Op.SELECT, [ge, x, neg], x.shape, D.INT64, attr("Select"))]


def build_lut16(g, node, ins, cx, dims):
    # §5.6 T[v + 32768] as GATHER over the table; TOSA's int16 TABLE interpolates 513 entries.
    c, h, w = dims[0]
    n = c * h * w
    idx = binary(g, ts.Op.ADD, cast(g, ins[0], D.INT32), g.const([32768], D.INT32, [1, 1, 1, 1]))
    table = g.const(node.p["table"], D.INT16, [1, 65536, 1])
    got = g.op(ts.Op.GATHER, [table, reshape(g, idx, [1, n])], [1, n, 1], D.INT16, attr("Gather"))
    return [reshape(g, cast(g, got, D.INT64), [1, h, w, c])]


# --- §5.10 movement ---------------------------------------------------------------------------


def build_concat(g, node, ins, cx, dims):
    return [concat(g, ins, 3)]


def build_split(g, node, ins, cx, dims):
    _, h, w = dims[0]
    return [slice_(g, ins[0], [0, 0, 0, node.p["start"]], [1, h, w, node.p["count"]])]


def build_crop_to(g, node, ins, cx, dims):
    c = dims[0][0]
    _, h2, w2 = dims[1]
    return [slice_(g, ins[0], [0, 0, 0, 0], [1, h2, w2, c])]


def support_crop(node, cx):
    need(all(kind == "const" for kind, _ in (node.p[k] for k in ("y0", "x0", "h", "w"))),
         "a scalar operand: TOSA's SLICE takes its start and size as graph constants")


def build_crop(g, node, ins, cx, dims):
    c = dims[0][0]
    y0, x0, h, w = (node.p[k][1] for k in ("y0", "x0", "h", "w"))
    return [slice_(g, ins[0], [0, y0, x0, 0], [1, h, w, c])]


def build_pixel_shuffle(g, node, ins, cx, dims):
    c, h, w = dims[0]
    r = node.p["r"]
    x = reshape(g, ins[0], [1, h, w, c // (r * r), r, r])  # channel c'·r² + i·r + j
    x = transpose(g, x, [0, 1, 4, 2, 5, 3])  # [1, H, i, W, j, C']
    return [reshape(g, x, [1, h * r, w * r, c // (r * r)])]


def build_pixel_unshuffle(g, node, ins, cx, dims):
    c, h, w = dims[0]
    r = node.p["r"]
    x = reshape(g, ins[0], [1, h // r, r, w // r, r, c])  # [1, h, i, w, j, C]
    x = transpose(g, x, [0, 1, 3, 5, 2, 4])  # [1, h, w, C, i, j]
    return [reshape(g, x, [1, h // r, w // r, c * r * r])]


def build_pad_rep(g, node, ins, cx, dims):
    # §9.4 'replicate padding': the last row (column) sliced, tiled and concatenated.
    c, h, w = dims[0]
    m = node.p["m"]
    x = ins[0]
    hn, wn = -(-h // m) * m, -(-w // m) * m
    if hn > h:
        last = slice_(g, x, [0, h - 1, 0, 0], [1, 1, w, c])
        x = concat(g, [x, tile(g, last, [1, hn - h, 1, 1])], 1)
    if wn > w:
        last = slice_(g, x, [0, 0, w - 1, 0], [1, hn, 1, c])
        x = concat(g, [x, tile(g, last, [1, 1, wn - w, 1])], 2)
    return [x]


def build_subpos_split(g, node, ins, cx, dims):
    c, h, w = dims[0]
    x = reshape(g, ins[0], [h // 2, 2, w // 2, 2, c])
    outs = []
    for a, b in node.p["order"]:
        part = slice_(g, x, [0, a, 0, b, 0], [h // 2, 1, w // 2, 1, c])
        outs.append(reshape(g, part, [1, h // 2, w // 2, c]))
    return outs


def build_subpos_merge(g, node, ins, cx, dims):
    c, h, w = dims[0]
    at = {ab: k for k, ab in enumerate(node.p["order"])}
    rows = []
    for a in (0, 1):
        cols = [reshape(g, ins[at[(a, b)]], [h, 1, w, 1, c]) for b in (0, 1)]
        rows.append(concat(g, cols, 3))
    x = concat(g, rows, 1)  # [H, 2, W, 2, C]
    return [reshape(g, x, [1, 2 * h, 2 * w, c])]


def build_fill(g, node, ins, cx, dims, value):
    """§5.10 fill: the value (a constant, or this decode's scalar) fed as a one-element input
    and tiled to `[C, H, W]`."""
    _, h, w = dims[0]
    c = cx.graph.tensors[node.outs[0]].channels
    one = g.input(np.full((1, 1, 1, 1), value, dtype=np.int64), D.INT64)
    return [tile(g, one, [1, h, w, c])]


# --- §5.9 gram, apply: MATMUL per group ------------------------------------------------------


def support_contraction(node, cx):
    for t in node.ins:
        need_fits(cx.interval[t], D.INT8, "an input")
    key = node.op + ".acc"
    need_fits(cx.inter(node, key), D.INT32, key)
    rq_path(node, cx)


def matmul(g, a, b):
    """TOSA MATMUL of int8 [N, H, C] by [N, C, W] into int32 [N, H, W], zero points 0."""
    zp = g.const([0], D.INT8, [1])
    shape = [a.shape[0], a.shape[1], b.shape[2]]
    return g.op(ts.Op.MATMUL, [a, b, zp, zp], shape, D.INT32, attr("MatMul"))


def build_gram(g, node, ins, cx, dims):
    # out[g·d + i][0][j] = R(Σ_{y,x} A[g·d + i][y][x]·B[g·d + j][y][x], s): per group, A_g·B_gᵀ.
    c, h, w = dims[0]
    groups = node.p["groups"]
    d, n = c // groups, h * w
    a = reshape(g, transpose(g, reshape(g, cast(g, ins[0], D.INT8), [n, c]), [1, 0]), [groups, d, n])
    b = transpose(g, reshape(g, cast(g, ins[1], D.INT8), [n, groups, d]), [1, 0, 2])  # [G, L, d]
    acc = matmul(g, a, b)  # [G, d(i), d(j)]
    acc = reshape(g, transpose(g, reshape(g, acc, [c, d]), [1, 0]), [1, 1, d, c])
    return [build_rq(g, acc, node, cx, c)]


def build_apply(g, node, ins, cx, dims):
    # out[g·d + i][y][x] = R(Σ_j A[g·d + i][0][j]·V[g·d + j][y][x], s): per group, A_g·V_g.
    c, h, w = dims[1]
    groups = node.p["groups"]
    d, n = c // groups, h * w
    a = reshape(g, transpose(g, reshape(g, cast(g, ins[0], D.INT8), [d, c]), [1, 0]), [groups, d, d])
    v = reshape(g, transpose(g, reshape(g, cast(g, ins[1], D.INT8), [n, c]), [1, 0]), [groups, d, n])
    acc = matmul(g, a, v)  # [G, d(i), L]
    acc = reshape(g, transpose(g, reshape(g, acc, [c, n]), [1, 0]), [1, h, w, c])
    return [build_rq(g, acc, node, cx, c)]


def no_check(node, cx):
    pass


SUPPORT = {
    "conv": support_conv, "conv_transpose": support_conv_transpose, "rescale": support_rescale,
    "mul": support_mul, "add": no_check, "chunk_add": no_check, "clamp": no_check, "relu": no_check,
    "abs": no_check, "leaky": support_leaky, "lut16": no_check, "concat": no_check,
    "split": no_check, "crop_to": no_check, "crop": support_crop, "pixel_shuffle": no_check,
    "pixel_unshuffle": no_check, "pad_rep": no_check, "subpos_split": no_check,
    "subpos_merge": no_check, "fill": no_check, "gram": support_contraction,
    "apply": support_contraction,
}

BUILD = {
    "conv": build_conv, "conv_transpose": build_conv_transpose, "rescale": build_rescale,
    "mul": build_mul, "add": build_add, "chunk_add": build_chunk_add, "clamp": build_clamp,
    "relu": build_relu, "abs": build_abs, "leaky": build_leaky, "lut16": build_lut16,
    "concat": build_concat, "split": build_split, "crop_to": build_crop_to, "crop": build_crop,
    "pixel_shuffle": build_pixel_shuffle, "pixel_unshuffle": build_pixel_unshuffle,
    "pad_rep": build_pad_rep, "subpos_split": build_subpos_split,
    "subpos_merge": build_subpos_merge, "gram": build_gram, "apply": build_apply,
}

WHY_NOT = {
    "chscale": "chscale: the multiplier row is chosen by a run-time scalar; TOSA's RESCALE multiplier is a graph constant",
    "igdn": "igdn: isqrt has no TOSA operator",
    "layernorm_c": "layernorm_c: rsqrt_q16 (isqrt, integer division) has no TOSA operator",
    "l2norm": "l2norm: rsqrt_q16 (isqrt, integer division) has no TOSA operator",
    "softmax": "softmax: exp_neg_q16 and integer division have no exact TOSA mapping",
    "sigmoid": "sigmoid: exp_neg_q16 and integer division have no exact TOSA mapping",
    "elu": "elu: exp_neg_q16 has no exact TOSA mapping",
}


def support(node, cx):
    check_support(SUPPORT, WHY_NOT, node, cx)
