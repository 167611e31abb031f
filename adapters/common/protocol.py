"""What every adapter under `adapters/` shares: the `fill` protocol's side of an operator
implementation (docs/protocol.md) for graph and per-operator vectors.

It reads and checks a request line, asks the certifier (`wai-checker certify`) for the certificate an
adapter's width decisions rest on, writes canonical answers, and runs the line loop: a line that is
not a request is reported on stderr as `line N: <field>: <what>`, nothing is written for it and the
exit status is 1; any other failure is the adapter's, and declines the record with its reason.
Standard library only; the runtime-specific part of each adapter imports it.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CAP = 1 << 26  # §3 caps
# The most elements one tensor may hold here: every value passes through Python lists and JSON, at
# tens of bytes and about a microsecond each, so the scale tier's 2^24- and 2^26-element tensors
# are declined (docs/tosa.md, docs/onnx.md).
LIMIT = 1 << 22
I64 = (-(1 << 63), (1 << 63) - 1)


class RequestError(Exception):
    def __init__(self, field, what):
        super().__init__(f"{field}: {what}")


class Refused(Exception):
    """A §4 refusal of the decode, with its code."""


class Unsupported(Exception):
    """The node (or this decode) has no exact mapping on the runtime; the message says why."""


class Context:
    """The graph, its certificate and the intervals the adapter reads from it."""

    def __init__(self, graph, cert):
        self.graph = graph
        self.nodes = {int(n["index"]): n for n in cert["nodes"]}
        self.interval = {}  # tensor -> (lo, hi) after its policy (§8.1)
        for i in cert["inputs"]:
            self.interval[int(i["tensor"])] = (int(i["lo"]), int(i["hi"]))
        for n in cert["nodes"]:
            for o in n["out"]:
                self.interval[int(o["tensor"])] = (int(o["lo"]), int(o["hi"]))

    def inter(self, node, key):
        d = self.nodes[node.index]["intermediates"][key]
        return int(d["lo"]), int(d["hi"])


def checker():
    """`wai-checker`: $WAI_CHECKER, or release/wai-checker under $CARGO_TARGET_DIR or else the
    `target/` of the repository the adapters live in (each adapter's `setup` builds it)."""
    target = os.environ.get("CARGO_TARGET_DIR") or Path(__file__).resolve().parents[2] / "target"
    path = os.environ.get("WAI_CHECKER") or str(Path(target) / "release/wai-checker")
    if not os.access(path, os.X_OK):
        sys.exit(f"fill: {path} is not an executable; build it with "
                 "`cargo build --release -p wai-checker --bin wai-checker` or set WAI_CHECKER")
    return path


# --- the request ------------------------------------------------------------------------------


CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]*")
CANONICAL_LIST = re.compile(r"(?:0|-?[1-9][0-9]*)(?:,(?:0|-?[1-9][0-9]*))*")


def integer(v, field):
    if not isinstance(v, str) or not CANONICAL_INT.fullmatch(v):
        raise RequestError(field, f"{json.dumps(v)[:40]} is not a canonical integer string")
    return int(v)


def integers(vs, field):
    """A list of canonical integer strings as ints: checked in one pass over the joined text (the
    scale tier's millions of elements), each element said apart only when that fails."""
    if all(isinstance(v, str) for v in vs):
        joined = ",".join(vs)
        if joined.count(",") == len(vs) - 1 and (not vs or CANONICAL_LIST.fullmatch(joined)):
            return list(map(int, vs))
    return [integer(v, f"{field}[{i}]") for i, v in enumerate(vs)]


def strings(a):
    """An int64 numpy array's elements as canonical integer strings, in order."""
    return list(map(str, a.reshape(-1).tolist()))


def tensor(t, field):
    if not isinstance(t, dict) or set(t) != {"data", "shape"}:
        raise RequestError(field, "a tensor is {\"data\", \"shape\"}")
    if not isinstance(t["shape"], list) or len(t["shape"]) != 3:
        raise RequestError(field + ".shape", "three dimensions [C, H, W]")
    shape = [integer(d, f"{field}.shape[{i}]") for i, d in enumerate(t["shape"])]
    too_large(shape)
    if not isinstance(t["data"], list):
        raise RequestError(field + ".data", "not an array")
    data = integers(t["data"], f"{field}.data")
    if any(d < 0 for d in shape) or len(data) != shape[0] * shape[1] * shape[2]:
        raise RequestError(field + ".data", f"{len(data)} elements for the shape {shape}")
    return shape, data


def too_large(shape):
    if shape[0] * shape[1] * shape[2] > LIMIT:
        raise Unsupported(f"a tensor of {shape[0] * shape[1] * shape[2]} elements: past this adapter's 2^22 (Python lists)")


def parse(line):
    try:
        req = json.loads(line)
    except json.JSONDecodeError as e:
        raise RequestError("(line)", f"not JSON ({e.msg})") from None
    if not isinstance(req, dict) or not isinstance(req.get("id"), str):
        raise RequestError("id", "missing, or not a string")
    return req


def decodes_of(req):
    out = []
    if not isinstance(req.get("decodes"), list):
        raise RequestError("decodes", "missing, or not an array")
    for k, d in enumerate(req["decodes"]):
        f = f"decodes[{k}]"
        if not isinstance(d, dict) or not isinstance(d.get("inputs"), list) or not isinstance(d.get("scalars"), list):
            raise RequestError(f, "a decode is {\"inputs\", \"scalars\"}")
        ins = [tensor(t, f"{f}.inputs[{i}]") for i, t in enumerate(d["inputs"])]
        scalars = [integer(s, f"{f}.scalars[{i}]") for i, s in enumerate(d["scalars"])]
        out.append((ins, scalars))
    return out


