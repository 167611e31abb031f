"""DetessDequant's numeric records (seeds/detessdequant.md, "Numerical behavior"; docs/protocol.md)
computed by ONNX's `DequantizeLinear` (docs/onnx.md, "DetessDequant").

Each record's 256 INT8 values go through one `DequantizeLinear` (opset 21: `y = (x − x_zero_point)
· x_scale` in binary32): int8 `x` and zero point when the zero point fits int8 (the kernel a
quantised model uses), int32 when it does not. The BF16 output is that float32 result through ONNX
`Cast` to bfloat16 and back (the widening is exact), so the runtime's own narrowing is graded.
The seed's staged arithmetic rounds the zero point to binary32 and then the difference; ONNX defines
the difference of the integers. The two agree wherever `zero_point` and every `q − zero_point` are
binary32 integers (|·| ≤ 2^24); elsewhere the grade says which the runtime does
(docs/findings.md F4).
"""

import numpy as np
from onnx import TensorProto

from onnx_graph import Graph
from protocol import RequestError, integer

F32 = np.float32


def hex_bits(s, digits, field):
    if not isinstance(s, str) or len(s) != digits or s != s.lower():
        raise RequestError(field, f"{digits} lowercase hex digits")
    try:
        return int(s, 16)
    except ValueError:
        raise RequestError(field, f"{digits} lowercase hex digits") from None


def fill_numeric(req, backend):
    """The record's `expect`: f32 and bf16 bits of each q, as `DequantizeLinear` gives them."""
    inp = req.get("in")
    if not isinstance(inp, dict) or not isinstance(inp.get("q"), list):
        raise RequestError("in.q", "not an array")
    q = [integer(v, f"in.q[{i}]") for i, v in enumerate(inp["q"])]
    if any(not -128 <= v <= 127 for v in q):
        raise RequestError("in.q", "a value outside int8")
    zp = integer(inp.get("zero_point"), "in.zero_point")
    if not -(1 << 31) <= zp < 1 << 31:
        raise RequestError("in.zero_point", "outside int32")
    scale = np.array([hex_bits(inp.get("scale"), 8, "in.scale")], dtype=np.uint32).view(F32)[0]
    narrow = np.int8 if -128 <= zp <= 127 else np.int32
    g = Graph()
    x = g.input(np.array(q, dtype=narrow), onnx_type=narrow)
    y = g.op("DequantizeLinear", [x, g.const(scale, F32), g.const(zp, narrow)])
    g.output(y, F32)
    bf16 = g.op("Cast", [y], to=TensorProto.BFLOAT16)
    g.output(g.op("Cast", [bf16], to=TensorProto.FLOAT), F32)
    f32, wide = g.run(backend, "DequantizeLinear")
    f32_bits = f32.astype(F32).view(np.uint32).tolist()
    bf16_bits = (wide.astype(F32).view(np.uint32) >> 16).tolist()
    return {"bf16": [f"{b:04x}" for b in bf16_bits], "f32": [f"{b:08x}" for b in f32_bits]}
