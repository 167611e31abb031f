#!/usr/bin/env python3
"""A worked example of an operator implementation of integer-operators (`wai-ops/1`).

This program was written from the documents alone: integer-operators.md (§2-§5, §10),
docs/protocol.md ("Graph vectors", "Request errors", "Roles", "Declining", "Grading") and
docs/assumptions.md. It is standard-library Python 3 and computes with Python's big integers,
so every value is the exact mathematical integer and nothing wraps.

What it implements:
  - loading a WHG1 graph, steps 1-7 of §10.5 (not step 8, the bounds pass of §8: the grader never
    sends a graph refused there to an operator implementation);
  - the run of §4 (input checks, scalar ranges, the run-time plan, evaluation with the policies);
  - five operators only: `conv` (§5.2), `rescale` (§5.4), `add`, `clamp` and `relu` (§5.5), with
    the requantisation `rq` of §5.1. Graphs of several of these operators are run.
State inputs are carried across a vector's decodes (§10.3). It declines (answers
{"id": ..., "not_supported": reason}) every record it cannot compute: a graph with another operator,
and every record that is not a graph vector.

Run it:    python3 examples/fill.py < requests.jsonl > answers.jsonl
Grade it (from the repository's root):
    cargo xtask grade --impl "python3 examples/fill.py" --role operator \
        --only relu,clamp,add,rescale,conv

Each request line is a graph vector without its computed fields, with `profiles` given (this
program does not run the bounds pass that computes them; it echoes them). The answer is the request
with `load` and each decode's `expect` filled, as canonical JSON. A malformed request line is
reported on stderr as `line N: <field>: <what is wrong>` and answered with a decline so that answers
stay aligned with requests; the exit status is then 1.
"""
import json
import re
import sys

CAP = 1 << 26                       # §3 caps

# §5's table: opcode -> (name, n_in, n_out); n_in None means "at least 2" (concat).
OPERATORS = {
    0x01: ("conv", 1, 1), 0x02: ("rescale", 1, 1), 0x03: ("chscale", 1, 1), 0x04: ("lut16", 1, 1),
    0x05: ("add", 2, 1), 0x06: ("concat", None, 1), 0x07: ("chunk_add", 1, 1),
    0x08: ("split", 1, 1), 0x09: ("pixel_shuffle", 1, 1), 0x0A: ("pixel_unshuffle", 1, 1),
    0x0B: ("clamp", 1, 1), 0x0C: ("relu", 1, 1), 0x0D: ("leaky", 1, 1), 0x0E: ("pad_rep", 1, 1),
    0x0F: ("crop_to", 2, 1), 0x10: ("mul", 2, 1), 0x11: ("conv_transpose", 1, 1),
    0x12: ("igdn", 1, 1), 0x13: ("abs", 1, 1), 0x14: ("crop", 1, 1), 0x15: ("subpos_split", 1, 4),
    0x16: ("subpos_merge", 4, 1), 0x17: ("fill", 1, 1), 0x18: ("layernorm_c", 1, 1),
    0x19: ("l2norm", 1, 1), 0x1A: ("softmax", 1, 1), 0x1B: ("sigmoid", 1, 1), 0x1C: ("elu", 1, 1),
    0x1D: ("gram", 2, 1), 0x1E: ("apply", 2, 1),
}
IMPLEMENTED = {"conv", "rescale", "add", "clamp", "relu"}
DERIVED, CLAMP, CHECK = 0, 1, 2     # §10.2 tensor policies


class Refuse(Exception):
    """A refusal with its code (§4): model_mismatch, too_large, field_range, geometry_mismatch."""
    def __init__(self, code, why=""):
        super().__init__(f"{code}: {why}")
        self.code = code


class Decline(Exception):
    """A record this program cannot compute; the message is the `not_supported` reason."""


class BadRequest(Exception):
    """A request error (docs/protocol.md): not a refusal, the line itself is malformed."""
    def __init__(self, field, what):
        super().__init__(f"{field}: {what}")


