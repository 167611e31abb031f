"""Reproductions of the observations in docs/onnx.md and docs/findings.md, on both backends.

    adapters/onnx/.venv/bin/python adapters/onnx/experiments.py [NAME…]
    qemu-x86_64 -cpu Haswell adapters/onnx/.venv/bin/python adapters/onnx/experiments.py cpu_features

Each prints the exact wai-ops/1 value beside what each backend returned.
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx_graph import IR_VERSION, OPSET  # (and adapters/common on the path)
from exact import r_half_even  # noqa: E402


def run(nodes, feeds, inits, out_type, config=None):
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()]
    g = helper.make_graph(nodes, "x", ins, [helper.make_tensor_value_info("y", out_type, None)],
                          initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = IR_VERSION
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    so = ort.SessionOptions()
    for k, v in (config or {}).items():
        so.add_session_config_entry(k, v)
    res = {}
    for name, f in (("onnxruntime", lambda: ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]),
                    ("reference", lambda: ReferenceEvaluator(m).run(None, feeds)[0])):
        try:
            res[name] = f().reshape(-1).tolist()
        except Exception as e:  # noqa: BLE001
            res[name] = f"error: {type(e).__name__}: {str(e)[:120]}"
    return res


def integer_div():
    p = np.array([-7, -5, -4, -1, 1, 5, 7], dtype=np.int64)
    got = run([helper.make_node("Div", ["x", "d"], ["y"])], {"x": p}, [("d", np.array(4, dtype=np.int64))], TensorProto.INT64)
    print("Div int64 by 4 of", p.tolist(), ": floor", (p // 4).tolist(), "| trunc", [int(v / 4) for v in p], "|", got)


def qlinearconv(n_terms, s, xs, ws, bias=0, config=None):
    """QLinearConv as a §5.2 conv with a half_even rq of shift s: a 1×1 kernel over n_terms input
    channels, scales x 1, w 1, y 2^s, zero points 0, int32 bias. Returns (exact, got)."""
    x = np.array(xs, dtype=np.int8).reshape(1, n_terms, 1, 1)
    w = np.array(ws, dtype=np.int8).reshape(1, n_terms, 1, 1)
    acc = int(np.dot(x.reshape(-1).astype(np.int64), w.reshape(-1).astype(np.int64))) + bias
    f32 = np.float32
    inits = [("xs", f32(1)), ("xz", np.int8(0)), ("w", w), ("ws", f32(1)), ("wz", np.int8(0)),
             ("ys", f32(2.0 ** s)), ("yz", np.int8(0)), ("b", np.array([bias], dtype=np.int32))]
    got = run([helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"])],
              {"x": x}, inits, TensorProto.INT8, config)
    return acc, max(-128, min(127, r_half_even(acc, s))), got


def x64quantprecision():
    """session.x64quantprecision = 1 against the defaults: ConvInteger and MatMulInteger exact either
    way on runs of extreme int8/uint8 activations; QLinearConv with int8 activations not loadable."""
    prec = {"session.x64quantprecision": "1"}
    for op in ("ConvInteger", "MatMulInteger"):
        for xdt, xv in ((np.int8, 127), (np.int8, -128), (np.uint8, 255)):
            for n in (2, 8):
                shape = (1, n, 1, 1) if op == "ConvInteger" else (1, n)
                x = np.full(shape, xv, dtype=xdt)
                w = np.full((1, n, 1, 1) if op == "ConvInteger" else (n, 1), 127, dtype=np.int8)
                exact = n * xv * 127
                got = [run([helper.make_node(op, ["x", "w"], ["y"])], {"x": x}, [("w", w)], TensorProto.INT32, c)
                       for c in (None, prec)]
                print(f"{op} {np.dtype(xdt).name} {n} × ({xv}·127): exact {exact} | default {got[0]} | x64quantprecision {got[1]}")
    for w in (64, -64, 65, -65, 127):  # the rewrite is made when a weight's magnitude passes 64
        print(f"QLinearConv int8, weight {w}, x64quantprecision:", qlinearconv(1, 8, [1], [w], config=prec))


def f32(v):
    return np.float32(v)


def dequantize():
    """DequantizeLinear with an int32 zero point against the seed's staged binary32 arithmetic
    (fl(fl(q) − fl(zp)) · s, each step rounded): which rounding each backend does."""
    third = np.array([0x3EAAAAAB], dtype=np.uint32).view(np.float32)[0]
    cases = [(5, 16777217, 1.0), (-128, 2147483647, 1.0), (127, -2147483648, 1.0),
             (-123, 16777216, third), (2, -16777215, third)]
    for q, zp, s in cases:
        s = f32(s)
        staged = f32(f32(f32(q) - f32(zp)) * s)
        integer_first = f32(f32(np.int64(q - zp)) * s)
        wrapped = f32(np.array([q - zp], dtype=np.int64).astype(np.int32).astype(np.float32)[0] * s)
        once = f32(np.float64(q - zp) * np.float64(s))
        got = run([helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])], {"x": np.array([q], dtype=np.int32)},
                  [("s", s), ("z", np.array(zp, dtype=np.int32))], TensorProto.FLOAT)
        print(f"DequantizeLinear q {q}, zp {zp}, scale {s}: seed (staged) {staged} | integer difference, then "
              f"staged {integer_first} | int32-wrapped difference {wrapped} | one rounding of the exact product {once} | {got}")


def cpu_features():
    """Runs of extreme 8-bit products through MatMulInteger and ConvInteger: exact on a CPU with VNNI;
    run under `qemu-x86_64 -cpu Haswell` (AVX2, no VNNI) for F6's saturating pairs."""
    for op in ("MatMulInteger", "ConvInteger"):
        for xdt, xv, wv in ((np.int8, 127, 127), (np.int8, -128, -128), (np.uint8, 255, 127), (np.uint8, 255, -128)):
            for n in (2, 8, 16):
                shape = (1, n, 1, 1) if op == "ConvInteger" else (1, n)
                wshape = (1, n, 1, 1) if op == "ConvInteger" else (n, 1)
                got = run([helper.make_node(op, ["x", "w"], ["y"])], {"x": np.full(shape, xv, dtype=xdt)},
                          [("w", np.full(wshape, wv, dtype=np.int8))], TensorProto.INT32)
                print(f"{op} {np.dtype(xdt).name} {n} × ({xv}·{wv}): exact {n * xv * wv} | {got}")


