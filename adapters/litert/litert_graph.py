"""A small builder of one-node LiteRT (TFLite) models, written with the flatbuffer schema module the
`ai-edge-litert` wheel ships (`ai_edge_litert.schema_py_generated`, its object API), and their run
on the wheel's interpreter with one of three op resolvers (docs/litert.md):

- `auto`: `OpResolverType.AUTO`, the interpreter's default: the built-in kernels with the default
  delegate (XNNPACK) applied to the nodes it takes. `OpResolverType.BUILTIN` is the same resolver
  (`interpreter.py` maps both to id 1), so it is not a configuration of its own;
- `builtin`: `OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES` (id 3), the optimised built-in kernels
  with no delegate;
- `ref`: `OpResolverType.BUILTIN_REF` (id 2), the reference kernels.

Every tensor between wai-ops nodes is an int64 numpy array `[1, H, W, C]` (NHWC, TFLite's layout).
"""

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S
from ai_edge_litert.interpreter import Interpreter, OpResolverType

B = S.BuiltinOperator
O = S.BuiltinOptions

RESOLVERS = {
    "auto": OpResolverType.AUTO,
    "builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    "ref": OpResolverType.BUILTIN_REF,
}

TYPES = {
    np.dtype(np.int8): S.TensorType.INT8,
    np.dtype(np.int16): S.TensorType.INT16,
    np.dtype(np.int32): S.TensorType.INT32,
    np.dtype(np.int64): S.TensorType.INT64,
    np.dtype(np.float32): S.TensorType.FLOAT32,
    np.dtype(np.bool_): S.TensorType.BOOL,
}

INT = {
    np.dtype(np.int8): (-(1 << 7), (1 << 7) - 1),
    np.dtype(np.int16): (-(1 << 15), (1 << 15) - 1),
    np.dtype(np.int32): (-(1 << 31), (1 << 31) - 1),
    np.dtype(np.int64): (-(1 << 63), (1 << 63) - 1),
}


def fits(lo, hi, dtype):
    a, b = INT[np.dtype(dtype)]
    return a <= lo and hi <= b


class AdapterBug(Exception):
    """The interpreter rejected a model this adapter built, or returned the wrong shape."""