def mismatch(why):
    return Refuse("model_mismatch", why)


# ---------------------------------------------------------------------------------------------
# WHG1 parsing: §10.1-§10.4, load steps 1-5
# ---------------------------------------------------------------------------------------------

class Bytes:
    """Little-endian reader over the graph's bytes. Reading past the end is a malformed graph."""
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n, signed=False):
        if self.pos + n > len(self.data):
            raise mismatch("the file ends inside a field")
        v = int.from_bytes(self.data[self.pos:self.pos + n], "little", signed=signed)
        self.pos += n
        return v

    def u8(self): return self.take(1)
    def u16(self): return self.take(2)
    def u32(self): return self.take(4)
    def i64(self): return self.take(8, signed=True)

    def array(self, count, size, signed=True):
        if self.pos + count * size > len(self.data):
            raise mismatch("the file ends inside an array")
        return [self.take(size, signed) for _ in range(count)]

    def zero(self, n, what):
        if self.take(n) != 0:
            raise mismatch(f"{what} is not zero")


class Graph:
    pass


class Op:
    pass


def parse_header(b, g):
    """§10.1; load step 1 (magic, version, operator set, the header's field rules) and step 2."""
    if b.data[:4] != b"WHG1":
        raise mismatch("magic")
    b.pos = 4
    if b.u8() != 1 or b.u8() != 1:
        raise mismatch("version or operator set")
    b.zero(2, "header reserved field at 6")
    g.n_tensors, g.n_ops = b.u32(), b.u32()
    g.n_inputs, g.n_outputs, g.n_scalars = b.u16(), b.u16(), b.u16()
    b.zero(2, "header reserved field at 22")
    g.max_elems = b.u32()
    b.zero(4, "header reserved field at 28")
    if min(g.n_tensors, g.n_ops, g.n_inputs, g.n_outputs) < 1:
        raise mismatch("a count is 0")
    if not 1 <= g.max_elems <= CAP:                        # docs/assumptions.md A2
        raise mismatch("max_elems outside 1..=2^26")
    # Step 3: the fixed-size tables and 8 bytes per operator record fit in the file.
    need = (32 + 16 * g.n_scalars + 32 * g.n_inputs + 4 * g.n_outputs + 24 * g.n_tensors
            + 8 * g.n_ops)
    if need > len(b.data):
        raise mismatch("the counts pass the file's length")


def parse_tables(b, g):
    """§10.2 scalar, input, output and tensor records; load step 4."""
    g.scalars = []
    for _ in range(g.n_scalars):
        lo, hi = b.i64(), b.i64()
        if lo > hi:
            raise mismatch("scalar lo > hi")
        g.scalars.append((lo, hi))
    g.inputs = []
    for _ in range(g.n_inputs):
        inp = {"tensor": b.u32(), "max_h": b.u32(), "max_w": b.u32(), "kind": b.u8()}
        b.zero(3, "input reserved bytes")
        inp["src"] = b.u32()
        b.zero(4, "input reserved field")
        inp["init"] = b.i64()
        if inp["tensor"] >= g.n_tensors:
            raise mismatch("input tensor index")
        if (inp["max_h"] == 0) != (inp["max_w"] == 0):
            raise mismatch("max_h and max_w: one is 0")
        if inp["kind"] not in (0, 1):
            raise mismatch("input kind")
        if inp["kind"] == 0 and (inp["src"] != 0 or inp["init"] != 0):
            raise mismatch("a data input with a src or init")
        g.inputs.append(inp)
    declared = {inp["max_h"] != 0 for inp in g.inputs}
    if len(declared) > 1:
        raise mismatch("some inputs declare their sizes and some do not")
    g.declared = declared == {True}
    g.outputs = [b.u32() for _ in range(g.n_outputs)]
    if any(t >= g.n_tensors for t in g.outputs):
        raise mismatch("output tensor index")
    g.tensors = []
    for _ in range(g.n_tensors):
        t = {"channels": b.u32(), "exponent": b.take(1, signed=True), "policy": b.u8()}
        b.zero(2, "tensor reserved field")
        t["lo"], t["hi"] = b.i64(), b.i64()
        if t["channels"] < 1:
            raise mismatch("tensor channels 0")
        if t["policy"] not in (DERIVED, CLAMP, CHECK):
            raise mismatch("tensor policy")
        if t["policy"] == DERIVED and (t["lo"], t["hi"]) != (0, 0):
            raise mismatch("a derived tensor with a range")
        if t["lo"] > t["hi"]:
            raise mismatch("tensor lo > hi")
        g.tensors.append(t)