def main(names):
    for name in names or ["dequantize", "x64quantprecision", "cpu_features", "int64_minmax", "integer_div", "qlinearconv_cases"]:
        globals()[name]()


def qlinearconv_cases():
    # acc = 2^24 + 2^17 + 1 (> 2^24: not a float32), s = 18: exact 65, float32(acc) = 2^24 + 2^17 -> 64.5 -> 64
    n = 1041
    xs, ws = [127] * n, [127] * n  # 1041 · 16129 = 16790289
    acc0 = n * 127 * 127
    bias = (1 << 24) + (1 << 17) + 1 - acc0
    print("QLinearConv (acc, exact half_even, backends):", qlinearconv(n, 18, xs, ws, bias))
    print("QLinearConv tie below 2^24 (acc = 5·2^17 + 2^16, s = 17 -> 5.5 -> 6):", qlinearconv(1, 17, [1], [1], 5 * (1 << 17) + (1 << 16) - 1))
    print("QLinearConv tie, acc = 3 (s = 1 -> 1.5 -> 2):", qlinearconv(1, 1, [1], [3]))
    print("QLinearConv tie, acc = -5 (s = 1 -> -2.5 -> -2):", qlinearconv(1, 1, [1], [-5]))



def int64_minmax():
    """onnxruntime's int64 Max/Min/Clip against a constant: the exact results beside the backends'."""
    cases = [("Max", [0, 0], 1 << 31), ("Max", [0], 1 << 31), ("Max", [0, 0, 0], 1 << 31),
             ("Max", [5, 5], (1 << 31) + 1), ("Max", [0, 0], 1 << 32), ("Max", [-9, 0], 1 << 31),
             ("Max", [(1 << 31), (1 << 31)], 0), ("Min", [0, 0], (1 << 31) + 5),
             ("Min", [(1 << 32) + 1, (1 << 32) + 1], (1 << 32) + (1 << 31)),
             ("Max", [-(1 << 31) - 1] * 2, -1), ("Max", [3 << 31] * 2, 1 << 31)]
    for op, xs, c in cases:
        x = np.array(xs, dtype=np.int64)
        got = run([helper.make_node(op, ["x", "c"], ["y"])], {"x": x}, [("c", np.array(c, dtype=np.int64))], TensorProto.INT64)
        f = max if op == "Max" else min
        print(f"{op}({xs}, {c}): exact {[f(v, c) for v in xs]} | {got}")
    x = np.zeros(4, dtype=np.int64)
    got = run([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], {"x": x},
              [("lo", np.array(1 << 31, dtype=np.int64)), ("hi", np.array((1 << 31) + 5, dtype=np.int64))], TensorProto.INT64)
    print(f"Clip([0]*4, 2^31, 2^31 + 5): exact {[1 << 31] * 4} | {got}")
    a, b = np.array([0, 0], dtype=np.int64), np.array([1 << 31, 1 << 31], dtype=np.int64)
    got = run([helper.make_node("Max", ["a", "b"], ["y"])], {"a": a, "b": b}, [], TensorProto.INT64)
    print(f"Max of two inputs [0, 0], [2^31, 2^31]: exact {[1 << 31] * 2} | {got}")


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
