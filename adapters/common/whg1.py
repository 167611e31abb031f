"""A reader of WHG1 graphs (integer-operators §10), written from the text alone.

It decodes the header, the tables and every operator's parameters (§10.4) into plain Python
values. It checks what it needs to decode the bytes safely (lengths, counts, enumerations) and
raises `Whg1Error` otherwise; the load checks of §10.5 are not this reader's job (the adapter
answers only graphs whose load the bounds pass accepted).
"""

import struct

OPCODES = {
    0x01: "conv", 0x02: "rescale", 0x03: "chscale", 0x04: "lut16", 0x05: "add", 0x06: "concat",
    0x07: "chunk_add", 0x08: "split", 0x09: "pixel_shuffle", 0x0A: "pixel_unshuffle",
    0x0B: "clamp", 0x0C: "relu", 0x0D: "leaky", 0x0E: "pad_rep", 0x0F: "crop_to", 0x10: "mul",
    0x11: "conv_transpose", 0x12: "igdn", 0x13: "abs", 0x14: "crop", 0x15: "subpos_split",
    0x16: "subpos_merge", 0x17: "fill", 0x18: "layernorm_c", 0x19: "l2norm", 0x1A: "softmax",
    0x1B: "sigmoid", 0x1C: "elu", 0x1D: "gram", 0x1E: "apply",
}
ROUND = {0: "floor", 1: "half_up", 2: "half_even"}
POLICY = {0: "derived", 1: "clamp", 2: "check"}


class Whg1Error(Exception):
    pass


