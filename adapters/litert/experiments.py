"""Reproductions behind docs/litert.md and docs/findings.md's LiteRT section: each prints the exact
value beside what each LiteRT op resolver returned.

    adapters/litert/.venv/bin/python adapters/litert/experiments.py [requantisation|dequantize|dequantize_zero_point|delegate]

- `requantisation`: a 1×1 quantised CONV_2D / DEPTHWISE_CONV_2D (input and output scale 1, zero
  points 0, weight 1 or 5, the filter scale the real multiplier) over accumulators −300..300, int8
  and 16x8, on each resolver, against five candidate functions: which one each kernel computes
  (docs/litert.md, "rq").
- `dequantize`: F7, the optimised int8 DEQUANTIZE of the `builtin` resolver against (q − zp)·scale
  rounded once, and against q·scale + (−zp·scale) with each step rounded to binary32.
- `dequantize_zero_point`: zero points outside int8 (which TFLite's int8 spec does not admit): the
  reference kernel subtracts in int32 exactly; the seed rounds the zero point to binary32 first.
- `delegate`: which nodes the default resolver hands to XNNPACK, and what XNNPACK refuses.
"""

import math
import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import litert_fill  # noqa: E402
from exact import r_half_even, r_half_up  # noqa: E402
from litert_graph import B, RESOLVERS, S, Interpreter, Model  # noqa: E402

# --- the candidate requantisation functions (TFLite's QuantizeMultiplier, then a rounding) -------


def quantize_multiplier(real):
    """TFLite's QuantizeMultiplier: real = M·2^(shift − 31), M in [2^30, 2^31), std::round."""
    if real == 0:
        return 0, 0
    f, e = math.frexp(real)
    m = int(math.floor(f * (1 << 31) + 0.5))
    if m == 1 << 31:
        m, e = m // 2, e + 1
    if e < -31:
        return 0, 0
    return m, e


def single_half_up(acc, real):
    """R_half_up(acc·M, 31 − shift): one rounding (TFLITE_SINGLE_ROUNDING's form)."""
    m, sh = quantize_multiplier(real)
    return r_half_up(acc * m, 31 - sh)


def double_half_up(acc, real):
    """The doubling high multiply R_half_up(acc·2^ls·M, 31), then a rounding shift by rs, half up."""
    m, sh = quantize_multiplier(real)
    return r_half_up(r_half_up(acc * (1 << max(sh, 0)) * m, 31), max(-sh, 0))


def double_half_away(acc, real):
    """gemmlowp's SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT (ties away from 0)."""
    m, sh = quantize_multiplier(real)
    a, rs = r_half_up(acc * (1 << max(sh, 0)) * m, 31), max(-sh, 0)
    if rs == 0:
        return a
    mask = (1 << rs) - 1
    return (a >> rs) + (1 if (a & mask) > (mask >> 1) + (1 if a < 0 else 0) else 0)


def reduced16_half_up(acc, real):
    """The 16x8 kernels: M reduced to 16 bits, then R_half_up(acc·M16, 15 − shift)."""
    m, sh = quantize_multiplier(real)
    m16 = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    return r_half_up(acc * m16, 15 - sh)


def fp32_half_even(acc, real):
    """XNNPACK's fp32 requantisation: round-half-even(fl32(fl32(acc)·fl32(scale)))."""
    return int(np.rint(np.float32(np.float32(acc) * np.float32(real))))


CANDIDATES = {
    "single half-up": single_half_up, "double half-up": double_half_up,
    "double half-away": double_half_away, "16-bit single half-up": reduced16_half_up,
    "fp32 half-even": fp32_half_even,
}


def conv_1x1(xs, weight, real, bias, dtype, depthwise, resolver):
    """A 1×1 quantised convolution of one channel; returns (outputs, the op names that ran)."""
    m = Model()
    n = len(xs)
    bdt = np.int32 if dtype == np.int8 else np.int64
    x = m.input(np.array(xs, dtype=dtype).reshape(1, 1, n, 1), quant=([1.0], [0], 0))
    w = m.const([weight], np.int8, [1, 1, 1, 1], quant=([real], [0], 0 if not depthwise else 3))
    b = m.const([bias], bdt, [1], quant=([real], [0], 0))
    if depthwise:
        o = S.DepthwiseConv2DOptionsT()
        o.depthMultiplier = 1
        code = B.DEPTHWISE_CONV_2D
    else:
        o = S.Conv2DOptionsT()
        code = B.CONV_2D
    o.padding, o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor = S.Padding.VALID, 1, 1, 1, 1
    m.output(m.op(code, [x, w, b], [1, 1, n, 1], dtype, o, quant=([1.0], [0], 0)))
    it = Interpreter(model_content=m.serialize(), experimental_op_resolver_type=RESOLVERS[resolver], num_threads=1)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], m.feeds[0])
    it.invoke()
    out = it.get_tensor(it.get_output_details()[0]["index"]).reshape(-1)
    return [int(v) for v in out], [d["op_name"] for d in it._get_ops_details()]  # noqa: SLF001


