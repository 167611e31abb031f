"""Reproductions of the observations in docs/onnx.md and docs/findings.md, on both backends.

    adapters/onnx/.venv/bin/python adapters/onnx/experiments.py

Each prints the exact wai-ops/1 value beside what each backend returned.
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx_graph import IR_VERSION, OPSET


def run(nodes, feeds, inits, out_type):
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()]
    g = helper.make_graph(nodes, "x", ins, [helper.make_tensor_value_info("y", out_type, None)],
                          initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = IR_VERSION
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    res = {}
    for name, f in (("onnxruntime", lambda: ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]),
                    ("reference", lambda: ReferenceEvaluator(m).run(None, feeds)[0])):
        try:
            res[name] = f().reshape(-1).tolist()
        except Exception as e:  # noqa: BLE001
            res[name] = f"error: {type(e).__name__}: {str(e)[:120]}"
    return res


def r_half_even(p, s):
    q, r, h = p >> s, p - ((p >> s) << s), 1 << (s - 1)
    return q + 1 if r > h or (r == h and q % 2) else q


def integer_div():
    p = np.array([-7, -5, -4, -1, 1, 5, 7], dtype=np.int64)
    got = run([helper.make_node("Div", ["x", "d"], ["y"])], {"x": p}, [("d", np.array(4, dtype=np.int64))], TensorProto.INT64)
    print("Div int64 by 4 of", p.tolist(), ": floor", (p // 4).tolist(), "| trunc", [int(v / 4) for v in p], "|", got)


def qlinearconv(n_terms, s, xs, ws, bias=0):
    """QLinearConv as a §5.2 conv with a half_even rq of shift s: a 1×1 kernel over n_terms input
    channels, scales x 1, w 1, y 2^s, zero points 0, int32 bias. Returns (exact, got)."""
    x = np.array(xs, dtype=np.int8).reshape(1, n_terms, 1, 1)
    w = np.array(ws, dtype=np.int8).reshape(1, n_terms, 1, 1)
    acc = int(np.dot(x.reshape(-1).astype(np.int64), w.reshape(-1).astype(np.int64))) + bias
    f32 = np.float32
    inits = [("xs", f32(1)), ("xz", np.int8(0)), ("w", w), ("ws", f32(1)), ("wz", np.int8(0)),
             ("ys", f32(2.0 ** s)), ("yz", np.int8(0)), ("b", np.array([bias], dtype=np.int32))]
    got = run([helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"])],
              {"x": x}, inits, TensorProto.INT8)
    return acc, max(-128, min(127, r_half_even(acc, s))), got


def main():
    int64_minmax()
    integer_div()
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
    main()
