"""`fill` (docs/protocol.md) for graph and per-operator vectors, computed by ONNX graphs built per
node with the `onnx` helper API and run on onnxruntime (CPU execution provider, default session
options) or the ONNX reference evaluator, chosen by `--backend onnxruntime|reference`
(docs/onnx.md).

For each request line it writes one canonical line: the filled vector, or
`{"id":…,"not_supported":"reason"}` when no ONNX mapping computes it exactly (the grader counts such
a record as not gradable). It is an operator implementation (integer-operators §1; docs/protocol.md,
"Roles"): graded with `--role operator`, it is given each vector's `profiles` and echoes them, and
is not sent the vectors refused at load step 8. It makes no load check of its own: the certificate
that proves each ONNX type wide enough comes from `wai-checker certify`, and a graph the certifier
refuses is declined, so every `load` it answers is "ok". Every decode's outputs come from the ONNX
backend. The run-time refusals of integer-operators §4 that are checks on sizes and values (run
steps 1-4) are made here, the values checked being the backend's.

A request that is not a request (not JSON, a missing member, a non-canonical integer) is reported
on stderr as `line N: <field>: <what>`; nothing is written for it and the exit status is 1.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tosa"))
import whg1  # noqa: E402 - the WHG1 reader written from §10 (standard library only), shared with adapters/tosa

import onnx_lower as lower  # noqa: E402
from onnx_graph import AdapterBug, Graph  # noqa: E402
from onnx_lower import Context, Unsupported  # noqa: E402

BACKENDS = ("onnxruntime", "reference")
BACKEND = "onnxruntime"

CAP = 1 << 26  # §3 caps
# The most elements one tensor may hold here: every value passes through Python lists and JSON, at
# tens of bytes and about a microsecond each, so the scale tier's 2^24- and 2^26-element tensors
# are declined (docs/onnx.md).
LIMIT = 1 << 22
I64 = (-(1 << 63), (1 << 63) - 1)


class RequestError(Exception):
    def __init__(self, field, what):
        super().__init__(f"{field}: {what}")


class Refused(Exception):
    """A §4 refusal of the decode, with its code."""


def checker():
    """`wai-checker`: $WAI_CHECKER, or release/wai-checker under $CARGO_TARGET_DIR or else the
    `target/` of the repository this adapter lives in (adapters/onnx/setup builds it)."""
    target = os.environ.get("CARGO_TARGET_DIR") or Path(__file__).resolve().parents[2] / "target"
    path = os.environ.get("WAI_CHECKER") or str(Path(target) / "release/wai-checker")
    if not os.access(path, os.X_OK):
        sys.exit(f"onnx fill: {path} is not an executable; build it with "
                 "`cargo build --release -p wai-checker --bin wai-checker` or set WAI_CHECKER")
    return path


# --- the request ------------------------------------------------------------------------------


CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]*")


def integer(v, field):
    if not isinstance(v, str) or not CANONICAL_INT.fullmatch(v):
        raise RequestError(field, f"{json.dumps(v)[:40]} is not a canonical integer string")
    return int(v)


def tensor(t, field):
    if not isinstance(t, dict) or set(t) != {"data", "shape"}:
        raise RequestError(field, "a tensor is {\"data\", \"shape\"}")
    if not isinstance(t["shape"], list) or len(t["shape"]) != 3:
        raise RequestError(field + ".shape", "three dimensions [C, H, W]")
    shape = [integer(d, f"{field}.shape[{i}]") for i, d in enumerate(t["shape"])]
    too_large(shape)
    if not isinstance(t["data"], list):
        raise RequestError(field + ".data", "not an array")
    data = [integer(d, f"{field}.data[{i}]") for i, d in enumerate(t["data"])]
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


# --- the certifier: the certificate ONNX's widths are proved by ---------------------------------


def certificate(graph_bytes):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "g.whg1"
        path.write_bytes(graph_bytes)
        r = subprocess.run([checker(), "certify", str(path)], capture_output=True)
    if r.returncode != 0:
        why = r.stderr.decode(errors="replace").strip()[:200]
        raise Unsupported(f"load refused by the certifier ({why}): load steps 1-7 are not made here, and no decode runs")
    return json.loads(r.stdout)["graphs"][0]


# --- one decode (§4 run steps) ----------------------------------------------------------------


def nchw(shape, data):
    c, h, w = shape
    return np.array(data, dtype=np.int64).reshape(1, c, h, w)


def chw(arr):
    a = arr[0]
    return {"data": [str(int(v)) for v in a.reshape(-1)], "shape": [str(d) for d in a.shape]}


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


def run_node(node, values, dims, scalars, cx):
    """One node as one ONNX graph: its outputs (after clamp policies, as Clip) as int64 NCHW."""
    g = Graph()
    ins = [g.input(values[t]) for t in node.ins]
    if node.op == "fill":
        value = node.p["value"] if node.p["kind"] == "const" else scalars[node.p["value"]]
        outs = lower.build_fill(g, node, ins, cx, dims, value)
    elif node.op == "chscale":
        outs = lower.build_chscale(g, node, ins, cx, dims, scalars)
    else:
        outs = lower.BUILD[node.op](g, node, ins, cx, dims)
    for v, t in zip(outs, node.outs):
        t = cx.graph.tensors[t]
        g.output(lower.clamp(g, v, t.lo, t.hi) if t.policy == "clamp" else g.op("Identity", [v]))
    return g.run(BACKEND, f"node {node.index} ({node.op})")


def check(t, arr):
    if t.policy == "check" and (arr.size and (arr.min() < t.lo or arr.max() > t.hi)):
        raise Refused("field_range")


def run_decode(graph, cx, inputs, scalars, state):
    """§4's run steps for one decode; the outputs (CHW tensors) or Refused."""
    data = iter(inputs)
    shapes, raw = {}, {}
    first = None
    # Step 1: each input's channel count, sides and size.
    for k, i in enumerate(graph.inputs):
        t = graph.tensors[i.tensor]
        if i.kind == "data":
            shape, values = next(data)
        else:
            shape, values = state.get(k) or ([t.channels, first[1], first[2]], None)
        if k == 0:
            first = shape
        c, h, w = shape
        if c != t.channels or h < 1 or w < 1:
            raise Refused("model_mismatch")
        if (i.max_h and (h > i.max_h or w > i.max_w)) or c * h * w > graph.max_elems:
            raise Refused("too_large")
        if values is None:
            values = [i.init] * (c * h * w)
        shapes[i.tensor], raw[i.tensor] = shape, values
    # Step 2: the scalars.
    for (lo, hi), v in zip(graph.scalars, scalars):
        if not lo <= v <= hi:
            raise Refused("field_range")
    # Step 3: the run-time plan.
    dims = dict(shapes)
    for node in graph.nodes:
        outs = plan(node, [dims[t] for t in node.ins], cx)
        for t, s in zip(node.outs, outs):
            if s[0] * s[1] * s[2] > graph.max_elems:
                raise Refused("too_large")
            dims[t] = s
    # Step 4: the input policies, then the nodes on the ONNX backend.
    values = {}
    for i in graph.inputs:
        t = graph.tensors[i.tensor]
        vals = raw[i.tensor]
        if t.policy == "check":
            if any(v < t.lo or v > t.hi for v in vals):
                raise Refused("field_range")
            values[i.tensor] = nchw(shapes[i.tensor], vals)
        else:
            if any(v < I64[0] or v > I64[1] for v in vals):
                raise Unsupported("a clamp input's value passes INT64")
            g = Graph()
            g.output(lower.clamp(g, g.input(nchw(shapes[i.tensor], vals)), t.lo, t.hi))
            values[i.tensor] = g.run(BACKEND, f"input {i.tensor} (clamp policy)")[0]
    for s in dims.values():
        too_large(s)
    for node in graph.nodes:
        got = run_node(node, values, [dims[t] for t in node.ins], scalars, cx)
        for t, arr in zip(node.outs, got):
            want = [1] + dims[t]
            if list(arr.shape) != want:
                raise AdapterBug(f"node {node.index} ({node.op}): {BACKEND} gave the shape {list(arr.shape)}, not {want}")
            check(graph.tensors[t], arr)
            values[t] = arr
    return [values[t] for t in graph.outputs]


