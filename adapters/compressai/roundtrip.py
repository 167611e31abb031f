"""Round trips: random symbol streams encoded by CompressAI's encoder, decoded by CompressAI's decoder
and by the oracle (`wai-oracle fill` on `rans64_decode` request lines), under every mode; and the
experiments behind docs/findings.md F8–F10 and the differences on streams CompressAI does not write.
docs/compressai.md has the results.

    adapters/compressai/.venv/bin/python adapters/compressai/roundtrip.py [--seeds N] [--first S]
        [--keep FILE] [--experiments-only]

Every stream is drawn from `random.Random(seed)`, so a seed names it; `--keep` writes one line per
seed (the table sizes, the symbol count and the stream's SHA-256). The exit status is 1 when the oracle and CompressAI differ on a stream
CompressAI writes and decodes back.
"""

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ans  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
I32 = (-(1 << 31), (1 << 31) - 1)
SIZES = [3, 4, 5, 10, 17, 64, 257, 1000, 4097, 65537]


def oracle():
    target = os.environ.get("CARGO_TARGET_DIR") or ROOT / "target"
    path = os.environ.get("WAI_ORACLE") or str(Path(target) / "release/wai-oracle")
    if not os.access(path, os.X_OK):
        sys.exit(f"roundtrip.py: {path} is not an executable; build it with "
                 "`cargo build --release -p wai-oracle --bin wai-oracle` or set WAI_ORACLE")
    return path


def canonical(v):
    return json.dumps(v, separators=(",", ":"), sort_keys=True)


def request(rid, stream, tables, reads, table, escape, end):
    modes = {"table": table, "escape": escape, "end": end}
    if escape == "strict":
        modes.update(lo=str(I32[0]), hi=str(I32[1]))
    return {"id": rid, "op": "rans64_decode", "modes": modes,
            "in": {"stream": stream.hex(), "reads": [str(r) for r in reads],
                   "tables": [{"cdf": [str(v) for v in c], "offset": str(o)} for c, o in tables]}}


def fill(requests):
    """The oracle's `expect` for each request."""
    text = "".join(canonical(r) + "\n" for r in requests)
    r = subprocess.run([oracle(), "fill"], input=text.encode(), capture_output=True, check=True)
    return [json.loads(line)["expect"] for line in r.stdout.decode().splitlines()]


def expect_symbols(expect):
    return [int(s) for s in expect["symbols"]] if "symbols" in expect else expect


# --- random streams ---------------------------------------------------------------------------


def random_cdf(rng, n):
    if n == 65537:
        return list(range(65537))
    inner = sorted(rng.sample(range(1, 65536), n - 2))
    if rng.random() < 0.3 and n > 3:  # a steep table: one symbol takes almost everything
        inner = list(range(1, n - 2)) + [65535 - rng.randrange(0, 3)] if n - 2 > 1 else inner
        inner = sorted(set(inner))[: n - 2]
        if len(inner) < n - 2:
            inner = sorted(rng.sample(range(1, 65536), n - 2))
    return [0] + inner + [65536]


