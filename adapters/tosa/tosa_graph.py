"""A small builder over `tosa_serializer` and one run of `tosa_reference_model`.

Every wai-ops node becomes one TOSA graph (docs/tosa.md): its input tensors are the graph's
placeholders, in NHWC (`[1, H, W, C]`), its parameters constants, its output the graph's output.
`run` returns the outputs as int64 arrays, or raises `AdapterBug` for any status but VALID: the
adapter only builds graphs it has shown to stay within TOSA's types, so UNPREDICTABLE or ERROR
means the adapter is wrong.
"""

import os

os.environ.setdefault("TOSA_MODEL_NO_BACKTRACE", "1")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import tosa_reference_model as refmodel  # noqa: E402
import tosa_serializer as ts  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
from protocol import AdapterBug  # noqa: E402,F401 - a graph the reference model rejects

D = ts.DType
NUMPY = {D.BOOL: np.bool_, D.INT8: np.int8, D.INT16: np.int16, D.INT32: np.int32, D.INT64: np.int64}
RANGE = {D.INT8: 8, D.INT16: 16, D.INT32: 32, D.INT48: 48, D.INT64: 64}


def fits(lo, hi, dtype):
    """Whether `[lo, hi]` lies within the signed range of `dtype`."""
    n = RANGE[dtype]
    return -(1 << (n - 1)) <= lo and hi <= (1 << (n - 1)) - 1


class Graph:
    """One TOSA graph under construction; `Value`s name its tensors."""

    def __init__(self):
        self.ser = ts.TosaSerializer("")
        self.feeds = []

    def input(self, array, dtype):
        """A placeholder fed with `array` (int64 values known to fit `dtype`)."""
        t = ts.TosaSerializerTensor(f"in{len(self.feeds)}", list(array.shape), dtype)
        self.ser.addInputTensor(t)
        self.feeds.append(np.asarray(array).astype(NUMPY[dtype]))
        return Value(t.name, list(array.shape), dtype)

    def const(self, values, dtype, shape=None):
        arr = np.asarray(values, dtype=np.int64)
        shape = list(arr.shape) if shape is None else list(shape)
        np_type = np.int64 if dtype == D.SHAPE else NUMPY[dtype]
        c = self.ser.addConst(shape, dtype, arr.reshape(shape).astype(np_type))
        return Value(c.name, shape, dtype)

    def shape(self, dims):
        return self.const(list(dims), D.SHAPE, [len(dims)])

    def op(self, op, inputs, shape, dtype, attr, output=False):
        """Adds `op` reading `inputs` (Values), writing one tensor of `shape` and `dtype`."""
        if output:
            t = self.ser.addOutput(list(shape), dtype)
        else:
            t = self.ser.addIntermediate(list(shape), dtype)
        self.ser.addOperator(op, [v.name for v in inputs], [t.name], attr)
        return Value(t.name, list(shape), dtype)

    def run(self, what):
        """Runs the graph; the outputs as int64 arrays."""
        try:
            outputs, status = refmodel.run(self.ser.serialize(), self.feeds)
        except ValueError as e:
            raise AdapterBug(f"{what}: the reference model rejected the graph ({e})") from e
        if status != refmodel.GraphStatus.TOSA_VALID:
            raise AdapterBug(f"{what}: the reference model returned {status.name}")
        return [np.asarray(o).astype(np.int64) for o in outputs]


class Value:
    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, shape, dtype


def attr(kind, *args):
    a = ts.TosaSerializerAttribute()
    getattr(a, kind + "Attribute")(*args)
    return a


# --- operators, each a thin wrapper naming TOSA's operands ------------------------------------


def cast(g, x, dtype, output=False):
    """CAST, exact for values that fit `dtype`; the reference model casts INT64 only to and from
    INT32, so INT64 <-> INT8/INT16 passes through INT32."""
    if x.dtype == dtype and not output:
        return x
    narrow = (D.INT8, D.INT16)
    if (x.dtype == D.INT64 and dtype in narrow) or (x.dtype in narrow and dtype == D.INT64):
        x = g.op(ts.Op.CAST, [x], x.shape, D.INT32, attr("Cast"))
    return g.op(ts.Op.CAST, [x], x.shape, dtype, attr("Cast"), output)


def binary(g, op, a, b, output=False, out_dtype=None):
    shape = [max(p, q) for p, q in zip(a.shape, b.shape)]
    kind = {ts.Op.ADD: "Add", ts.Op.SUB: "Sub", ts.Op.GREATER_EQUAL: "GreaterEqual"}[op]
    return g.op(op, [a, b], shape, out_dtype or a.dtype, attr(kind), output)


def minmax(g, op, a, b, output=False):
    kind = "Maximum" if op == ts.Op.MAXIMUM else "Minimum"
    return g.op(op, [a, b], a.shape, a.dtype, attr(kind, ts.NanPropagationMode.PROPAGATE), output)


def mul(g, a, b, shift=0, output=False):
    """TOSA MUL: int32 with a shift rounds half up (TOSA 1.0 §2.3 apply_scale); int64 shift 0."""
    s = g.const([shift], D.INT8, [1])
    shape = [max(p, q) for p, q in zip(a.shape, b.shape)]
    return g.op(ts.Op.MUL, [a, b, s], shape, a.dtype, attr("Mul"), output)


def shift_right(g, a, s, round_half_up, output=False):
    """ARITHMETIC_RIGHT_SHIFT: `round` false is R_floor, true is R_half_up (§2)."""
    return g.op(ts.Op.ARITHMETIC_RIGHT_SHIFT, [a, s], a.shape, a.dtype,
                attr("ArithmeticRightShift", bool(round_half_up)), output)


def reshape(g, x, shape, output=False):
    return g.op(ts.Op.RESHAPE, [x, g.shape(shape)], shape, x.dtype, attr("Reshape"), output)


def transpose(g, x, perm, output=False):
    shape = [x.shape[p] for p in perm]
    return g.op(ts.Op.TRANSPOSE, [x], shape, x.dtype, attr("Transpose", list(perm)), output)


def slice_(g, x, start, size, output=False):
    return g.op(ts.Op.SLICE, [x, g.shape(start), g.shape(size)], size, x.dtype, attr("Slice"), output)


def concat(g, xs, axis, output=False):
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return g.op(ts.Op.CONCAT, xs, shape, xs[0].dtype, attr("Concat", axis), output)


def tile(g, x, multiples, output=False):
    shape = [d * m for d, m in zip(x.shape, multiples)]
    return g.op(ts.Op.TILE, [x, g.shape(multiples)], shape, x.dtype, attr("Tile"), output)


def identity(g, x):
    return g.op(ts.Op.IDENTITY, [x], x.shape, x.dtype, attr("Identity"), True)
