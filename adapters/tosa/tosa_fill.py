"""`fill` (docs/protocol.md) for graph and per-operator vectors, computed by Arm's TOSA
reference model where it can compute them exactly (docs/tosa.md).

For each request line it writes one canonical line: the filled vector, or
`{"id":…,"not_supported":"reason"}` when TOSA cannot compute it (the grader counts such a record
as not gradable). It is an operator implementation (integer-operators §1; docs/protocol.md,
"Roles"): graded with `--role operator`, it is given each vector's `profiles` and echoes them, and
is not sent the vectors refused at load step 8. It does not make load steps 1-7 itself: the
certificate that proves each TOSA type wide enough comes from `wai-checker certify`, and a graph
the certifier refuses (at steps 1-7, since step 8's refusals are not sent) is declined, so every
`load` it answers is "ok". Every decode's outputs come from TOSA. The run-time refusals of
integer-operators §4 that are checks on sizes and values (run steps 1-4) are made here, the values
checked being TOSA's.

A request that is not a request (not JSON, a missing member, a non-canonical integer) is reported
on stderr as `line N: <field>: <what>`; nothing is written for it and the exit status is 1.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import whg1  # noqa: E402 - the WHG1 reader written from §10, shared by the adapters
from protocol import (  # noqa: E402 - the fill protocol's side, shared by the adapters
    CAP, I64, Context, Refused, RequestError, Unsupported, canonical, certificate, decodes_of,
    integer, not_supported, parse, plan, serve, strings, tensor, too_large,
)

import lower  # noqa: E402
from tosa_graph import D, AdapterBug, Graph, identity  # noqa: E402

# --- one decode (§4 run steps) ----------------------------------------------------------------


def nhwc(shape, data):
    c, h, w = shape
    return np.array(data, dtype=np.int64).reshape(c, h, w).transpose(1, 2, 0)[None]


def chw(arr):
    a = arr[0].transpose(2, 0, 1)
    return {"data": strings(a), "shape": [str(d) for d in a.shape]}


def apply_policy(g, value, t):
    """§3: a clamp policy as TOSA MAXIMUM/MINIMUM; check is applied by the caller on the values."""
    if t.policy == "clamp":
        return lower.clamp(g, value, t.lo, t.hi)
    return value


def run_node(node, values, dims, scalars, cx):
    """One node on the reference model: its outputs (after clamp policies) as int64 NHWC."""
    g = Graph()
    ins = [g.input(values[t], D.INT64) for t in node.ins]
    if node.op == "fill":
        value = node.p["value"] if node.p["kind"] == "const" else scalars[node.p["value"]]
        outs = lower.build_fill(g, node, ins, cx, dims, value)
    else:
        outs = lower.BUILD[node.op](g, node, ins, cx, dims)
    for v, t in zip(outs, node.outs):
        identity(g, apply_policy(g, v, cx.graph.tensors[t]))
    return g.run(f"node {node.index} ({node.op})")


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
    # Step 4: the input policies, then the nodes on TOSA.
    values = {}
    for i in graph.inputs:
        t = graph.tensors[i.tensor]
        vals = raw[i.tensor]
        if t.policy == "check":
            if any(v < t.lo or v > t.hi for v in vals):
                raise Refused("field_range")
            values[i.tensor] = nhwc(shapes[i.tensor], vals)
        else:
            if any(v < I64[0] or v > I64[1] for v in vals):
                raise Unsupported("a clamp input's value passes INT64")
            g = Graph()
            identity(g, lower.clamp(g, g.input(nhwc(shapes[i.tensor], vals), D.INT64), t.lo, t.hi))
            values[i.tensor] = g.run(f"input {i.tensor} (clamp policy)")[0]
    for s in dims.values():
        too_large(s)
    for node in graph.nodes:
        got = run_node(node, values, [dims[t] for t in node.ins], scalars, cx)
        for t, arr in zip(node.outs, got):
            want = [1, dims[t][1], dims[t][2], dims[t][0]]
            if list(arr.shape) != want:
                raise AdapterBug(f"node {node.index} ({node.op}): TOSA gave the shape {list(arr.shape)}, not {want}")
            check(graph.tensors[t], arr)
            values[t] = arr
    return [values[t] for t in graph.outputs]


# --- one record -------------------------------------------------------------------------------



def answer(line, req):
    rid = req["id"]
    if "graph" not in req:
        if "bundle" in req:
            return not_supported(rid, "jpegai scale path: the entropy decodes (mans_decode) and the band lookups have no TOSA operators")
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
                    a = outs[i.src][0].transpose(2, 0, 1)
                    state[k] = (list(a.shape), [int(v) for v in a.reshape(-1)])
        if not ran:
            return not_supported(rid, "every decode is refused before any operator runs: nothing for TOSA to compute")
    except Unsupported as e:
        return not_supported(rid, str(e))
    except AdapterBug as e:
        print(f"tosa fill: {rid}: adapter bug: {e}", file=sys.stderr)
        return not_supported(rid, f"adapter bug: {e}")
    except whg1.Whg1Error as e:
        return not_supported(rid, f"adapter bug: the WHG1 reader refused a loadable graph ({e})")
    # The request's own inputs and scalars, echoed (they were checked canonical).
    decodes = [{"expect": e, "inputs": d["inputs"], "scalars": d["scalars"]}
               for d, e in zip(req["decodes"], expects)]
    return {"decodes": decodes, "graph": req["graph"], "id": rid, "load": "ok", "profiles": profiles}


if __name__ == "__main__":
    sys.exit(serve(answer))