def parse_rq(b, channels):
    """§10.4 the requantisation block RQ over `channels` output channels, with its ranges."""
    rq = {"round": b.u8(), "bias": b.u8()}
    m_kind, s_kind, m_bytes, b_bytes = b.u8(), b.u8(), b.u8(), b.u8()
    b.zero(2, "RQ reserved field")
    if rq["round"] > 2 or rq["bias"] > 2 or m_kind > 2 or s_kind not in (1, 2):
        raise mismatch("RQ round, bias, m_kind or s_kind")
    if (m_bytes != 0) if m_kind == 0 else (m_bytes not in (4, 8)):
        raise mismatch("RQ m_bytes")
    if (b_bytes != 0) if rq["bias"] == 0 else (b_bytes not in (4, 8)):
        raise mismatch("RQ b_bytes")
    # A value given once is that value for every channel (§5.1); pick() reads either form.
    n_mult = [0, 1, channels][m_kind]
    rq["mult"] = b.array(n_mult, m_bytes) or [1]
    rq["shift"] = b.array(1 if s_kind == 1 else channels, 1, signed=False)
    if max(rq["shift"]) > 127:
        raise mismatch("RQ shift past 127")
    rq["bias_values"] = b.array(channels if rq["bias"] else 0, b_bytes)
    return rq


