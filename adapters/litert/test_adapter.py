"""Unit tests of the adapter's mapping: every rq form it accepts is §2's rounding on every resolver
(ties, their neighbours and the ends of the accepted ranges), the forms it declines are declined,
and the DetessDequant numeric side.

    adapters/litert/.venv/bin/python -m unittest discover -s adapters/litert -p 'test_*.py'
"""

import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import litert_fill  # noqa: E402
import litert_lower  # noqa: E402
import whg1  # noqa: E402
from exact import R, r_half_up  # noqa: E402
from protocol import Unsupported  # noqa: E402




class Tensor:
    def __init__(self, channels, policy="derived", lo=0, hi=0):
        self.channels, self.policy, self.lo, self.hi, self.exponent = channels, policy, lo, hi, -128


class FakeCx:
    """The certificate's intervals of one rescale node, computed here from the input interval."""

    def __init__(self, node, lo, hi, out_policy=("derived", 0, 0)):
        rq = node.p["rq"]
        c = len(rq.mult)
        g = whg1.Graph()
        g.tensors = {0: Tensor(c), 1: Tensor(c, *out_policy)}
        self.graph = g
        self.interval = {0: (lo, hi)}
        pre = [b if rq.bias_place == "pre" else 0 for b in rq.bias]
        ts = [v + b for b in pre for v in (lo, hi)]
        ps = [t * m for t in ts for m in rq.mult]
        ps += [p + (1 << (s - 1)) for p in ps for s in rq.shift if s and rq.round != "floor"]
        qs = [R[rq.round](t * m, s) for t in range(lo, hi + 1) for m, s in zip(rq.mult, rq.shift)]
        post = [b if rq.bias_place == "post" else 0 for b in rq.bias]
        ys = [q + b for q in qs for b in post]
        self.iv = {"rq.t": (min(ts), max(ts)), "rq.p": (min(ps), max(ps)), "rq.q": (min(qs), max(qs)),
                   "rq.y": (min(ys), max(ys))}

    def inter(self, node, key):
        return self.iv[key]


def rescale(mult, shift, rnd, bias=None, place=None):
    c = len(mult)
    rq = whg1.Rq(rnd, place, list(mult), list(shift), list(bias or [0] * c))
    return whg1.Node(0, "rescale", [0], [1], {"rq": rq})


def run_rescale(node, cx, values):
    c = len(node.p["rq"].mult)
    a = np.array([[v] * c for v in values], dtype=np.int64).reshape(1, 1, len(values), c)
    out = litert_fill.LiteRT().run_node(node, {0: a}, [[c, 1, len(values)]], [], cx)[0]
    return out.reshape(len(values), c)


def ties(s, lo, hi):
    """Every tie of R(·, s) and its neighbours in [lo, hi], with the ends and a run near 0."""
    vs = set(range(max(lo, -40), min(hi, 40) + 1)) | {lo, hi}
    if s:
        step = 1 << s
        for k in range(-3, 4):
            base = k * step + (step >> 1)
            vs.update(v for v in (base - 1, base, base + 1) if lo <= v <= hi)
    return sorted(vs)


# (mult per channel, shift per channel, round, input interval, resolvers expected to map it)
CASES = [
    ([1], [3], "half_up", (-128, 127), {"auto", "builtin", "ref"}),
    ([1], [3], "floor", (-128, 127), {"auto", "builtin", "ref"}),
    ([1], [3], "half_even", (-128, 127), {"auto"}),
    ([3, -5, 1], [2, 4, 1], "half_up", (-120, 120), {"auto", "builtin", "ref"}),
    ([3, -5, 1], [2, 4, 1], "half_even", (-120, 120), {"auto"}),
    ([-2, 4], [1, 0], "half_even", (-100, 100), {"auto", "builtin", "ref"}),  # exact products
    ([1], [1], "half_up", (-128, 127), {"auto", "builtin", "ref"}),
    ([1 << 30, -(1 << 30)], [31, 31], "floor", (-128, 127), {"auto", "builtin", "ref"}),
    ([7], [5], "floor", (-128, 127), set()),  # floor of an odd multiplier: no kernel
    ([1], [12], "half_up", (-30000, 30000), {"auto", "builtin", "ref"}),  # 16x8 only
    ([40001], [20], "half_up", (-1000, 1000), set()),  # odd part past 2^15, and t·m past 2^24
]


class RqMappings(unittest.TestCase):
    def test_every_accepted_rq_is_exact(self):
        for resolver in ("auto", "builtin", "ref"):
            litert_lower.RESOLVER = litert_fill.RESOLVER = resolver
            for mult, shift, rnd, (lo, hi), expected in CASES:
                node = rescale(mult, shift, rnd)
                cx = FakeCx(node, lo, hi)
                with self.subTest(resolver=resolver, mult=mult, shift=shift, round=rnd):
                    try:
                        litert_lower.support(node, cx)
                    except Unsupported as e:
                        self.assertNotIn(resolver, expected, f"declined: {e}")
                        continue
                    self.assertIn(resolver, expected, f"mapped with the kernel {node.plan[0]}")
                    vs = sorted(set().union(*(ties(s, lo, hi) for s in shift)))
                    got = run_rescale(node, cx, vs)
                    for i, v in enumerate(vs):
                        for c, (m, s) in enumerate(zip(mult, shift)):
                            self.assertEqual(int(got[i, c]), R[rnd](v * m, s), f"t = {v}, mult {m}, shift {s}, kernel {node.plan[0]}")

    def test_post_bias_and_clamp(self):
        for resolver in ("auto", "builtin", "ref"):
            litert_lower.RESOLVER = litert_fill.RESOLVER = resolver
            node = rescale([1, 1], [2, 2], "half_up", [1000, -7], "post")
            cx = FakeCx(node, -100, 100)
            litert_lower.support(node, cx)
            got = run_rescale(node, cx, [-100, -6, 6, 100])
            self.assertEqual(got.tolist(), [[r_half_up(v, 2) + b for b in (1000, -7)] for v in (-100, -6, 6, 100)])


class DetessDequant(unittest.TestCase):
    def test_bf16_narrowing(self):
        self.assertEqual(litert_fill.bf16(0x3F808000), 0x3F80)  # a tie to even
        self.assertEqual(litert_fill.bf16(0x3F818000), 0x3F82)
        self.assertEqual(litert_fill.bf16(0x3F80C001), 0x3F81)

    def test_declines(self):
        for resolver in ("auto", "builtin", "ref"):
            litert_fill.RESOLVER = resolver
            self.assertIsNotNone(litert_fill.numeric_support([1], 0x3F800000, 128))
            self.assertIsNotNone(litert_fill.numeric_support([1], 0x3F800000, -16777217))
            self.assertIsNone(litert_fill.numeric_support([1], 0x3E800000, -3))
        litert_fill.RESOLVER = "auto"
        self.assertIsNotNone(litert_fill.numeric_support([1], 0x00000001, 0))

    def test_reference_is_exact(self):
        # (q − zp)·scale rounded once, for a scale with no exact products (1/3) and zero point −3.
        litert_fill.RESOLVER = "ref"
        q = list(range(-128, 128))
        s = np.float32(np.frombuffer(bytes.fromhex("abaaaa3e"), np.float32)[0])
        want = [int(np.array(np.float32(np.float32(v + 3) * s)).view(np.uint32)) for v in q]
        self.assertEqual(litert_fill.dequantize(q, 0x3EAAAAAB, -3), want)


if __name__ == "__main__":
    unittest.main()