def random_value(rng, top):
    """A value for a table whose escape is `top` (n − 2): a direct one, or an escape whose raw has
    0 to 7 groups (raw < 2^28: CompressAI's encoder never returns past it, F9)."""
    if top > 0 and rng.random() < 0.75:
        return rng.randrange(top)
    groups = rng.choice([0, 0, 1, 1, 2, 3, 4, 5, 6, 7])
    raw = 0 if groups == 0 else rng.randrange(16 ** (groups - 1), 16 ** groups)
    return -(raw // 2) - 1 if raw % 2 else raw // 2 + top


def random_case(seed):
    rng = random.Random(seed)
    ntab = rng.randint(1, 4)
    tables = []
    for _ in range(ntab):
        n = rng.choice(SIZES)
        offset = rng.choice([0, 0, rng.randint(-1000, 1000), rng.randint(-(1 << 20), 1 << 20)])
        tables.append((random_cdf(rng, n), offset))
    count = rng.choice([8, 9, 12, 20, 50, 200, 1000])
    reads = [rng.randrange(ntab) for _ in range(count)]
    symbols = [random_value(rng, len(tables[r][0]) - 2) + tables[r][1] for r in reads]
    return tables, reads, symbols


def modes_for(tables):
    ns = [len(c) for c, _ in tables]
    t = "t4097" if all(3 <= n <= 4097 for n in ns) else "t2"
    return [(t, e, end) for e in ("strict", "lenient") for end in ("canonical", "final_only")]


def round_trips(seeds, keep, batch=100):
    """Every seed's stream through CompressAI and the oracle, `batch` seeds to one oracle run."""
    seeds = list(seeds)
    stats, own, diffs = {"streams": 0, "symbols": 0, "escapes": 0, "bytes": 0}, [], []
    with open(keep, "w") if keep else open(os.devnull, "w") as out:
        for k in range(0, len(seeds), batch):
            s, o, d = round_trip_batch(seeds[k:k + batch], out)
            for key in stats:
                stats[key] += s[key]
            own += o
            diffs += d
    return stats, own, diffs


def round_trip_batch(seeds, out):
    cases, reqs, stats = [], [], {"streams": 0, "symbols": 0, "escapes": 0, "bytes": 0}
    for seed in seeds:
        tables, reads, symbols = random_case(seed)
        cdfs, offsets = [c for c, _ in tables], [o for _, o in tables]
        stream = ans.encode(symbols, reads, cdfs, offsets)
        back = ans.decode(stream, reads, cdfs, offsets)
        cases.append((seed, tables, reads, symbols, stream, back))
        for table, escape, end in modes_for(tables):
            reqs.append(request(f"rt-{seed}-{table}-{escape}-{end}", stream, tables, reads, table, escape, end))
        stats["streams"] += 1
        stats["symbols"] += len(symbols)
        stats["escapes"] += len(ans.raws(symbols, reads, cdfs, offsets))
        stats["bytes"] += len(stream)
    got = iter(fill(reqs))
    own_failures, differences = [], []
    for seed, tables, reads, symbols, stream, back in cases:
        if back != symbols:
            own_failures.append(seed)
        answers = [expect_symbols(next(got)) for _ in range(4)]
        for (table, escape, end), a in zip(modes_for(tables), answers):
            if a != back:
                differences.append((seed, table, escape, end, a, back))
        # The kept line: the seed, what it drew and the stream's digest (the stream itself is the seed's).
        out.write(canonical({"seed": seed, "tables": [len(c) for c, _ in tables], "symbols": len(symbols),
                             "stream_sha256": hashlib.sha256(stream).hexdigest()}) + "\n")
    return stats, own_failures, differences


# --- the E1 encoder (docs/assumptions.md E1 item 8), for streams CompressAI does not write ---------


class E1Encoder:
    """E1's encoder: steps are pushed in decode order and coded in reverse from x = 2^31."""

    def __init__(self):
        self.steps = []

    def symbol(self, cdf, k):
        self.steps.append(("s", cdf[k], cdf[k + 1] - cdf[k]))

    def bits(self, v, k=4):
        self.steps.append(("b", v, k))

    def escape(self, count_groups, value_groups, cdf):
        self.symbol(cdf, len(cdf) - 2)
        for g in list(count_groups) + list(value_groups):
            self.bits(g)

    def stream(self):
        x, words = 1 << 31, []
        for kind, a, b in reversed(self.steps):
            if kind == "s":
                start, f = a, b
                if x >= f << 47:
                    words.append(x & 0xFFFFFFFF)
                    x >>= 32
                x = (x // f) * 65536 + start + x % f
            else:
                v, k = a, b
                if x >= 1 << (63 - k):
                    words.append(x & 0xFFFFFFFF)
                    x >>= 32
                x = (x << k) | v
        return x.to_bytes(8, "little") + b"".join(w.to_bytes(4, "little") for w in reversed(words))


def in_subprocess(code, timeout=10):
    """Runs `code` (with `ans` imported) in a fresh interpreter: its exit status (None on timeout)."""
    try:
        r = subprocess.run([sys.executable, "-c", "import ans\n" + code], cwd=HERE, capture_output=True,
                           timeout=timeout)
        return r.returncode
    except subprocess.TimeoutExpired:
        return None


TA = [0, 20000, 34000, 44000, 51000, 56000, 59500, 62000, 63500, 65536]


def experiments():
    """Prints each experiment's values; the list of (name, holds) pairs."""
    out = []
    # F8: the encoder's buffer, one word per coded entry, against the stream's words.
    for n in (0, 1, 2, 3, 4):
        rc = in_subprocess(f"for _ in range(200): ans.encode([1]*{n}, [0]*{n}, [{TA}], [0])")
        print(f"F8: encode of {n} direct symbol(s), 200 times: exit status {rc}")
        out.append((f"F8 n={n}", rc))
    rc = in_subprocess("for _ in range(200): ans.encode([0, 0], [0, 0], [[0, 1, 65536]], [0])")
    print(f"F8: encode of 2 symbols of frequency 1 (3 words, 2 entries), 200 times: exit status {rc}")
    out.append(("F8 n=2 freq 1", rc))
    # F9: the encoder's group count never ends at raw >= 2^28.
    for raw in ((1 << 28) - 1, 1 << 28):
        value = -(raw // 2) - 1 if raw % 2 else raw // 2 + 8
        rc = in_subprocess(f"ans.encode([{value}] + [1]*8, [0]*9, [{TA}], [0])", timeout=5)
        print(f"F9: encode of an escape with raw = {raw:#x} (value {value}): "
              f"{'no return within 5 s' if rc is None else f'exit status {rc}'}")
        out.append((f"F9 raw={raw:#x}", rc))
    # F10: a table of n = 2 (every symbol the escape): its one frequency, 2^16, kept in 16 bits.
    rc = in_subprocess("ans.encode([0]*8, [0]*8, [[0, 65536]], [0])")
    print(f"F10: encode of 8 symbols on the table [0, 65536]: exit status {rc}")
    out.append(("F10", rc))
    # F11 and the readings: streams of E1's encoder that CompressAI's does not write.
    foreign = [
        ("raw 2^31 (8 groups, the last 8)", [[8], [0] * 7 + [8]]),
        ("raw 2^32 - 1 (8 groups of 15)", [[8], [15] * 8]),
        ("raw 2^28 (8 groups, the last 1)", [[8], [0] * 7 + [1]]),
        ("count 9 (9 groups, value 1)", [[9], [1] + [0] * 8]),
        ("count 15 + 0 (15 groups)", [[15, 0], [1] + [0] * 14]),
        ("non-minimal count 2, last group 0", [[2], [5, 0]]),
    ]
    reqs, rows = [], []
    for name, (count, groups) in foreign:
        enc = E1Encoder()
        enc.symbol(TA, 3)
        enc.escape(count, groups, TA)
        enc.symbol(TA, 1)
        stream = enc.stream()
        reads = [0, 0, 0]
        tables = [(TA, 0)]
        pad = b"\x00" * 4 * 64
        got = ans.decode(stream + pad, reads, [TA], [0])
        got2 = ans.decode(stream + b"\x5a\xa5\x69\x96" * 64, reads, [TA], [0])
        rows.append((name, stream, got, got2))
        for escape in ("strict", "lenient"):
            for end in ("canonical", "final_only"):
                reqs.append(request(f"x-{name}-{escape}-{end}", stream, tables, reads, "t4097", escape, end))
    answers = iter(fill(reqs))
    for name, stream, got, got2 in rows:
        a = {f"{e}/{end}": expect_symbols(next(answers)) for e in ("strict", "lenient") for end in ("canonical", "final_only")}
        print(f"foreign stream, {name}: {stream.hex()}\n  CompressAI: {got}"
              f"{'' if got == got2 else f' (another padding: {got2})'}\n  oracle: {a}")
        out.append((f"foreign {name}", (got, got2, a)))
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=2000)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--keep")
    p.add_argument("--experiments-only", action="store_true")
    a = p.parse_args(argv)
    experiments()
    if a.experiments_only:
        return 0
    stats, own, diffs = round_trips(range(a.first, a.first + a.seeds), a.keep)
    print(f"round trips: seeds {a.first}..{a.first + a.seeds - 1}: {stats['streams']} streams, "
          f"{stats['symbols']} symbols ({stats['escapes']} escapes), {stats['bytes']} bytes; "
          f"4 modes each through the oracle")
    print(f"  CompressAI's own round trip fails on {len(own)} streams {own[:10]}")
    print(f"  oracle vs CompressAI: {len(diffs)} differences")
    for d in diffs[:20]:
        print(f"    seed {d[0]} {d[1]}/{d[2]}/{d[3]}: oracle {str(d[4])[:200]} CompressAI {str(d[5])[:200]}")
    return 1 if diffs or own else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
