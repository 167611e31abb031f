"""A small builder of one-node ONNX models over the `onnx` helper API, and their run on a backend
(docs/onnx.md): onnxruntime's CPU execution provider with default session options, or the ONNX
reference evaluator (`onnx.reference.ReferenceEvaluator`).

Every tensor between wai-ops nodes is an int64 numpy array in NCHW (`[1, C, H, W]`).
"""

import sys
from pathlib import Path

import numpy as np
import onnxruntime

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
from protocol import AdapterBug  # noqa: E402,F401 - a graph the backend rejects

onnxruntime.set_default_logger_severity(3)  # no warnings about unused initializers on stderr
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 21
IR_VERSION = 10

INT = {
    np.dtype(np.int8): (-(1 << 7), (1 << 7) - 1),
    np.dtype(np.uint8): (0, (1 << 8) - 1),
    np.dtype(np.int16): (-(1 << 15), (1 << 15) - 1),
    np.dtype(np.int32): (-(1 << 31), (1 << 31) - 1),
    np.dtype(np.int64): (-(1 << 63), (1 << 63) - 1),
    np.dtype(np.float64): (-(1 << 53), 1 << 53),  # every integer in it is exact
}


# onnxruntime's SessionOptions (`--option NAME=VALUE`, docs/onnx.md): an attribute of
# `onnxruntime.SessionOptions` (`graph_optimization_level=ORT_DISABLE_ALL`, `intra_op_num_threads=1`)
# or a session config entry (`session.x64quantprecision=1`).
SESSION_OPTIONS = {}


def session_options():
    import onnxruntime as ort
    so = ort.SessionOptions()
    for key, value in SESSION_OPTIONS.items():
        if "." in key:
            so.add_session_config_entry(key, value)
        elif key == "graph_optimization_level":
            so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, value)
        else:
            setattr(so, key, int(value))
    return so


def fits(lo, hi, dtype):
    a, b = INT[np.dtype(dtype)]
    return a <= lo and hi <= b


class Graph:
    """One ONNX graph: inputs fed as arrays (int64 unless said), constants as initializers, outputs
    of a declared type (int64 unless said)."""

    def __init__(self):
        self.nodes, self.inits, self.feeds, self.outputs = [], [], {}, []
        self.n = 0

    def name(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def input(self, array, onnx_type=np.int64):
        n = self.name("in")
        self.feeds[n] = np.ascontiguousarray(array, dtype=onnx_type)
        return n

    def const(self, values, dtype=np.int64, shape=None):
        a = np.array(values, dtype=dtype)
        if shape is not None:
            a = a.reshape(shape)
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(a, n))
        return n

    def op(self, kind, inputs, **attrs):
        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def output(self, name, dtype=np.int64):
        self.outputs.append((name, np.dtype(dtype)))

    def model(self):
        ins = [helper.make_tensor_value_info(n, onnx_type(a.dtype), a.shape) for n, a in self.feeds.items()]
        outs = [helper.make_tensor_value_info(n, onnx_type(t), None) for n, t in self.outputs]
        g = helper.make_graph(self.nodes, "node", ins, outs, initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="wai-ops adapters/onnx")
        m.ir_version = IR_VERSION
        return m

    def run(self, backend, what):
        m = self.model()
        try:
            if backend == "onnxruntime":
                import onnxruntime as ort
                s = ort.InferenceSession(m.SerializeToString(), session_options(),
                                         providers=["CPUExecutionProvider"])
                got = s.run(None, self.feeds)
            else:
                from onnx.reference import ReferenceEvaluator
                got = ReferenceEvaluator(m).run(None, self.feeds)
        except Exception as e:  # noqa: BLE001 - a rejected graph is the adapter's bug
            raise AdapterBug(f"{what}: {backend} failed: {type(e).__name__}: {str(e)[:300]}") from None
        out = []
        for a, (_, t) in zip(got, self.outputs):
            a = np.asarray(a)
            if a.dtype != t:
                raise AdapterBug(f"{what}: {backend} returned {a.dtype}, not {t}")
            out.append(a)
        return out


# --- helpers ----------------------------------------------------------------------------------


def onnx_type(dtype):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def i64(g, v):
    """A scalar int64 constant (broadcasts)."""
    return g.const(v, np.int64)


def cast(g, x, dtype):
    return g.op("Cast", [x], to=onnx_type(dtype))


def slice_(g, x, starts, ends, axes):
    return g.op("Slice", [x, g.const(starts), g.const(ends), g.const(axes)])


def reshape(g, x, shape):
    return g.op("Reshape", [x, g.const(shape)])


def transpose(g, x, perm):
    return g.op("Transpose", [x], perm=list(perm))
