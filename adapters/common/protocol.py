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


FORMS = [  # docs/protocol.md's record forms, each told by a member (stage before numeric: a stage
    # vector's "in" may hold a "q" too)
    ("graph vector", lambda r: "graph" in r),
    ("stage-operator vector", lambda r: "op" in r),
    ("lowering record", lambda r: "lowering" in r),
    ("jpegai scale path", lambda r: "bundle" in r),
    ("CIS-2 function", lambda r: "fn" in r),
    ("CIS-2 decode", lambda r: "model" in r),
    ("DetessDequant numeric", lambda r: isinstance(r.get("in"), dict) and "q" in r["in"]),
    ("DetessDequant call", lambda r: "buffers" in r),
]


def check_support(support, why_not, node, cx):
    """A lowering's support check: the node's own check from `support`, or the reason `why_not`
    gives (every adapter's lower module keeps these two tables)."""
    if node.op not in support:
        raise Unsupported(why_not.get(node.op, f"{node.op}: not mapped"))
    support[node.op](node, cx)


def form(req):
    """The request's record form (docs/protocol.md), or None."""
    return next((name for name, has in FORMS if has(req)), None)


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


# --- a graph vector's run, for any runtime (§4's run steps) ------------------------------------
#
# Every adapter's `fill` runs these steps on its own runtime object, which has:
#   name                                the runtime's name, for the reasons it gives;
#   support(node, cx)                   raises Unsupported when the node has no exact mapping;
#   inputs(graph, cx, tensor, shape, values)   the runtime's array of a graph input, its clamp policy
#                                        applied by the runtime (a check policy is checked here);
#   run_node(node, values, dims, scalars, cx)  the node's outputs as the runtime's arrays;
#   dims(array)                         an array's [C, H, W];
#   bounds(array)                       (min, max) of an array's elements, or None when it is empty;
#   chw(array)                          the array as a tensor {"data", "shape"} of canonical strings;
#   state(array)                        ([C, H, W], [values in CHW order]) of an array.


class AdapterBug(Exception):
    """The runtime rejected a graph an adapter built, or returned the wrong shape."""


def run_graph_decode(rt, graph, cx, inputs, scalars, state):
    """§4's run steps for one decode; the outputs (runtime arrays) or Refused."""
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
    # Step 4: the input policies, then the nodes on the runtime.
    values = {}
    for i in graph.inputs:
        t = graph.tensors[i.tensor]
        vals = raw[i.tensor]
        if t.policy == "check" and any(v < t.lo or v > t.hi for v in vals):
            raise Refused("field_range")
        if t.policy != "check" and any(v < I64[0] or v > I64[1] for v in vals):
            raise Unsupported("a clamp input's value passes int64")
        values[i.tensor] = rt.inputs(graph, cx, i.tensor, shapes[i.tensor], vals)
    for s in dims.values():
        too_large(s)
    for node in graph.nodes:
        got = rt.run_node(node, values, [dims[t] for t in node.ins], scalars, cx)
        for t, arr in zip(node.outs, got):
            if rt.dims(arr) != dims[t]:
                raise AdapterBug(f"node {node.index} ({node.op}): {rt.name} gave the shape {rt.dims(arr)}, not {dims[t]}")
            tt = graph.tensors[t]
            b = rt.bounds(arr)
            if tt.policy == "check" and b is not None and (b[0] < tt.lo or b[1] > tt.hi):
                raise Refused("field_range")
            values[t] = arr
    return [values[t] for t in graph.outputs]


def answer_graph_vector(rt, req, whg1):
    """The answer to one graph-vector request (docs/protocol.md) computed on `rt`, or the decline.
    `whg1` is the WHG1 reader module. Declines a request without `profiles` (the operator role)."""
    rid = req["id"]
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
                rt.support(node, cx)
            except Unsupported as e:
                why = str(e) if str(e).startswith(node.op + ":") else f"{node.op}: {e}"
                raise Unsupported(f"node {node.index}: {why}" if len(graph.nodes) > 1 else why) from None
        state, expects, ran = {}, [], False
        for ins, scalars in decodes:
            try:
                outs = run_graph_decode(rt, graph, cx, ins, scalars, state)
            except Refused as e:
                expects.append({"refuse": str(e)})
                continue
            ran = True
            expects.append({"outputs": [rt.chw(a) for a in outs]})
            for k, i in enumerate(graph.inputs):
                if i.kind == "state":
                    state[k] = rt.state(outs[i.src])
        if not ran:
            return not_supported(rid, f"every decode is refused before any operator runs: nothing for {rt.name} to compute")
    except Unsupported as e:
        return not_supported(rid, str(e))
    except AdapterBug as e:  # said as what failed: the runtime refusing a graph is not always the adapter's bug
        print(f"{rt.name} fill: {rid}: {e}", file=sys.stderr)
        return not_supported(rid, str(e))
    except whg1.Whg1Error as e:
        return not_supported(rid, f"adapter bug: the WHG1 reader refused a loadable graph ({e})")
    # The request's own inputs and scalars, echoed (they were checked canonical).
    decodes = [{"expect": e, "inputs": d["inputs"], "scalars": d["scalars"]}
               for d, e in zip(req["decodes"], expects)]
    return {"decodes": decodes, "graph": req["graph"], "id": rid, "load": "ok", "profiles": profiles}
