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

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import whg1  # noqa: E402 - the WHG1 reader written from §10, shared by the adapters
from protocol import (  # noqa: E402 - the fill protocol's side, shared by the adapters
    RequestError, answer_graph_vector, canonical, form, integer, not_supported, serve, strings,
)

import onnx_lower as lower  # noqa: E402
from onnx_dequant import fill_numeric  # noqa: E402
from onnx_graph import SESSION_OPTIONS, Graph, session_options  # noqa: E402

BACKENDS = ("onnxruntime", "reference")

# --- the ONNX backend as adapters/common's runtime ---------------------------------------------


def nchw(shape, data):
    c, h, w = shape
    return np.array(data, dtype=np.int64).reshape(1, c, h, w)


def chw(arr):
    a = arr[0]
    return {"data": strings(a), "shape": [str(d) for d in a.shape]}


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
    return g.run(RUNTIME.name, f"node {node.index} ({node.op})")


class Onnx:
    """The ONNX backend as adapters/common's runtime (§4's run steps are `answer_graph_vector`'s)."""

    name = "onnxruntime"

    def support(self, node, cx):
        lower.support(node, cx)

    def inputs(self, graph, cx, tensor, shape, values):
        t = graph.tensors[tensor]
        if t.policy == "check":
            return nchw(shape, values)
        g = Graph()
        g.output(lower.clamp(g, g.input(nchw(shape, values)), t.lo, t.hi))
        return g.run(self.name, f"input {tensor} (clamp policy)")[0]

    def run_node(self, node, values, dims, scalars, cx):
        return run_node(node, values, dims, scalars, cx)

    def dims(self, a):
        return list(a.shape[1:])

    def bounds(self, a):
        return (int(a.min()), int(a.max())) if a.size else None

    def chw(self, a):
        return chw(a)

    def state(self, a):
        return list(a[0].shape), a[0].reshape(-1).tolist()


RUNTIME = Onnx()


def answer(line, req):
    rid = req["id"]
    kind = form(req)
    if kind == "graph vector":
        return answer_graph_vector(RUNTIME, req, whg1)
    if kind == "DetessDequant numeric":
        return {"expect": fill_numeric(req, RUNTIME.name), "id": rid, "in": req["in"]}
    why = {
        "DetessDequant call": "its MLA tiled layouts and output strides have no ONNX operators (only the numeric records are computed, by DequantizeLinear)",
        "jpegai scale path": "the entropy decodes (mans_decode) and the band lookups have no ONNX operators",
    }.get(kind, "not computed by ONNX operators here")
    return not_supported(rid, f"{kind or 'an unknown record form'}: {why}")


USAGE = "usage: adapters/onnx/fill [--cpu MODEL] --backend onnxruntime|reference [--option NAME=VALUE]…"


def main(argv):
    if len(argv) < 2 or argv[0] != "--backend" or argv[1] not in BACKENDS:
        print(USAGE, file=sys.stderr)
        return 2
    RUNTIME.name, rest = argv[1], argv[2:]
    while rest:
        if len(rest) < 2 or rest[0] != "--option" or "=" not in rest[1] or RUNTIME.name != "onnxruntime":
            print(USAGE + " (--option: onnxruntime's session options only)", file=sys.stderr)
            return 2
        key, value = rest[1].split("=", 1)
        SESSION_OPTIONS[key] = value
        rest = rest[2:]
    try:
        session_options()
    except (AttributeError, TypeError, ValueError) as e:
        print(f"adapters/onnx/fill: a bad --option: {e}", file=sys.stderr)
        return 2
    return serve(answer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