def parse_op(b, g):
    """One §10.2 operator record and its §10.4 parameters; load step 5."""
    op = Op()
    code, n_in, n_out = b.u8(), b.u8(), b.u8()
    b.zero(1, "operator reserved byte")
    if code not in OPERATORS:
        raise mismatch(f"opcode 0x{code:02x}")
    op.name, want_in, want_out = OPERATORS[code]
    op.code = code
    if (n_in != want_in if want_in else n_in < 2) or n_out != want_out:
        raise mismatch(f"{op.name} arity")
    op.ins = [b.u32() for _ in range(n_in)]
    op.outs = [b.u32() for _ in range(n_out)]
    if any(t >= g.n_tensors for t in op.ins + op.outs):
        raise mismatch(f"{op.name} tensor index")
    plen = b.u32()
    if b.pos + plen > len(b.data):
        raise mismatch(f"{op.name} parameters pass the file's end")
    p = Bytes(b.data[b.pos:b.pos + plen])   # the parameters: reading past them, or leaving
    b.pos += plen                           # some unread, is a wrong parameter length
    if op.name not in IMPLEMENTED:          # skipped, not checked (load() declines it later)
        return op
    cin = g.tensors[op.ins[0]]["channels"]
    if op.name == "clamp":
        op.lo, op.hi = p.i64(), p.i64()
        if op.lo > op.hi:
            raise mismatch("clamp lo > hi")
    elif op.name == "rescale":
        op.rq = parse_rq(p, cin)
    elif op.name == "conv":
        (op.cout, op.kh, op.kw, op.sh, op.sw, op.ph, op.pw, op.groups) = [p.u32() for _ in range(8)]
        w_bytes = p.u8()
        p.zero(3, "conv reserved bytes")
        if min(op.cout, op.kh, op.kw, op.sh, op.sw, op.groups) < 1 or w_bytes not in (1, 2, 4, 8):
            raise mismatch("conv parameter range")
        if cin % op.groups:                 # Wt's length needs cin/groups (a channel count, step 7)
            raise mismatch("conv: cin is not a multiple of groups")
        op.rq = parse_rq(p, op.cout)
        op.wt = p.array(op.cout * (cin // op.groups) * op.kh * op.kw, w_bytes)
    if p.pos != len(p.data):
        raise mismatch(f"{op.name} parameter length")
    return op


# ---------------------------------------------------------------------------------------------
# Load: §10.5 steps 1-7
# ---------------------------------------------------------------------------------------------

def load(blob):
    """Return the loaded graph, or raise Refuse (the load's code) or Decline."""
    g = Graph()
    b = Bytes(blob)
    parse_header(b, g)                                   # steps 1-3
    parse_tables(b, g)                                   # step 4
    g.ops = [parse_op(b, g) for _ in range(g.n_ops)]     # step 5
    if b.pos != len(blob):
        raise mismatch("bytes follow the last operator")
    check_graph_rules(g)                                 # step 6
    check_channels(g)                                    # step 7, channel counts
    # Every refusal of steps 1-6 and of step 7's channel counts is model_mismatch, whatever order
    # they are found in; only now, before step 7's sizes (too_large), does an unknown feature count.
    for op in g.ops:
        if op.name not in IMPLEMENTED:
            raise Decline(f"operator {op.name} (0x{op.code:02x}) is not implemented")
    if g.declared:                                       # step 7, shapes on max_h, max_w
        sizes = {}
        for inp in g.inputs:                             # docs/assumptions.md A3
            c = g.tensors[inp["tensor"]]["channels"]
            if c * inp["max_h"] * inp["max_w"] > g.max_elems:
                raise Refuse("too_large", "a declared input size past max_elems")
            sizes[inp["tensor"]] = (c, inp["max_h"], inp["max_w"])
        plan(g, sizes, "model_mismatch")
    return g


def check_graph_rules(g):
    """§10.3 graph rules and state rules, §3 exponent rules; load step 6."""
    defined = [False] * g.n_tensors
    for inp in g.inputs:
        t = g.tensors[inp["tensor"]]
        if defined[inp["tensor"]]:
            raise mismatch("a tensor is two graph inputs")
        defined[inp["tensor"]] = True
        if t["policy"] not in (CLAMP, CHECK):
            raise mismatch("a graph input's policy is derived")
        if inp["kind"] == 1:
            if inp["src"] >= g.n_outputs:
                raise mismatch("a state input's src")
            if g.tensors[g.outputs[inp["src"]]]["channels"] != t["channels"]:
                raise mismatch("a state input's channels differ from its src")
            if not t["lo"] <= inp["init"] <= t["hi"]:
                raise mismatch("a state input's init outside its range")
    if g.inputs[0]["kind"] != 0:
        raise mismatch("input 0 is a state input")
    for op in g.ops:
        if not all(defined[t] for t in op.ins):
            raise mismatch(f"{op.name} reads a tensor not yet defined")
        for t in op.outs:
            if defined[t]:
                raise mismatch(f"{op.name} writes a tensor already defined")
            defined[t] = True
        if op.name == "add":                             # §3 exponent rule
            exps = {g.tensors[t]["exponent"] for t in op.ins + op.outs}   # -128 is "none"
            if len(exps) > 1:
                raise mismatch("add's exponents differ")
    if not all(defined):
        raise mismatch("a tensor is neither an input nor an operator's output")


def check_channels(g):
    """Each operator's channel counts (§5 shape rules, §10.3); load step 7, before any size."""
    for op in g.ops:
        if op.name not in IMPLEMENTED:
            continue
        cin = g.tensors[op.ins[0]]["channels"]
        cout = g.tensors[op.outs[0]]["channels"]
        if op.name == "add" and g.tensors[op.ins[1]]["channels"] != cin:
            raise mismatch("add's inputs differ in channels")
        if op.name == "conv":
            if cin % op.groups or op.cout % op.groups or cout != op.cout:
                raise mismatch("conv's channel counts")
        elif cout != cin:
            raise mismatch(f"{op.name}'s output channels")


def plan(g, sizes, shape_code):
    """Plan every operator in graph order on `sizes` (tensor -> (C, H, W)): §4 run step 3, and
    §10.5 step 7 on the declared sizes (where a shape rule fails with model_mismatch)."""
    for op in g.ops:
        c, h, w = sizes[op.ins[0]]
        if op.name == "conv":
            if h + 2 * op.ph > CAP or w + 2 * op.pw > CAP:           # padded sides, §3 caps
                raise Refuse("too_large", "conv's padded side past 2^26")
            if h + 2 * op.ph < op.kh or w + 2 * op.pw < op.kw:
                raise Refuse(shape_code, "conv's kernel is larger than its padded input")
            ho = (h + 2 * op.ph - op.kh) // op.sh + 1
            out = (op.cout, ho, (w + 2 * op.pw - op.kw) // op.sw + 1)
        elif op.name == "add":
            if sizes[op.ins[1]] != (c, h, w):
                raise Refuse(shape_code, "add's inputs differ in shape")
            out = (c, h, w)
        else:
            out = (c, h, w)
        if out[0] * out[1] * out[2] > g.max_elems:
            raise Refuse("too_large", f"{op.name}'s output past max_elems")
        sizes[op.outs[0]] = out


# ---------------------------------------------------------------------------------------------
# The operators: §2 rounding, §5.1 rq, §5.2 conv, §5.4 rescale, §5.5 add, clamp, relu
# ---------------------------------------------------------------------------------------------

def round_shift(p, s, mode):
    """§2 R_floor (0), R_half_up (1), R_half_even (2). Python's >> is floor division by 2^s."""
    if s == 0:
        return p
    if mode == 0:
        return p >> s
    if mode == 1:
        return (p + (1 << (s - 1))) >> s
    q = p >> s
    r, h = p - (q << s), 1 << (s - 1)
    return q + 1 if r > h or (r == h and q % 2 == 1) else q


def pick(values, o):
    """A value given once is that value for every channel (§5.1)."""
    return values[0] if len(values) == 1 else values[o]


def rq(p, o, v):
    """§5.1 rq_o(v) for output channel o."""
    bias = p["bias_values"][o] if p["bias"] else 0
    t = v + (bias if p["bias"] == 1 else 0)
    q = round_shift(t * pick(p["mult"], o), pick(p["shift"], o), p["round"])
    return q + (bias if p["bias"] == 2 else 0)


def conv(op, x, shape, out_shape):
    """§5.2: a grouped, strided, zero-padded convolution, then rq per output channel."""
    cin, h, w = shape
    _, ho, wo = out_shape
    cg, og = cin // op.groups, op.cout // op.groups
    out = []
    for o in range(op.cout):
        first = (o // og) * cg                       # the group's first input channel
        for y in range(ho):
            for xo in range(wo):
                acc = 0
                for ci in range(cg):
                    for i in range(op.kh):
                        u = y * op.sh + i - op.ph
                        if not 0 <= u < h:           # X̃ is 0 outside the input
                            continue
                        for j in range(op.kw):
                            v = xo * op.sw + j - op.pw
                            if 0 <= v < w:
                                weight = op.wt[((o * cg + ci) * op.kh + i) * op.kw + j]
                                acc += weight * x[((first + ci) * h + u) * w + v]
                out.append(rq(op.rq, o, acc))
    return out


def evaluate(op, values, sizes):
    """One operator's output values (before its output tensor's policy)."""
    x, shape = values[op.ins[0]], sizes[op.ins[0]]
    if op.name == "relu":
        return [max(v, 0) for v in x]
    if op.name == "clamp":
        return [min(max(v, op.lo), op.hi) for v in x]
    if op.name == "add":
        return [a + b for a, b in zip(x, values[op.ins[1]])]
    plane = shape[1] * shape[2]
    if op.name == "rescale":                         # §5.4: out[c] = rq_c(in[c])
        return [rq(op.rq, k // plane, v) for k, v in enumerate(x)]
    return conv(op, x, shape, sizes[op.outs[0]])


def apply_policy(t, data):
    """§3 policies: clamp replaces each value, check refuses the decode (field_range)."""
    if t["policy"] == CLAMP:
        return [min(max(v, t["lo"]), t["hi"]) for v in data]
    if t["policy"] == CHECK and any(not t["lo"] <= v <= t["hi"] for v in data):
        raise Refuse("field_range", "a value outside a check range")
    return data


# ---------------------------------------------------------------------------------------------
# A decode: §4 run steps 1-4
# ---------------------------------------------------------------------------------------------

def run(g, data, scalars, carried):
    """One decode. `data` are the data inputs, in input-table order; `carried` maps a state
    input's position to what its output held at the sequence's last completed decode (§10.3).
    Return the outputs [(shape, values)] and the state to carry, or raise Refuse."""
    supplied, inputs = iter(data), []
    for k, inp in enumerate(g.inputs):
        if inp["kind"] == 0:
            inputs.append(next(supplied))
        elif k in carried:
            inputs.append(carried[k])
        else:       # init, sized from input 0 at this decode (A8), formed only at step 4
            inputs.append(((g.tensors[inp["tensor"]]["channels"],) + inputs[0][0][1:], None))
    sizes = {}
    for inp, (shape, _) in zip(g.inputs, inputs):                   # step 1
        c, h, w = shape
        if c != g.tensors[inp["tensor"]]["channels"] or h < 1 or w < 1:
            raise Refuse("model_mismatch", "an input's channels, or a side of 0")
        if inp["max_h"] and (h > inp["max_h"] or w > inp["max_w"]) or c * h * w > g.max_elems:
            raise Refuse("too_large", "an input past its declared size or max_elems")
        sizes[inp["tensor"]] = shape
    for value, (lo, hi) in zip(scalars, g.scalars):                 # step 2
        if not lo <= value <= hi:
            raise Refuse("field_range", "a scalar outside its range")
    plan(g, sizes, "geometry_mismatch")                             # step 3
    values = {}                                                     # step 4
    for inp, (shape, x) in zip(g.inputs, inputs):
        if x is None:
            x = [inp["init"]] * (shape[0] * shape[1] * shape[2])
        values[inp["tensor"]] = apply_policy(g.tensors[inp["tensor"]], x)
    for op in g.ops:
        values[op.outs[0]] = apply_policy(g.tensors[op.outs[0]], evaluate(op, values, sizes))
    state = {k: (sizes[g.outputs[inp["src"]]], values[g.outputs[inp["src"]]])
             for k, inp in enumerate(g.inputs) if inp["kind"] == 1}
    return [(sizes[t], values[t]) for t in g.outputs], state


# ---------------------------------------------------------------------------------------------
# The request: docs/protocol.md "Graph vectors" and "Request errors"
# ---------------------------------------------------------------------------------------------

CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)\Z")


def integer(s, field):
    if not isinstance(s, str) or not CANONICAL_INT.match(s) or s == "-0":
        raise BadRequest(field, f"not a canonical integer string: {json.dumps(s)[:40]}")
    return int(s)


def members(obj, field, required, optional=()):
    if not isinstance(obj, dict):
        raise BadRequest(field, "not an object")
    for key in required:
        if key not in obj:
            raise BadRequest(field, f"missing member {key!r}")
    for key in obj:
        if key not in required and key not in optional:
            raise BadRequest(field, f"unknown member {key!r}")


def tensor(obj, field):
    """A request tensor: its shape (each dimension below 2^64) and C·H·W elements (A10)."""
    members(obj, field, ("data", "shape"))
    if not isinstance(obj["shape"], list) or len(obj["shape"]) != 3:
        raise BadRequest(f"{field}.shape", "not three integers")
    shape = tuple(integer(d, f"{field}.shape[{k}]") for k, d in enumerate(obj["shape"]))
    if any(not 0 <= d < 1 << 64 for d in shape):
        raise BadRequest(f"{field}.shape", "a dimension outside 0..2^64")
    data = obj["data"]
    if not isinstance(data, list) or len(data) != shape[0] * shape[1] * shape[2]:
        raise BadRequest(f"{field}.data", "does not hold C*H*W elements")
    return shape, [integer(v, f"{field}.data[{k}]") for k, v in enumerate(data)]


def as_tensor(shape, data):
    return {"data": [str(v) for v in data], "shape": [str(d) for d in shape]}


def fill(req):
    """Fill one request (a parsed JSON object). Returns the answer object."""
    members(req, "request", ("decodes", "graph", "id"), ("load", "profiles"))
    if "profiles" not in req:
        raise Decline("profiles not given: computing them needs the bounds pass (section 8), "
                      "which this program does not implement")
    graph = req["graph"]
    if not isinstance(graph, str) or not re.fullmatch(r"([0-9a-f]{2})*", graph):
        raise BadRequest("graph", "not lowercase hexadecimal bytes")
    if not isinstance(req["decodes"], list):
        raise BadRequest("decodes", "not an array")
    decodes = []
    for k, d in enumerate(req["decodes"]):
        field = f"decodes[{k}]"
        members(d, field, ("inputs", "scalars"), ("expect",))
        if not isinstance(d["inputs"], list) or not isinstance(d["scalars"], list):
            raise BadRequest(field, "inputs or scalars is not an array")
        ins = [tensor(t, f"{field}.inputs[{n}]") for n, t in enumerate(d["inputs"])]
        scs = [integer(s, f"{field}.scalars[{n}]") for n, s in enumerate(d["scalars"])]
        decodes.append((d, ins, scs))
    answer = {key: value for key, value in req.items() if key != "decodes"}
    try:
        g = load(bytes.fromhex(graph))
    except Refuse as refusal:
        answer.update(load=refusal.code, decodes=[])
        return answer
    answer["load"], answer["decodes"] = "ok", []
    n_data = sum(1 for inp in g.inputs if inp["kind"] == 0)
    carried = {}                     # the decodes are one sequence (§10.3)
    for k, (d, ins, scs) in enumerate(decodes):
        if len(ins) != n_data or len(scs) != g.n_scalars:
            raise BadRequest(f"decodes[{k}]", "the wrong number of data inputs or scalars")
        try:
            outputs, carried = run(g, ins, scs, carried)
            expect = {"outputs": [as_tensor(s, v) for s, v in outputs]}
        except Refuse as refusal:    # a refused decode changes no state
            expect = {"refuse": refusal.code}
        answer["decodes"].append({"expect": expect, "inputs": d["inputs"], "scalars": d["scalars"]})
    return answer


def main():
    status = 0
    for number, line in enumerate(sys.stdin, 1):
        ident = "?"
        try:
            try:
                req = json.loads(line)
            except ValueError as e:
                raise BadRequest("line", f"not JSON ({e})")
            if not isinstance(req, dict):
                raise BadRequest("line", "not a JSON object")
            if isinstance(req.get("id"), str):
                ident = req["id"]
            if "graph" not in req:     # another form of docs/protocol.md's table
                forms = {"op": "stage-operator vectors", "lowering": "lowering records",
                         "bundle": "jpegai scale-path records"}
                form = next((forms[k] for k in forms if k in req), "records without a graph")
                raise Decline(f"{form} are not implemented (only graph vectors are)")
            answer = fill(req)
        except Decline as e:
            answer = {"id": ident, "not_supported": str(e)}
        except BadRequest as e:
            print(f"line {number}: {e}", file=sys.stderr)
            status = 1
            answer = {"id": ident, "not_supported": f"bad request: {e}"}
        except Exception as e:     # a bug here: say so, and keep the answers aligned
            print(f"line {number}: internal error: {e!r}", file=sys.stderr)
            status = 1
            answer = {"id": ident, "not_supported": "internal error of fill.py"}
        sys.stdout.write(json.dumps(answer, separators=(",", ":"), sort_keys=True) + "\n")
        sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
