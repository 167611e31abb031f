"""Unit tests of the adapter's integer rewrites (§2's roundings from int64 ONNX operators) on both
backends, and of the request checks.

    adapters/onnx/.venv/bin/python -m unittest discover -s adapters/onnx -p 'test_*.py'
"""

import unittest

import numpy as np

import onnx_fill
import onnx_lower
import whg1
from exact import R  # the common/ path is set by onnx_fill
from onnx_graph import Graph


I64 = (-(1 << 63), (1 << 63) - 1)


def values(s, rnd):
    """Every tie and its neighbours near 0, and the ends of int64 (less 2^(s−1) for half_up)."""
    ps = set(range(-40, 41))
    for k in range(-3, 4):
        for e in (0, 1):
            ps.update({k * (1 << s) + e * (1 << max(s - 1, 0)) + d for d in (-1, 0, 1)})
    top = I64[1] - (1 << (s - 1) if rnd == "half_up" and s else 0)
    ps.update({I64[0], I64[0] + 1, top, top - 1})
    return sorted(p for p in ps if I64[0] <= p <= top)


class Roundings(unittest.TestCase):
    def test_round_pow2_is_r_round_on_both_backends(self):
        for backend in onnx_fill.BACKENDS:
            for rnd in R:
                for s in [0, 1, 2, 3, 7, 16, 31, 32, 61, 62] + ([63, 64, 127] if rnd == "floor" else []):
                    ps = values(min(s, 62), rnd)
                    g = Graph()
                    g.output(onnx_lower.round_pow2(g, g.input(np.array(ps, dtype=np.int64)), s, rnd))
                    got = [int(v) for v in g.run(backend, "test")[0]]
                    want = [R[rnd](p, s) for p in ps]
                    self.assertEqual(got, want, (backend, rnd, s))

    def test_shifts_past_62_only_floor(self):
        self.assertTrue(onnx_lower.shift_ok(127, "floor"))
        self.assertFalse(onnx_lower.shift_ok(63, "half_up"))
        self.assertFalse(onnx_lower.shift_ok(63, "half_even"))
        self.assertTrue(onnx_lower.shift_ok(62, "half_even"))


class FakeContext:
    """The certificate intervals `qlinear_scales` reads."""

    def __init__(self, t, q):
        self.iv = {"rq.t": t, "rq.q": q}

    def inter(self, node, key):
        return self.iv[key]


def rq_node(rnd, mult, shift, bias_place=None, bias=None):
    rq = whg1.Rq(rnd, bias_place, mult, shift, bias or [0] * len(mult))
    return whg1.Node(0, "conv", [0], [1], {"rq": rq})


class QLinearScales(unittest.TestCase):
    I8, I32 = (-128, 127), (-(1 << 31), (1 << 31) - 1)

    def test_scales_are_m_2_pow_s(self):
        # y = round(t·w_scale / y_scale) = round(t·m / 2^s): per channel m·2^(S−s) over 2^S.
        cx = FakeContext(self.I32, self.I8)
        got = onnx_lower.qlinear_scales(rq_node("half_even", [3, 1], [4, 2]), cx)
        self.assertEqual(got, ([3.0, 4.0], 16.0))

    def test_declined_unless_exactly_rq(self):
        cx = FakeContext(self.I32, self.I8)
        for node in [rq_node("half_up", [1], [3]), rq_node("floor", [1], [3]),
                     rq_node("half_even", [-2], [3]), rq_node("half_even", [1 << 24], [3])]:
            self.assertIsNone(onnx_lower.qlinear_scales(node, cx), node.p["rq"].__dict__)
        self.assertIsNone(onnx_lower.qlinear_scales(rq_node("half_even", [1], [3]), FakeContext(self.I32, (-128, 128))))
        self.assertIsNone(onnx_lower.qlinear_scales(rq_node("half_even", [1], [3]), FakeContext((0, 1 << 31), self.I8)))

    def test_matmul_takes_one_scale_and_no_pre_bias(self):
        cx = FakeContext(self.I32, self.I8)
        self.assertIsNone(onnx_lower.qlinear_scales(rq_node("half_even", [1, 1], [3, 4]), cx, per_channel=False))
        self.assertIsNone(onnx_lower.qlinear_scales(rq_node("half_even", [1], [3], "pre", [1]), cx, per_channel=False))
        self.assertEqual(onnx_lower.qlinear_scales(rq_node("half_even", [1], [3], "post", [1]), cx, per_channel=False),
                         ([1.0], 8.0))


class Requests(unittest.TestCase):
    def test_integers_must_be_canonical(self):
        for bad in ["01", "-0", "+1", "1.0", "", " 1", 1]:
            with self.assertRaises(onnx_fill.RequestError):
                onnx_fill.integer(bad, "f")
        self.assertEqual(onnx_fill.integer("-12", "f"), -12)

    def test_record_forms(self):
        # A stage vector's "in" may hold a "q" (residual_step): "op" tells it apart first.
        self.assertEqual(onnx_fill.form({"id": "r", "op": "residual_step", "in": {"q": "1"}}), "stage-operator vector")
        self.assertEqual(onnx_fill.form({"id": "n", "in": {"q": ["1"]}}), "DetessDequant numeric")
        self.assertEqual(onnx_fill.form({"id": "g", "graph": "57"}), "graph vector")
        self.assertIsNone(onnx_fill.form({"id": "x"}))

    def test_canonical_json(self):
        self.assertEqual(onnx_fill.canonical({"id": "a", "b": ["1"]}), '{"b":["1"],"id":"a"}')


if __name__ == "__main__":
    unittest.main()
