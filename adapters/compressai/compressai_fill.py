"""`fill` (docs/protocol.md) for `rans64_decode` stage vectors, computed by CompressAI's rANS decoder
(`RansDecoder.decode_with_indexes` of CompressAI 1.2.8's compiled `ans` extension; docs/compressai.md).

Each request's `tables` become CompressAI's `cdfs`, `cdfs_sizes` (each cdf's length `n`) and
`offsets`; `reads` become its `indexes`; `stream` its encoded string. CompressAI's decoder checks
nothing: no table, no length, no escape count, no end, and it reads past a stream's end. So it
cannot give a refusal, and the adapter answers only the records on which CompressAI's answer is the
whole answer, and declines the others with the reason:

1. the modes and operands CompressAI has no counterpart for (a `strict` range other than i32's
   ends; a table, stream or read that breaks its preconditions or the mode's table rule: §5E
   refuses these with `at = −1`, CompressAI decodes them anyway);
2. a stream whose decode by CompressAI reads past its end (its symbols change with the bytes that
   follow the stream: two different paddings are tried);
3. a symbol whose int32 sum `value + offset` wrapped (§5E saturates it or refuses it);
4. a stream that is not CompressAI's own: re-encoding the symbols CompressAI's decoder read, with
   CompressAI's encoder, does not give back the stream's bytes. Only then are the end (every word
   read, the encoder's initial state left), the escapes' counts (at most 8) and their minimality
   CompressAI's, so no §5E check can refuse. Streams that CompressAI's encoder cannot rewrite (past
   its buffer, docs/findings.md F8; an escape of 8 groups, on which it never returns, F9; a table
   of n = 2, on which it divides by zero, F10) are declined for the same reason, untested.

A record that passes all four is answered with CompressAI's symbols, or, under `strict(lo, hi)`, with
`field_range` at the first of them outside `[lo, hi]`: the one check the adapter makes itself, on
CompressAI's values (as the ONNX adapter makes §4's value checks on its backend's), and the only one
that can refuse on CompressAI's own streams. Every other refusal record is declined, never answered
with partial symbols: the grade compares CompressAI's decode with the project's reconstruction
(docs/assumptions.md E1) on the streams CompressAI itself writes.

A request that is not a request (not JSON, a missing member, a non-canonical integer, bad hex) is
reported on stderr as `line N: <field>: <what>`; nothing is written for it and the exit status is 1.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
from protocol import RequestError, integer, not_supported, serve  # noqa: E402 - shared by the adapters

import ans  # noqa: E402 - CompressAI's extension, loaded without torch

I32 = (-(1 << 31), (1 << 31) - 1)
TOP = 1 << ans.PRECISION
TABLE_N = {"t4097": (3, 4097), "t2": (2, 65537)}

# The reasons a record is declined (each one fixed text, so the report's reason table reads the same
# each run).
WHY_OP = "CompressAI has only its rANS decoder (rans64_decode)"
WHY_RANGE = ("strict(lo, hi) with lo > hi or past i32: CompressAI has no symbol range, so this condition "
             "is not its to check")
WHY_STREAM = ("a stream that is not an 8-byte state and whole 32-bit words: CompressAI reads it as such "
              "without a length check (the at = -1 refusal is not its to give)")
WHY_CDF = ("a cdf that is not 0 < ... < 2^16 strictly increasing, n >= 2: CompressAI's precondition, "
           "asserted in debug builds only; its decode is undefined there")
WHY_N = "a table size outside the mode's table rule (t4097: 3..4097): CompressAI has no table-size rule"
WHY_OFFSET = "an offset past i32: CompressAI's offsets are int32"
WHY_READ = "a read naming no table: CompressAI would index past its tables"
WHY_PAST_END = ("CompressAI's decoder reads past the stream's end (it has no bounds check), so its symbols "
                "depend on the bytes after the stream")
WHY_WRAP = ("a symbol's int32 value + offset wrapped in CompressAI, where E1 saturates it (lenient) or "
            "refuses it (strict)")
WHY_ENCODER = {  # CompressAI's encoder cannot rewrite the stream, so whether it is its own is not known
    "F8": ("CompressAI's encoder cannot rewrite this stream: its buffer is too short for it (docs/findings.md "
            "F8), so whether the stream is its own is not known"),
    "F9": ("CompressAI's encoder cannot rewrite this stream: it never returns on an escape of 8 value groups "
            "(docs/findings.md F9), so whether the stream is its own is not known"),
    "F10": ("CompressAI's encoder cannot rewrite this stream: it divides by zero on a table of n = 2 "
            "(docs/findings.md F10), so whether the stream is its own is not known"),
}
WHY_NOT_OWN = ("not CompressAI's own stream: its encoder, given the symbols its decoder read, writes other "
               "bytes (CompressAI checks no end, escape count or minimality, so only its own streams are "
               "graded)")


class Declined(Exception):
    pass


def read_request(req):
    """The request's operands and modes, as Python values (RequestError for a line that is not a
    request)."""
    if req.get("op") != "rans64_decode":
        if not isinstance(req.get("op"), str):
            raise RequestError("op", "missing, or not a string")
        raise Declined(WHY_OP)
    ins, modes = req.get("in"), req.get("modes")
    if not isinstance(ins, dict) or set(ins) != {"reads", "stream", "tables"}:
        raise RequestError("in", 'rans64_decode\'s in is {"reads", "stream", "tables"}')
    if not isinstance(modes, dict):
        raise RequestError("modes", "missing, or not an object")
    for key, values in (("table", TABLE_N), ("escape", ("lenient", "strict")), ("end", ("canonical", "final_only"))):
        if modes.get(key) not in values:
            raise RequestError(f"modes.{key}", f"one of {list(values)}")
    extra = {"lo", "hi"} if modes["escape"] == "strict" else set()
    if set(modes) != {"table", "escape", "end"} | extra:
        raise RequestError("modes", f"table, escape, end{', lo, hi' if extra else ''}")
    lohi = tuple(integer(modes[k], f"modes.{k}") for k in ("lo", "hi")) if extra else None
    stream = ins["stream"]
    if not isinstance(stream, str) or len(stream) % 2 or stream != stream.lower():
        raise RequestError("in.stream", "lowercase hex of whole bytes")
    try:
        stream = bytes.fromhex(stream)
    except ValueError:
        raise RequestError("in.stream", "lowercase hex of whole bytes") from None
    if not isinstance(ins["tables"], list):
        raise RequestError("in.tables", "not an array")
    tables = []
    for k, t in enumerate(ins["tables"]):
        if not isinstance(t, dict) or set(t) != {"cdf", "offset"} or not isinstance(t["cdf"], list):
            raise RequestError(f"in.tables[{k}]", 'a table is {"cdf": [...], "offset"}')
        cdf = [integer(v, f"in.tables[{k}].cdf[{j}]") for j, v in enumerate(t["cdf"])]
        tables.append((cdf, integer(t["offset"], f"in.tables[{k}].offset")))
    if not isinstance(ins["reads"], list):
        raise RequestError("in.reads", "not an array")
    reads = [integer(v, f"in.reads[{j}]") for j, v in enumerate(ins["reads"])]
    return stream, tables, reads, modes, lohi


def mappable(stream, tables, reads, modes, lohi):
    """Declined unless CompressAI's decode is defined on the request and has the mode's meaning."""
    if lohi is not None and not I32[0] <= lohi[0] <= lohi[1] <= I32[1]:
        raise Declined(WHY_RANGE)
    if len(stream) % 4 or len(stream) < 8:
        raise Declined(WHY_STREAM)
    lo_n, hi_n = TABLE_N[modes["table"]]
    for cdf, offset in tables:
        if len(cdf) < 2 or cdf[0] != 0 or cdf[-1] != TOP or any(a >= b for a, b in zip(cdf, cdf[1:])):
            raise Declined(WHY_CDF)
        if not lo_n <= len(cdf) <= hi_n:
            raise Declined(WHY_N)
        if not I32[0] <= offset <= I32[1]:
            raise Declined(WHY_OFFSET)
    if any(not 0 <= r < len(tables) for r in reads):
        raise Declined(WHY_READ)


def pad_words(stream, reads):
    """Enough 32-bit words after the stream that CompressAI's decode, which reads past a stream's end,
    reads only them. A word is read by a renormalisation: at most one per symbol step and one per
    4-bit group. An escape's count groups go on only while a group is 15; the padding words have no
    15 nibble, so once one is read the count ends within 8 groups: an escape reads at most
    16 + 8·(the stream's words it reads) count groups, the escapes together at most
    16·len(reads) + 8W, so at most 15 times that in value groups, 8 to a word."""
    w = len(stream) // 4
    return 16 + 2 * len(reads) + (15 * (16 * len(reads) + 8 * w)) // 8 + len(reads)


def compressai_symbols(stream, tables, reads):
    """CompressAI's symbols, or Declined."""
    cdfs = [c for c, _ in tables]
    offsets = [o for _, o in tables]
    pad = pad_words(stream, reads)
    first = ans.decode(stream + b"\x00\x00\x00\x00" * pad, reads, cdfs, offsets)
    second = ans.decode(stream + b"\x5a\xa5\x69\x96" * pad, reads, cdfs, offsets)
    if first != second:
        raise Declined(WHY_PAST_END)
    for s, r in zip(first, reads):
        if ans.wrap32(s - offsets[r]) + offsets[r] != s:
            raise Declined(WHY_WRAP)
    hazard = ans.encoder_hazard(first, reads, cdfs, offsets, len(stream) // 4)
    if hazard:
        raise Declined(WHY_ENCODER[hazard])
    if ans.encode(first, reads, cdfs, offsets) != stream:
        raise Declined(WHY_NOT_OWN)
    return first


def answer(line, req):
    try:
        request = read_request(req)
        mappable(*request)
        symbols = compressai_symbols(*request[:3])
    except Declined as e:
        return not_supported(req["id"], str(e))
    out = {k: req[k] for k in ("id", "in", "modes", "op")}
    lohi = request[4]
    bad = [k for k, s in enumerate(symbols) if lohi and not lohi[0] <= s <= lohi[1]]
    # strict's range check, made here on CompressAI's symbols (the only check that can refuse on
    # CompressAI's own streams: their counts, minimality and end pass every other).
    out["expect"] = {"at": str(bad[0]), "refuse": "field_range"} if bad else {"symbols": [str(s) for s in symbols]}
    return out


if __name__ == "__main__":
    sys.exit(serve(answer))