class Reader:
    def __init__(self, data, at=0, end=None):
        self.data = data
        self.at = at
        self.end = len(data) if end is None else end

    def take(self, n):
        if n < 0 or self.at + n > self.end:
            raise Whg1Error(f"truncated at byte {self.at} (wanted {n} more)")
        b = self.data[self.at:self.at + n]
        self.at += n
        return b

    def u8(self):
        return self.take(1)[0]

    def i8(self):
        return struct.unpack("<b", self.take(1))[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def i64(self):
        return struct.unpack("<q", self.take(8))[0]

    def int(self, nbytes):
        if nbytes not in (1, 2, 4, 8):
            raise Whg1Error(f"an integer width of {nbytes} bytes")
        return int.from_bytes(self.take(nbytes), "little", signed=True)

    def ints(self, nbytes, count):
        return [self.int(nbytes) for _ in range(count)]


class Tensor:
    def __init__(self, index, channels, exponent, policy, lo, hi):
        self.index, self.channels, self.exponent = index, channels, exponent
        self.policy, self.lo, self.hi = policy, lo, hi


class Input:
    def __init__(self, tensor, max_h, max_w, kind, src, init):
        self.tensor, self.max_h, self.max_w = tensor, max_h, max_w
        self.kind, self.src, self.init = kind, src, init


class Rq:
    """§5.1 / §10.4's RQ block, expanded to one value per channel."""

    def __init__(self, rnd, bias_place, mult, shift, bias):
        self.round = rnd  # "floor" | "half_up" | "half_even"
        self.bias_place = bias_place  # None | "pre" | "post"
        self.mult = mult  # [C] (1 where absent)
        self.mult_absent = False
        self.shift = shift  # [C]
        self.bias = bias  # [C] (0 where absent)


class Node:
    def __init__(self, index, op, ins, outs, params):
        self.index, self.op, self.ins, self.outs, self.p = index, op, ins, outs, params


class Graph:
    pass


def read_rq(r, channels):
    rnd = r.u8()
    bias = r.u8()
    m_kind = r.u8()
    s_kind = r.u8()
    m_bytes = r.u8()
    b_bytes = r.u8()
    r.u16()
    if rnd not in ROUND or bias not in (0, 1, 2) or m_kind not in (0, 1, 2) or s_kind not in (1, 2):
        raise Whg1Error("RQ: an enumeration out of range")
    if m_kind == 0:
        mult = [1] * channels
    else:
        vals = r.ints(m_bytes, 1 if m_kind == 1 else channels)
        mult = vals * channels if m_kind == 1 else vals
    shifts = [r.u8() for _ in range(1 if s_kind == 1 else channels)]
    shift = shifts * channels if s_kind == 1 else shifts
    b = r.ints(b_bytes, channels) if bias != 0 else [0] * channels
    rq = Rq(ROUND[rnd], {0: None, 1: "pre", 2: "post"}[bias], mult, shift, b)
    rq.mult_absent = m_kind == 0
    return rq


def read_params(op, r, cin, cout_tensor):
    """The parameters of §10.4; `cin` is the first input's channel count."""
    p = {}
    if op == "conv":
        (p["cout"], p["kh"], p["kw"], p["sh"], p["sw"], p["ph"], p["pw"], p["groups"]) = [r.u32() for _ in range(8)]
        wb = r.u8()
        r.take(3)
        p["rq"] = read_rq(r, p["cout"])
        if p["groups"] == 0 or cin % p["groups"]:
            raise Whg1Error("conv: groups")
        n = p["cout"] * (cin // p["groups"]) * p["kh"] * p["kw"]
        p["w"] = r.ints(wb, n)  # [cout][cin/groups][kh][kw]
    elif op == "conv_transpose":
        (p["cout"], p["kh"], p["kw"], p["sh"], p["sw"], p["ph"], p["pw"], p["oph"], p["opw"]) = [r.u32() for _ in range(9)]
        wb = r.u8()
        r.take(3)
        p["rq"] = read_rq(r, p["cout"])
        p["w"] = r.ints(wb, cin * p["cout"] * p["kh"] * p["kw"])  # [cin][cout][kh][kw]
    elif op in ("rescale", "mul"):
        p["rq"] = read_rq(r, cin)
    elif op == "chscale":
        p["scalar"] = r.u32()
        p["n_rows"] = r.u32()
        rnd = r.u8()
        mb = r.u8()
        p["shift"] = r.u8()
        r.u8()
        if rnd not in ROUND:
            raise Whg1Error(f"chscale: round {rnd}")
        p["round"] = ROUND[rnd]
        p["m"] = [r.ints(mb, cin) for _ in range(p["n_rows"])]
    elif op == "lut16":
        p["e_in"] = r.i8()
        p["e_out"] = r.i8()
        r.take(2)
        p["table"] = r.ints(2, 65536)
    elif op in ("split",):
        p["start"] = r.u32()
        p["count"] = r.u32()
    elif op in ("pixel_shuffle", "pixel_unshuffle"):
        p["r"] = r.u32()
    elif op == "clamp":
        p["lo"] = r.i64()
        p["hi"] = r.i64()
    elif op == "leaky":
        p["a"] = r.i64()
        p["f"] = r.u32()
    elif op == "pad_rep":
        p["m"] = r.u32()
    elif op == "crop":
        ops = []
        for _ in range(4):
            kind = r.u8()
            r.take(3)
            if kind not in (0, 1):
                raise Whg1Error(f"crop: operand kind {kind}")
            ops.append(("const" if kind == 0 else "scalar", r.u32()))
        p["y0"], p["x0"], p["h"], p["w"] = ops
    elif op in ("subpos_split", "subpos_merge"):
        p["order"] = [(v // 2, v % 2) for v in r.take(4)]
    elif op == "fill":
        kind = r.u8()
        r.take(7)
        if kind not in (0, 1):
            raise Whg1Error(f"fill: value kind {kind}")
        p["kind"] = "const" if kind == 0 else "scalar"
        p["value"] = r.i64()
    elif op == "igdn":
        p["gf"] = r.u32()
        p["frac"] = r.u32()
        gb = r.u8()
        r.take(7)
        p["gamma"] = r.ints(gb, cin * cin)
        p["beta"] = r.ints(8, cin)
    elif op == "layernorm_c":
        p["eps"] = r.u64()
        gb = r.u8()
        r.take(7)
        p["gamma"] = r.ints(gb, cin)
        p["beta"] = r.ints(8, cin)
    elif op == "l2norm":
        p["eps"] = r.u64()
    elif op == "elu":
        p["alpha"] = r.i64()
    elif op in ("gram", "apply"):
        p["groups"] = r.u32()
        p["rq"] = read_rq(r, cout_tensor)
    # add, concat, chunk_add, relu, abs, crop_to, softmax, sigmoid: no parameters
    if r.at != r.end:
        raise Whg1Error(f"{op}: {r.end - r.at} parameter bytes left over")
    return p


def read(data):
    """Decodes WHG1 bytes into a Graph."""
    r = Reader(bytes(data))
    if r.take(4) != b"WHG1":
        raise Whg1Error("magic")
    version, opset = r.u8(), r.u8()
    if version != 1 or opset != 1:
        raise Whg1Error("version or operator set")
    r.u16()
    g = Graph()
    n_tensors, n_ops = r.u32(), r.u32()
    n_inputs, n_outputs, n_scalars = r.u16(), r.u16(), r.u16()
    r.u16()
    g.max_elems = r.u32()
    r.u32()
    g.scalars = [(r.i64(), r.i64()) for _ in range(n_scalars)]
    g.inputs = []
    for _ in range(n_inputs):
        tensor, max_h, max_w = r.u32(), r.u32(), r.u32()
        kind = r.u8()
        r.take(3)
        src = r.u32()
        r.u32()
        init = r.i64()
        if kind not in (0, 1):
            raise Whg1Error(f"input {len(g.inputs)}: kind {kind}")
        g.inputs.append(Input(tensor, max_h, max_w, "data" if kind == 0 else "state", src, init))
    g.outputs = [r.u32() for _ in range(n_outputs)]
    g.tensors = []
    for i in range(n_tensors):
        channels = r.u32()
        exponent = r.i8()
        policy = r.u8()
        r.u16()
        lo, hi = r.i64(), r.i64()
        if policy not in POLICY:
            raise Whg1Error(f"tensor {i}: policy {policy}")
        g.tensors.append(Tensor(i, channels, None if exponent == -128 else exponent, POLICY[policy], lo, hi))
    g.nodes = []
    for k in range(n_ops):
        opcode, n_in, n_out = r.u8(), r.u8(), r.u8()
        r.u8()
        if opcode not in OPCODES:
            raise Whg1Error(f"operator {k}: opcode {opcode:#x}")
        op = OPCODES[opcode]
        ins = [r.u32() for _ in range(n_in)]
        outs = [r.u32() for _ in range(n_out)]
        plen = r.u32()
        for t in ins + outs:
            if t >= n_tensors:
                raise Whg1Error(f"operator {k}: tensor {t} out of range")
        start = r.at
        r.take(plen)
        cin = g.tensors[ins[0]].channels if ins else 0
        cout = g.tensors[outs[0]].channels if outs else 0
        params = read_params(op, Reader(r.data, start, start + plen), cin, cout)
        g.nodes.append(Node(k, op, ins, outs, params))
    if r.at != len(r.data):
        raise Whg1Error("bytes after the last operator")
    return g