def requantisation():
    reals = [0.5, 0.75, 0.25, 2.0 ** -5, 3 / 8, 5 / 64, 0.3, 1.5, 3.0]
    for dtype in (np.int8, np.int16):
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        for depthwise in (False, True):
            for resolver in RESOLVERS:
                fits_all = set(CANDIDATES)
                first = {}
                for weight in (1, 5):
                    xs = [v for v in range(-300, 301) if lo <= v <= hi]
                    for real in reals:
                        got, ops = conv_1x1(xs, weight, real, 3, dtype, depthwise, resolver)
                        for name, f in CANDIDATES.items():
                            want = [max(lo, min(hi, f(x * weight + 3, real))) for x in xs]
                            if want != got:
                                fits_all.discard(name)
                                if name not in first:
                                    k = next(i for i, (a, b) in enumerate(zip(want, got)) if a != b)
                                    first[name] = f"acc {xs[k] * weight + 3}, real {real}: {name} {want[k]}, LiteRT {got[k]}"
                kind = ("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D") + (" int8" if dtype == np.int8 else " 16x8")
                print(f"{kind:24} {resolver:8} ran {'+'.join(ops):28} computes: {', '.join(sorted(fits_all)) or 'none of these'}")
                for name in ("single half-up", "fp32 half-even"):
                    if name in first and name not in fits_all:
                        print(f"{'':34} not {name}: {first[name]}")


# --- DEQUANTIZE ---------------------------------------------------------------------------------


def f32(bits):
    return np.frombuffer(struct.pack("<I", bits), np.float32)[0]


def bits(v):
    return int(np.array(np.float32(v)).view(np.uint32))


def dequantize():
    """F7: the `builtin` resolver's int8 DEQUANTIZE against two formulas."""
    q = list(range(-128, 128))
    for scale_bits, zp in ((0x3EAAAAAB, -3), (0x3DCCCCCD, -3), (0x3EAAAAAB, 127), (0x3EAAAAAB, 0)):
        s = f32(scale_bits)
        once = [bits(np.float32(np.float32(v - zp) * s)) for v in q]  # (q − zp)·scale, one rounding
        c = np.float32(-zp * float(s))  # static_cast<float>(−zero_point · (double) scale)
        split = [bits(np.float32(np.float32(np.float32(v) * s) + c)) for v in q]
        for resolver in RESOLVERS:
            litert_fill.RESOLVER = resolver
            got = litert_fill.dequantize(q, scale_bits, zp)
            bad = [i for i in range(len(q)) if got[i] != once[i]]
            split_ok = got == split
            print(f"scale {s!r:>12} ({scale_bits:08x}) zp {zp:4}  {resolver:8} differs from (q − zp)·scale at "
                  f"{len(bad):3} of 256; equals fl(fl(q·s) + fl(−zp·s)) everywhere: {split_ok}")
            for i in bad[:2]:
                print(f"{'':50} q = {q[i]}: exact {once[i]:08x} ({f32(once[i])!r}), LiteRT {got[i]:08x} ({f32(got[i])!r})")
    # A length that leaves a scalar tail after the vector lanes: the tail takes the double path.
    litert_fill.RESOLVER = "builtin"
    q = [-97] * 19
    s = f32(0x3EAAAAAB)
    got = litert_fill.dequantize(q, 0x3EAAAAAB, -3)
    print(f"19 copies of q = -97 (scale 1/3, zp -3), builtin: {[f'{g:08x}' for g in got]}; "
          f"(q − zp)·scale = {bits(np.float32(np.float32(-94) * s)):08x}")


def dequantize_zero_point():
    q = [1, 2, 3, -1]
    for zp in (16777217, -16777217, 2147483647):
        s = 0x3F800000
        seed = [bits(np.float32(np.float32(v) - np.float32(zp)) * f32(s)) for v in q]
        exact = [bits(np.float32(float(v - zp) * float(f32(s)))) for v in q]
        for resolver in RESOLVERS:
            litert_fill.RESOLVER = resolver
            try:
                got = litert_fill.dequantize(q, s, zp)
                got = [f"{g:08x}" for g in got]
            except Exception as e:  # noqa: BLE001
                got = f"refused: {str(e)[:90]}"
            print(f"zp {zp:11} scale 1 {resolver:8} LiteRT {got}")
        print(f"{'':28} seed (zp rounded to binary32, then q − zp rounded) {[f'{b:08x}' for b in seed]}; "
              f"(q − zp) exact, rounded once {[f'{b:08x}' for b in exact]}")


def delegate():
    for real in (0.25, 255.0, 256.0):
        try:
            _, ops = conv_1x1([1, 2], 1, real, 0, np.int8, False, "auto")
            print(f"int8 CONV_2D, scale {real}: auto ran {ops}")
        except Exception as e:  # noqa: BLE001
            print(f"int8 CONV_2D, scale {real}: auto fails: {str(e)[:120]}")
    _, ops = conv_1x1([1, 2], 1, 0.25, 0, np.int16, False, "auto")
    print(f"16x8 CONV_2D: auto ran {ops} (XNNPACK does not take it)")
    for scale_bits in (0x00000001, 0x3E800000):
        litert_fill.RESOLVER = "auto"
        try:
            litert_fill.dequantize([1], scale_bits, 0)
            print(f"DEQUANTIZE, scale {scale_bits:08x}: auto runs")
        except Exception as e:  # noqa: BLE001
            print(f"DEQUANTIZE, scale {scale_bits:08x}: auto fails: {str(e)[:140]}")


EXPERIMENTS = {"requantisation": requantisation, "dequantize": dequantize,
               "dequantize_zero_point": dequantize_zero_point, "delegate": delegate}

if __name__ == "__main__":
    for name in sys.argv[1:] or EXPERIMENTS:
        print(f"== {name}")
        EXPERIMENTS[name]()
