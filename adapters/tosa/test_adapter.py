"""Unit tests of the adapter's arithmetic rewrites and request parsing (no reference model run).

    adapters/tosa/.venv/bin/python -m unittest discover -s adapters/tosa -p 'test_*.py'
"""

import itertools
import unittest

import lower
import tosa_fill
from exact import r_half_up  # the common/ path is set by tosa_fill


class RescaleParams(unittest.TestCase):
    def test_every_rewrite_gives_the_same_integers(self):
        # §9.4: R(t·m, s) = R(t·m', s') for every t, whenever rescale_params gives (m', s').
        ts = list(range(-70, 71)) + [-(1 << 20), (1 << 20) - 1]
        for m, s in itertools.product([0, 1, 2, 3, 5, 255, 32767, (1 << 31) - 1, 1 << 31, 3 << 31, 1 << 40],
                                      [0, 1, 2, 5, 31, 62, 63, 64, 100]):
            got = lower.rescale_params(m, s)
            if got is None:
                continue
            m2, s2 = got
            self.assertTrue(0 <= m2 < 1 << 31 and 2 <= s2 <= 62, (m, s, got))
            for t in ts:
                self.assertEqual(r_half_up(t * m, s), r_half_up(t * m2, s2), (t, m, s, got))

    def test_what_has_no_form(self):
        self.assertIsNone(lower.rescale_params(3, 64))  # 3 is no multiple of 4
        self.assertIsNone(lower.rescale_params((1 << 31) + 1, 10))  # odd and too wide
        self.assertEqual(lower.rescale_params(1, 0), (1 << 30, 30))
        self.assertEqual(lower.rescale_params(4, 64), (1, 62))


class Requests(unittest.TestCase):
    def test_integers_must_be_canonical(self):
        for bad in ["01", "-0", "+1", "1.0", "", " 1", 1]:
            with self.assertRaises(tosa_fill.RequestError):
                tosa_fill.integer(bad, "f")
        self.assertEqual(tosa_fill.integer("-12", "f"), -12)

    def test_a_tensor_needs_its_elements(self):
        with self.assertRaises(tosa_fill.RequestError) as e:
            tosa_fill.tensor({"data": ["1"], "shape": ["1", "1", "2"]}, "decodes[0].inputs[0]")
        self.assertIn("decodes[0].inputs[0].data", str(e.exception))

    def test_a_tensor_past_the_adapters_limit_is_declined_before_its_data_is_read(self):
        # [1, 2049, 2048] holds 2^22 + 2048 elements; its data is not even a list.
        with self.assertRaises(lower.Unsupported) as e:
            tosa_fill.tensor({"data": None, "shape": ["1", "2049", "2048"]}, "decodes[0].inputs[0]")
        self.assertIn("4196352 elements", str(e.exception))

    def test_canonical_json(self):
        self.assertEqual(tosa_fill.canonical({"id": "a", "b": ["1"]}), '{"b":["1"],"id":"a"}')


if __name__ == "__main__":
    unittest.main()
