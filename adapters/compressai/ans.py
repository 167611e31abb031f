"""CompressAI's compiled rANS extension (`compressai/ans*.so`), loaded without torch.

`import compressai` imports torch (its package `__init__` imports the models), but the extension is a
pybind11 module that links against libstdc++ alone. It is loaded here by file path with
`importlib.machinery.ExtensionFileLoader`, under its own name `compressai.ans` (whose last part,
`ans`, names its `PyInit_ans`); `importlib.util.find_spec("compressai")` locates the installed
package without running its `__init__`. docs/compressai.md.

    python ans.py --check    loads it and round-trips one stream (adapters/compressai/setup runs this)
"""

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

PRECISION = 16  # CompressAI's `precision`: every cdf ends at 2^16
BYPASS = 4  # `bypass_precision`: an escape's count and value groups are 4 bits


def load():
    spec = importlib.util.find_spec("compressai")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("ans.py: compressai is not installed (run adapters/compressai/setup)")
    found = sorted(p for d in spec.submodule_search_locations for p in Path(d).glob("ans*.so"))
    if not found:
        sys.exit(f"ans.py: no compiled ans extension in {list(spec.submodule_search_locations)}")
    loader = importlib.machinery.ExtensionFileLoader("compressai.ans", str(found[0]))
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(
        "compressai.ans", str(found[0]), loader=loader))
    loader.exec_module(module)
    return module


ans = load()


def encode(symbols, indexes, cdfs, offsets):
    """CompressAI's `RansEncoder.encode_with_indexes`: the stream's bytes.

    Never call it where `encoder_hazard` names a finding: it writes before its buffer (F8), never
    returns (F9) or divides by zero (F10)."""
    return ans.RansEncoder().encode_with_indexes(
        list(symbols), list(indexes), [list(c) for c in cdfs], [len(c) for c in cdfs], list(offsets))


def decode(stream, indexes, cdfs, offsets):
    """CompressAI's `RansDecoder.decode_with_indexes`: the symbols (int32)."""
    return ans.RansDecoder().decode_with_indexes(
        bytes(stream), list(indexes), [list(c) for c in cdfs], [len(c) for c in cdfs], list(offsets))


def wrap32(v):
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def raws(symbols, indexes, cdfs, offsets):
    """Each escape's `raw` as CompressAI's encoder computes it (int32 value, uint32 raw), with the
    symbol's position; a direct symbol has none."""
    out = []
    for k, (s, i) in enumerate(zip(symbols, indexes)):
        top = len(cdfs[i]) - 2
        value = wrap32(s - offsets[i])
        if value < 0 or value >= top:
            out.append((k, (-2 * value - 1 if value < 0 else 2 * (value - top)) % (1 << 32)))
    return out


def entries(symbols, indexes, cdfs, offsets):
    """The number of entries CompressAI's encoder codes for these symbols (its buffer's size in
    32-bit words): one per symbol, and per escape its count groups and its value groups."""
    total = len(symbols)
    for _, raw in raws(symbols, indexes, cdfs, offsets):
        groups = (raw.bit_length() + BYPASS - 1) // BYPASS
        total += groups // 15 + 1 + groups
    return total


def encoder_hazard(symbols, indexes, cdfs, offsets, words):
    """Why CompressAI's encoder cannot be run on these symbols for a stream of `words` 32-bit words,
    or None (docs/findings.md):
    - "F8": its buffer holds one word per coded entry (`entries`), fewer than the stream's words,
      and it writes before the buffer (0 symbols: a segfault; 1: heap corruption);
    - "F9": it counts an escape's groups with `raw >> (n·4) != 0`, a 32-bit shift that x86 takes
      modulo 32, so a `raw` of 8 groups (`raw ≥ 2^28`) never ends the loop;
    - "F10": it keeps a symbol's frequency in 16 bits, so a table of n = 2 (whose one symbol has
      frequency 2^16) stores 0 and divides by it (SIGFPE)."""
    if any(len(cdfs[i]) == 2 for i in indexes):
        return "F10"
    if any(raw >= 1 << 28 for _, raw in raws(symbols, indexes, cdfs, offsets)):
        return "F9"
    if entries(symbols, indexes, cdfs, offsets) < words:
        return "F8"
    return None


if __name__ == "__main__" and sys.argv[1:] == ["--check"]:
    cdf = [0, 20000, 34000, 44000, 51000, 56000, 59500, 62000, 63500, 65536]
    syms = [0, 3, -7, 5, 100, -1, 2, 2, 4, 1]
    stream = encode(syms, [0] * len(syms), [cdf], [-2])
    assert decode(stream, [0] * len(syms), [cdf], [-2]) == syms, "CompressAI's ans does not round-trip"
    print(f"adapters/compressai: {ans.__file__} loads without torch and round-trips "
          f"({len(syms)} symbols, {len(stream)} bytes)")
elif __name__ == "__main__":
    sys.exit(__doc__)