class Model:
    """One TFLite model of one subgraph: inputs fed as numpy arrays, constants as buffers."""

    def __init__(self):
        self.tensors, self.buffers, self.ops, self.codes = [], [S.BufferT()], [], []
        self.inputs, self.outputs, self.feeds = [], [], []

    def tensor(self, shape, dtype, data=None, quant=None):
        """A tensor; `quant` is (scales, zero points, quantized dimension) or None."""
        t = S.TensorT()
        t.shape = [int(d) for d in shape]
        t.type = TYPES[np.dtype(dtype)]
        t.name = f"t{len(self.tensors)}".encode()
        t.buffer = 0
        if data is not None:
            a = np.ascontiguousarray(np.asarray(data, dtype=dtype).reshape(t.shape))
            b = S.BufferT()
            b.data = a.view(np.uint8).reshape(-1)
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if quant is not None:
            q = S.QuantizationParametersT()
            q.scale = [float(s) for s in quant[0]]
            q.zeroPoint = [int(z) for z in quant[1]]
            q.quantizedDimension = quant[2]
            t.quantization = q
        self.tensors.append(t)
        return len(self.tensors) - 1

    def input(self, array, quant=None):
        a = np.ascontiguousarray(array)
        n = self.tensor(a.shape, a.dtype, quant=quant)
        self.inputs.append(n)
        self.feeds.append(a)
        return n

    def const(self, values, dtype=np.int64, shape=None, quant=None):
        a = np.asarray(values, dtype=dtype)
        if shape is not None:
            a = a.reshape(shape)
        return self.tensor(a.shape, dtype, data=a, quant=quant)

    def op(self, code, inputs, out_shape, out_dtype, options=None, quant=None):
        """Adds `code` on `inputs`; returns its one output tensor. `options` is an options object
        of the schema (its union type is found by name)."""
        out = self.tensor(out_shape, out_dtype, quant=quant)
        self.op_n(code, inputs, [out], options)
        return out

    def op_n(self, code, inputs, outputs, options=None):
        known = [c.builtinCode for c in self.codes]
        if code not in known:
            c = S.OperatorCodeT()
            c.builtinCode = code
            c.deprecatedBuiltinCode = min(code, B.PLACEHOLDER_FOR_GREATER_OP_CODES)
            c.version = 1
            self.codes.append(c)
            known.append(code)
        o = S.OperatorT()
        o.opcodeIndex = known.index(code)
        o.inputs = list(inputs)
        o.outputs = list(outputs)
        if options is not None:
            o.builtinOptionsType = getattr(O, type(options).__name__[:-1])
            o.builtinOptions = options
        self.ops.append(o)

    def shape(self, t):
        return list(self.tensors[t].shape)

    def output(self, t):
        self.outputs.append(t)

    def serialize(self):
        g = S.SubGraphT()
        g.tensors, g.operators, g.inputs, g.outputs, g.name = self.tensors, self.ops, self.inputs, self.outputs, b"main"
        m = S.ModelT()
        m.version, m.operatorCodes, m.subgraphs, m.buffers = 3, self.codes, [g], self.buffers
        m.description = b"wai-ops adapters/litert"
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def run(self, resolver, what, delegated=()):
        """Runs the model; its outputs as int64 numpy arrays. Under `auto`, every operator named in
        `delegated` must have been taken by the delegate (else Unsupported: its kernel is another)."""
        from protocol import Unsupported  # noqa: PLC0415 - adapters/common is on the path
        try:
            it = Interpreter(model_content=self.serialize(), experimental_op_resolver_type=RESOLVERS[resolver], num_threads=1)
            it.allocate_tensors()
        except Exception as e:  # noqa: BLE001 - a rejected model is the adapter's bug
            raise AdapterBug(f"{what}: LiteRT rejected the model: {type(e).__name__}: {str(e)[:300]}") from None
        if resolver == "auto" and delegated:
            # A delegated node stays listed beside the DELEGATE node that replaced it; its output
            # is then one of the DELEGATE node's (each quantised node here feeds a CAST to int64,
            # which XNNPACK does not take, so its output leaves the delegated partition).
            ops = it._get_ops_details()  # noqa: SLF001
            taken = {int(t) for d in ops if d["op_name"] == "DELEGATE" for t in d["outputs"]}
            left = {d["op_name"] for d in ops if d["op_name"] in delegated and not {int(t) for t in d["outputs"]} <= taken}
            if left:
                raise Unsupported(f"XNNPACK did not take {', '.join(sorted(left))}: the mapping's exactness rests on its fp32 requantisation")
        try:
            for d, a in zip(it.get_input_details(), self.feeds):
                it.set_tensor(d["index"], a)
            it.invoke()
            got = [it.get_tensor(d["index"]) for d in it.get_output_details()]
        except Exception as e:  # noqa: BLE001
            raise AdapterBug(f"{what}: LiteRT failed: {type(e).__name__}: {str(e)[:300]}") from None
        return [np.asarray(a).astype(np.int64) for a in got]


# --- helpers ----------------------------------------------------------------------------------


def i32(m, values, shape=None):
    return m.const(values, np.int32, shape)


def cast(m, x, dtype):
    return m.op(B.CAST, [x], m.shape(x), dtype)


def reshape(m, x, shape, dtype=np.int64):
    o = S.ReshapeOptionsT()
    o.newShape = list(shape)
    return m.op(B.RESHAPE, [x, i32(m, shape)], shape, dtype, o)


def transpose(m, x, perm, dtype=np.int64):
    shape = [m.shape(x)[p] for p in perm]
    return m.op(B.TRANSPOSE, [x, i32(m, perm)], shape, dtype, S.TransposeOptionsT())


def slice_(m, x, begin, size, dtype=np.int64):
    return m.op(B.SLICE, [x, i32(m, begin), i32(m, size)], size, dtype, S.SliceOptionsT())


def concat(m, xs, axis, dtype=np.int64):
    shape = m.shape(xs[0])
    shape[axis] = sum(m.shape(x)[axis] for x in xs)
    o = S.ConcatenationOptionsT()
    o.axis = axis
    return m.op(B.CONCATENATION, xs, shape, dtype, o)


def gather(m, x, indices, axis, dtype=np.int64):
    shape = m.shape(x)
    shape[axis] = len(indices)
    o = S.GatherOptionsT()
    o.axis = axis
    return m.op(B.GATHER, [x, m.const(indices, np.int32)], shape, dtype, o)


def binary(m, code, a, b, dtype=np.int64):
    """An element-wise operator of two int64 operands (b may broadcast against a)."""
    opts = {B.ADD: S.AddOptionsT, B.SUB: S.SubOptionsT, B.MUL: S.MulOptionsT}
    o = opts[code]() if code in opts else None
    return m.op(code, [a, b], m.shape(a), dtype, o)


def clamp(m, x, lo, hi):
    """clamp(v, lo, hi) as MAXIMUM then MINIMUM against int64 constants."""
    x = binary(m, B.MAXIMUM, x, m.const([lo]))
    return binary(m, B.MINIMUM, x, m.const([hi]))
