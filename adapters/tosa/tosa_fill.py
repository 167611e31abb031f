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
    RequestError, answer_graph_vector, canonical, integer, not_supported, serve, strings, tensor,
)

import lower  # noqa: E402
from tosa_graph import D, Graph, identity  # noqa: E402

# --- the reference model as adapters/common's runtime --------------------------------------------


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


class Tosa:
    """The TOSA reference model as adapters/common's runtime (§4's run steps are
    `answer_graph_vector`'s); arrays are int64 NHWC."""

    name = "TOSA"

    def support(self, node, cx):
        lower.support(node, cx)

    def inputs(self, graph, cx, tensor, shape, values):
        t = graph.tensors[tensor]
        if t.policy == "check":
            return nhwc(shape, values)
        g = Graph()
        identity(g, lower.clamp(g, g.input(nhwc(shape, values), D.INT64), t.lo, t.hi))
        return g.run(f"input {tensor} (clamp policy)")[0]

    def run_node(self, node, values, dims, scalars, cx):
        return run_node(node, values, dims, scalars, cx)

    def dims(self, a):
        return [a.shape[3], a.shape[1], a.shape[2]]

    def bounds(self, a):
        return (int(a.min()), int(a.max())) if a.size else None

    def chw(self, a):
        return chw(a)

    def state(self, a):
        a = a[0].transpose(2, 0, 1)
        return list(a.shape), a.reshape(-1).tolist()


def answer(line, req):
    rid = req["id"]
    if "graph" not in req:
        if "bundle" in req:
            return not_supported(rid, "jpegai scale path: the entropy decodes (mans_decode) and the band lookups have no TOSA operators")
        return not_supported(rid, "not a graph vector")
    return answer_graph_vector(Tosa(), req, whg1)


if __name__ == "__main__":
    sys.exit(serve(answer))