def canonical(v):
    """§8.5's canonical JSON (docs/protocol.md): sorted keys, no whitespace, integers as strings."""
    return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=True)


def not_supported(rid, why):
    return {"id": rid, "not_supported": why}


# --- the certifier: the certificate the adapter's widths are proved by --------------------------


def certificate(graph_bytes):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "g.whg1"
        path.write_bytes(graph_bytes)
        r = subprocess.run([checker(), "certify", str(path)], capture_output=True)
        if r.returncode != 0:
            # The refusal, without the temporary file's name (a reason must read the same each run).
            why = r.stderr.decode(errors="replace").strip().split(f"{path}: ", 1)[-1][:200]
            raise Unsupported(f"load refused by the certifier ({why}): load steps 1-7 are not made here, and no decode runs")
    return json.loads(r.stdout)["graphs"][0]


# --- run step 3: the shape rules (§5) -------------------------------------------------------


def plan(node, dims, cx):
    """§5's shape rule of one node (run step 3): the output shapes, or Refused."""
    op, p = node.op, node.p
    c, h, w = dims[0]
    if op == "conv":
        if h + 2 * p["ph"] > CAP or w + 2 * p["pw"] > CAP:
            raise Refused("too_large")
        if h + 2 * p["ph"] < p["kh"] or w + 2 * p["pw"] < p["kw"]:
            raise Refused("geometry_mismatch")
        return [[p["cout"], (h + 2 * p["ph"] - p["kh"]) // p["sh"] + 1, (w + 2 * p["pw"] - p["kw"]) // p["sw"] + 1]]
    if op == "conv_transpose":
        uh, uw = (h - 1) * p["sh"] + p["kh"] + p["oph"], (w - 1) * p["sw"] + p["kw"] + p["opw"]
        if uh > CAP or uw > CAP or p["cout"] * uh * uw > CAP:
            raise Refused("too_large")
        if uh - 2 * p["ph"] < 1 or uw - 2 * p["pw"] < 1:
            raise Refused("geometry_mismatch")
        return [[p["cout"], uh - 2 * p["ph"], uw - 2 * p["pw"]]]
    if op in ("rescale", "chscale", "clamp", "relu", "abs", "leaky", "lut16"):
        return [[c, h, w]]
    if op == "mul":
        b = dims[1]
        if b[1:] != [h, w] or b[0] not in (1, c):
            raise Refused("geometry_mismatch")
        return [[c, h, w]]
    if op == "add":
        if dims[1] != dims[0]:
            raise Refused("geometry_mismatch")
        return [[c, h, w]]
    if op == "chunk_add":
        return [[c // 2, h, w]]
    if op == "concat":
        if any(d[1:] != [h, w] for d in dims):
            raise Refused("geometry_mismatch")
        return [[sum(d[0] for d in dims), h, w]]
    if op == "split":
        return [[p["count"], h, w]]
    if op == "pixel_shuffle":
        r = p["r"]
        if h * r > CAP or w * r > CAP:
            raise Refused("too_large")
        return [[c // (r * r), h * r, w * r]]
    if op == "pixel_unshuffle":
        r = p["r"]
        if h % r or w % r:
            raise Refused("geometry_mismatch")
        return [[c * r * r, h // r, w // r]]
    if op == "pad_rep":
        m = p["m"]
        hn, wn = -(-h // m) * m, -(-w // m) * m
        if hn > CAP or wn > CAP:
            raise Refused("too_large")
        return [[c, hn, wn]]
    if op == "crop_to":
        if dims[1][1] > h or dims[1][2] > w:
            raise Refused("geometry_mismatch")
        return [[c, dims[1][1], dims[1][2]]]
    if op == "crop":
        y0, x0, hh, ww = (p[k][1] for k in ("y0", "x0", "h", "w"))
        if hh < 1 or ww < 1 or y0 + hh > h or x0 + ww > w:
            raise Refused("geometry_mismatch")
        return [[c, hh, ww]]
    if op == "subpos_split":
        if h % 2 or w % 2:
            raise Refused("geometry_mismatch")
        return [[c, h // 2, w // 2]] * 4
    if op == "subpos_merge":
        if any(d != dims[0] for d in dims):
            raise Refused("geometry_mismatch")
        if 2 * h > CAP or 2 * w > CAP:
            raise Refused("too_large")
        return [[c, 2 * h, 2 * w]]
    if op == "fill":
        return [[cx.graph.tensors[node.outs[0]].channels, h, w]]
    if op == "gram":
        if dims[1] != dims[0]:
            raise Refused("geometry_mismatch")
        return [[c, 1, c // p["groups"]]]
    if op == "apply":
        v = dims[1]
        if [h, w] != [1, v[0] // p["groups"]]:
            raise Refused("geometry_mismatch")
        return [list(v)]
    raise Unsupported(f"{op}: no shape rule here")


# --- the line loop ----------------------------------------------------------------------------


def id_of(line):
    try:
        return str(json.loads(line)["id"])
    except (ValueError, KeyError, TypeError):
        return "?"


def serve(answer):
    """Answers every line of stdin with `answer(line, request)`, in order; the exit status."""
    status = 0
    for n, line in enumerate(sys.stdin, 1):
        line = line.rstrip("\n")
        try:
            out = answer(line, parse(line))
        except RequestError as e:
            print(f"line {n}: {e}", file=sys.stderr)
            status = 1
            continue
        except Exception as e:  # noqa: BLE001 - any other failure is the adapter's, said as such
            print(f"line {n}: adapter bug: {type(e).__name__}: {e}", file=sys.stderr)
            out = not_supported(id_of(line), f"adapter bug: {type(e).__name__}: {e}")
        sys.stdout.write(canonical(out) + "\n")
        sys.stdout.flush()
    return status
