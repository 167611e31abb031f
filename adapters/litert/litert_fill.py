"""`fill` (docs/protocol.md) computed by LiteRT (Google's TFLite runtime, PyPI `ai-edge-litert`):
one TFLite model per node, built with the wheel's own flatbuffer schema module and run on its
interpreter with the op resolver chosen by `--resolver auto|builtin|ref` (docs/litert.md).

Graph and per-operator vectors: an operator implementation (integer-operators §1; docs/protocol.md,
"Roles"), built like the ONNX and TOSA adapters: the certificate that proves each TFLite type wide
enough comes from `wai-checker certify`, a graph the certifier refuses is declined, every `load` it
answers is "ok", and every decode's outputs come from the interpreter. §4's run steps are
adapters/common/protocol.py's.

DetessDequant numeric records (seeds/detessdequant.md; docs/protocol.md): LiteRT's DEQUANTIZE (INT8
→ FLOAT32) where TFLite's quantisation spec defines its result to be the seed's (docs/litert.md);
the BF16 pattern is D1's narrowing of that binary32 result. Whole calls are declined.

Every other record form is declined with its reason.
"""

import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import whg1  # noqa: E402 - the WHG1 reader written from §10, shared by the adapters
from protocol import (  # noqa: E402 - the fill protocol's side, shared by the adapters
    AdapterBug, RequestError, Unsupported, answer_graph_vector, form, integer, not_supported, serve,
)

import litert_graph  # noqa: E402
import litert_lower as lower  # noqa: E402
from litert_graph import B, Model, clamp  # noqa: E402

RESOLVER = "auto"


# --- graph vectors ----------------------------------------------------------------------------


class LiteRT:
    """The runtime side of adapters/common's run steps: int64 NHWC numpy arrays."""

    name = "LiteRT"

    def support(self, node, cx):
        lower.support(node, cx)

    def inputs(self, graph, cx, tensor, shape, values):
        c, h, w = shape
        a = np.array(values, dtype=np.int64).reshape(c, h, w).transpose(1, 2, 0)[None]
        t = graph.tensors[tensor]
        if t.policy != "clamp":
            return np.ascontiguousarray(a)
        m = Model()
        m.output(clamp(m, m.input(a), t.lo, t.hi))
        return self.run(m, f"input {tensor} (clamp policy)")[0]

    def run(self, m, what, delegated=()):
        try:
            return m.run(RESOLVER, what, delegated)
        except litert_graph.AdapterBug as e:
            raise AdapterBug(str(e)) from None

    def run_node(self, node, values, dims, scalars, cx):
        """One node as one model: its outputs (after clamp policies) as int64 NHWC arrays."""
        m = Model()
        ins = [m.input(values[t]) for t in node.ins]
        outs = lower.BUILD[node.op](m, node, ins, cx, dims, scalars)
        for v, t in zip(outs, node.outs):
            t = cx.graph.tensors[t]
            m.output(clamp(m, v, t.lo, t.hi) if t.policy == "clamp" else v)
        quantised = {"CONV_2D", "DEPTHWISE_CONV_2D"} if getattr(node, "plan", (None,))[0] == "xnnpack" else ()
        return self.run(m, f"node {node.index} ({node.op})", quantised)

    def dims(self, a):
        return [int(a.shape[3]), int(a.shape[1]), int(a.shape[2])]

    def bounds(self, a):
        return (int(a.min()), int(a.max())) if a.size else None

    def chw(self, a):
        x = a[0].transpose(2, 0, 1)
        return {"data": [str(int(v)) for v in x.reshape(-1)], "shape": [str(d) for d in x.shape]}

    def state(self, a):
        x = a[0].transpose(2, 0, 1)
        return list(x.shape), [int(v) for v in x.reshape(-1)]


# --- DetessDequant numeric records: DEQUANTIZE ------------------------------------------------


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def bf16(bits):
    """D1's narrowing of a binary32 pattern to BF16 (round to nearest even on the bits)."""
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFFFFFF) >> 16


