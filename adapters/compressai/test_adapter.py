"""Unit tests of the CompressAI adapter: the extension, each reason a record is declined, the strict
range check, request errors, and a short run of the round trips against the oracle.

    adapters/compressai/.venv/bin/python -m unittest discover -s adapters/compressai -p 'test_*.py'
"""

import json
import unittest

import ans
import compressai_fill as fill
import roundtrip
from protocol import RequestError

TA = roundtrip.TA
TB = [0, 60000, 65536]
TABLES = [(TA, -4), (TB, 100)]


def req(stream, reads, tables=TABLES, escape="lenient", end="canonical", table="t4097", lohi=None):
    r = roundtrip.request("t", stream, tables, reads, table, escape, end)
    if lohi:
        r["modes"].update(lo=str(lohi[0]), hi=str(lohi[1]))
    return json.loads(roundtrip.canonical(r))


def run(r):
    return fill.answer(roundtrip.canonical(r), r)


def own(symbols, reads, tables=TABLES):
    return ans.encode(symbols, reads, [c for c, _ in tables], [o for _, o in tables])


SYMS = [-4, 3, 100, 7, -20, 101, 1000, 0, 2, 99, 5, 4]
READS = [0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0]


class Extension(unittest.TestCase):
    def test_loads_without_torch_and_round_trips(self):
        import sys
        self.assertNotIn("torch", sys.modules)
        self.assertEqual(ans.decode(own(SYMS, READS), READS, [TA, TB], [-4, 100]), SYMS)

    def test_layout_is_e1s(self):
        # E1 items 1 and 8: 8-byte little-endian state first; a stream of one likely symbol ends
        # canonically at 2^31, so its state word pair is 2^31 after one symbol step inverted.
        enc = roundtrip.E1Encoder()
        for s, r in zip(SYMS, READS):
            cdf, o = TABLES[r]
            v = s - o
            if 0 <= v < len(cdf) - 2:
                enc.symbol(cdf, v)
            else:
                raw = -2 * v - 1 if v < 0 else 2 * (v - (len(cdf) - 2))
                groups = [(raw >> (4 * j)) & 15 for j in range((raw.bit_length() + 3) // 4)]
                enc.escape([len(groups)], groups, cdf)
        self.assertEqual(enc.stream(), own(SYMS, READS))


class Answers(unittest.TestCase):
    def test_own_stream_answered_under_every_mode(self):
        stream = own(SYMS, READS)
        for escape in ("strict", "lenient"):
            for end in ("canonical", "final_only"):
                lohi = (-(1 << 31), (1 << 31) - 1) if escape == "strict" else None
                out = run(req(stream, READS, escape=escape, end=end, lohi=lohi))
                self.assertEqual(out["expect"], {"symbols": [str(s) for s in SYMS]}, (escape, end))
                self.assertEqual(set(out), {"expect", "id", "in", "modes", "op"})

    def test_strict_range_refused_at_first_symbol_outside(self):
        out = run(req(own(SYMS, READS), READS, escape="strict", lohi=(-10, 101)))
        self.assertEqual(out["expect"], {"at": "4", "refuse": "field_range"})

    def declined(self, r, why):
        self.assertEqual(run(r), {"id": "t", "not_supported": why})

    def test_each_reason(self):
        stream = own(SYMS, READS)
        self.declined(req(stream[:-4], READS), fill.WHY_PAST_END)
        self.declined(req(stream + b"\0\0\0\0", READS), fill.WHY_NOT_OWN)
        self.declined(req(stream[:-2], READS), fill.WHY_STREAM)
        self.declined(req(stream[:4], []), fill.WHY_STREAM)
        self.declined(req(stream, READS, escape="strict", lohi=(5, 4)), fill.WHY_RANGE)
        self.declined(req(stream, READS, escape="strict", lohi=(0, 1 << 31)), fill.WHY_RANGE)
        self.declined(req(stream, READS, tables=[(TA, -4), ([0, 60000, 60000, 65536], 100)]), fill.WHY_CDF)
        self.declined(req(stream, READS, tables=[(TA, -4), ([1, 60000, 65536], 100)]), fill.WHY_CDF)
        self.declined(req(stream, READS, tables=[(TA, -4), ([0, 65536], 100)]), fill.WHY_N)
        self.declined(req(stream, READS, tables=[(TA, -4), (TB, 1 << 31)]), fill.WHY_OFFSET)
        self.declined(req(stream, READS + [2]), fill.WHY_READ)
        self.declined(dict(req(stream, READS), op="dequantize"), fill.WHY_OP)

    def test_encoder_hazards_declined(self):
        # F8: no symbol; F10: a table of n = 2 (t2); F9: an escape of 8 groups (E1's encoder).
        self.declined(req((1 << 31).to_bytes(8, "little"), []), fill.WHY_ENCODER["F8"])
        enc = roundtrip.E1Encoder()
        enc.escape([1], [6], [0, 65536])
        self.declined(req(enc.stream(), [0], tables=[([0, 65536], 0)], table="t2"), fill.WHY_ENCODER["F10"])
        enc = roundtrip.E1Encoder()
        for _ in range(8):
            enc.symbol(TA, 1)
        enc.escape([8], [0] * 7 + [1], TA)
        self.declined(req(enc.stream(), [0] * 9, tables=[(TA, 0)]), fill.WHY_ENCODER["F9"])

    def test_wrap_declined(self):
        # value 2^27 − 1 + 8 (7 groups) on an offset near i32's top: value + offset passes i32.
        enc = roundtrip.E1Encoder()
        for _ in range(8):
            enc.symbol(TA, 1)
        raw = (1 << 28) - 2
        enc.escape([7], [(raw >> (4 * j)) & 15 for j in range(7)], TA)
        self.declined(req(enc.stream(), [0] * 9, tables=[(TA, (1 << 31) - 100)]), fill.WHY_WRAP)

    def test_request_errors(self):
        r = req(own(SYMS, READS), READS)
        for bad in (dict(r, op=None), dict(r, modes={"table": "t4097"}), dict(r, **{"in": {"stream": "zz"}}),
                    dict(r, **{"in": dict(r["in"], stream="0g" * 8)}),
                    dict(r, **{"in": dict(r["in"], reads=["01"])})):
            with self.assertRaises(RequestError):
                run(bad)


class RoundTrips(unittest.TestCase):
    def test_seeds_0_to_99_agree_with_the_oracle_under_every_mode(self):
        stats, own_failures, diffs = roundtrip.round_trips(range(100), None)
        self.assertEqual((own_failures, diffs), ([], []))
        self.assertEqual(stats["streams"], 100)

    def test_adapter_answers_what_the_oracle_does_on_own_streams(self):
        for seed in range(20):
            tables, reads, symbols = roundtrip.random_case(seed)
            stream = own(symbols, reads, tables)
            r = roundtrip.request("t", stream, tables, reads, *roundtrip.modes_for(tables)[0])
            self.assertEqual(run(r)["expect"], roundtrip.fill([r])[0], seed)


if __name__ == "__main__":
    unittest.main()