# --- one record -------------------------------------------------------------------------------


def not_supported(rid, why):
    return {"id": rid, "not_supported": why}


def answer(line, req):
    rid = req["id"]
    if "graph" not in req:
        if "bundle" in req:
            return not_supported(rid, "jpegai scale path: the entropy decodes (mans_decode) and the band lookups have no ONNX operators")
        return not_supported(rid, "not a graph vector")
    profiles = req.get("profiles")
    if not isinstance(profiles, list):
        return not_supported(rid, "no profiles given: this adapter is an operator implementation (--role operator)")
    try:
        decodes = decodes_of(req)
    except Unsupported as e:
        return not_supported(rid, str(e))
    try:
        graph_bytes = bytes.fromhex(req["graph"])
    except (TypeError, ValueError):
        raise RequestError("graph", "not hexadecimal") from None
    try:
        cert = certificate(graph_bytes)
        graph = whg1.read(graph_bytes)
        cx = Context(graph, cert)
        for node in graph.nodes:
            try:
                lower.support(node, cx)
            except Unsupported as e:
                why = str(e) if str(e).startswith(node.op + ":") else f"{node.op}: {e}"
                raise Unsupported(f"node {node.index}: {why}" if len(graph.nodes) > 1 else why) from None
        state, expects, ran = {}, [], False
        for ins, scalars in decodes:
            try:
                outs = run_decode(graph, cx, ins, scalars, state)
            except Refused as e:
                expects.append({"refuse": str(e)})
                continue
            ran = True
            expects.append({"outputs": [chw(a) for a in outs]})
            for k, i in enumerate(graph.inputs):
                if i.kind == "state":
                    a = outs[i.src][0]
                    state[k] = (list(a.shape), [int(v) for v in a.reshape(-1)])
        if not ran:
            return not_supported(rid, "every decode is refused before any operator runs: nothing for the ONNX backend to compute")
    except Unsupported as e:
        return not_supported(rid, str(e))
    except AdapterBug as e:
        print(f"onnx fill: {rid}: adapter bug: {e}", file=sys.stderr)
        return not_supported(rid, f"adapter bug: {e}")
    except whg1.Whg1Error as e:
        return not_supported(rid, f"adapter bug: the WHG1 reader refused a loadable graph ({e})")
    # The request's own inputs and scalars, echoed (they were checked canonical).
    decodes = [{"expect": e, "inputs": d["inputs"], "scalars": d["scalars"]}
               for d, e in zip(req["decodes"], expects)]
    return {"decodes": decodes, "graph": req["graph"], "id": rid, "load": "ok", "profiles": profiles}


def _id_of(line):
    try:
        return str(json.loads(line)["id"])
    except (ValueError, KeyError, TypeError):
        return "?"


def main(argv):
    global BACKEND
    if len(argv) != 2 or argv[0] != "--backend" or argv[1] not in BACKENDS:
        print("usage: adapters/onnx/fill --backend onnxruntime|reference", file=sys.stderr)
        return 2
    BACKEND = argv[1]
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
            rid = _id_of(line)
            print(f"line {n}: adapter bug: {type(e).__name__}: {e}", file=sys.stderr)
            out = not_supported(rid, f"adapter bug: {type(e).__name__}: {e}")
        sys.stdout.write(canonical(out) + "\n")
        sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