def numeric_support(q, scale_bits, zp):
    """None when DEQUANTIZE's result is defined to be the seed's; else the reason it is not."""
    if not -128 <= zp <= 127:
        return (f"zero point {zp} outside int8: TFLite's int8 quantisation spec takes zero points in "
                "[-128, 127] (and LiteRT's DEQUANTIZE subtracts the zero point in int32, exactly, where "
                "the seed rounds it to binary32 first)")
    if RESOLVER == "auto" and (scale_bits >> 23) & 0xFF == 0:
        return ("a subnormal scale: under the default resolver the XNNPACK delegate takes DEQUANTIZE and then "
                "fails to prepare it (\"unsupported scale value\"), so the model does not run")
    return None


def dequantize(q, scale_bits, zp):
    """DEQUANTIZE of the int8 values q with (scale, zero point): the binary32 results' bits."""
    scale = struct.unpack("<f", struct.pack("<I", scale_bits))[0]
    m = Model()
    x = m.input(np.array(q, dtype=np.int8).reshape(1, len(q)), quant=([scale], [zp], 0))
    m.output(m.op(B.DEQUANTIZE, [x], [1, len(q)], np.float32))
    try:
        it = litert_graph.Interpreter(model_content=m.serialize(),
                                      experimental_op_resolver_type=litert_graph.RESOLVERS[RESOLVER], num_threads=1)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], m.feeds[0])
        it.invoke()
        out = it.get_tensor(it.get_output_details()[0]["index"])
    except Exception as e:  # noqa: BLE001
        raise AdapterBug(f"DEQUANTIZE: LiteRT failed: {type(e).__name__}: {str(e)[:300]}") from None
    if out.dtype != np.float32 or out.size != len(q):
        raise AdapterBug(f"DEQUANTIZE gave {out.dtype} {out.shape}")
    return [int(b) for b in out.reshape(-1).view(np.uint32)]


def answer_numeric(req):
    rid = req["id"]
    i = req.get("in")
    if not isinstance(i, dict) or set(i) != {"q", "scale", "zero_point"} or not isinstance(i["q"], list):
        raise RequestError("in", "a numeric record's in is {\"q\", \"scale\", \"zero_point\"}")
    q = [integer(v, f"in.q[{k}]") for k, v in enumerate(i["q"])]
    if any(not -128 <= v <= 127 for v in q):
        raise RequestError("in.q", "a value outside -128..127")
    s = i["scale"]
    if not isinstance(s, str) or len(s) != 8 or any(ch not in "0123456789abcdef" for ch in s):
        raise RequestError("in.scale", "not 8 lowercase hex digits")
    scale = int(s, 16)
    zp = integer(i["zero_point"], "in.zero_point")
    why = numeric_support(q, scale, zp)
    if why:
        return not_supported(rid, why)
    if not q:
        return not_supported(rid, "no values: nothing for DEQUANTIZE to compute")
    try:
        bits = dequantize(q, scale, zp)
    except AdapterBug as e:
        print(f"litert fill: {rid}: adapter bug: {e}", file=sys.stderr)
        return not_supported(rid, f"adapter bug: {e}")
    return {"expect": {"bf16": [f"{bf16(b):04x}" for b in bits], "f32": [f"{b:08x}" for b in bits]},
            "id": rid, "in": req["in"]}


# --- one record -------------------------------------------------------------------------------


def answer(line, req):
    rid = req["id"]
    kind = form(req)
    if kind == "graph vector":
        return answer_graph_vector(LiteRT(), req, whg1)
    if kind == "DetessDequant numeric":
        return answer_numeric(req)
    why = {
        "DetessDequant call": "MLA-tiled layouts, buffers and the call's checks are the kernel library's, not a LiteRT operator's (only the numeric core maps, to DEQUANTIZE)",
        "jpegai scale path": "the entropy decodes (mans_decode) and the band lookups have no TFLite operators",
    }.get(kind, "not a graph vector or a DetessDequant numeric record")
    return not_supported(rid, f"{kind or 'an unknown record form'}: {why}")


def main(argv):
    global RESOLVER
    if len(argv) != 2 or argv[0] != "--resolver" or argv[1] not in litert_graph.RESOLVERS:
        print("usage: adapters/litert/fill --resolver auto|builtin|ref", file=sys.stderr)
        return 2
    RESOLVER = lower.RESOLVER = argv[1]
    return serve(answer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
