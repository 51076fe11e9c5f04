"""Pattern rewrites at load time: chains of ONNX nodes that exporters write out for one operation,
run as that operation's fused burn op.

After folding (`burn.onnx.model.fold`), `rewrite` replaces

* the written-out erf GELU, ``x * (erf(x / sqrt(2)) + 1) * 0.5`` (PyTorch's ``nn.GELU`` and
  transformers' ``GELUActivation`` at opsets below 20: ``Div``/``Mul`` -> ``Erf`` -> ``Add`` ->
  ``Mul`` -> ``Mul``), by one ONNX ``Gelu`` node, run by `burn.activation.gelu` (one compiled
  pass on burn-ndarray instead of five array passes with a slow ``Erf``);
* the tanh GELU, ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`` (GPT-2's ``NewGELU``:
  eight nodes with a ``Pow``, or the cube as two ``Mul``), by ``Gelu`` with
  ``approximate="tanh"``;
* a zero ``Pad`` of the spatial axes whose only reader is a ``Conv`` (EfficientNet's
  "same" padding of its stride-2 layers, as ``nn.ZeroPad2d``), by that ``Conv`` with the zeros
  added to its ``pads``;
* a ``Conv`` whose output only an activation reads (``Relu``, ``Clip`` to ``[0, 6]``,
  ``HardSwish``, PyTorch's ``HardSigmoid`` with ``alpha = 1/6``, ``Sigmoid``, ``Gelu``, or the
  SiLU ``Mul(c, Sigmoid(c))``, whose two nodes are then the only readers), by one node running
  `burn.tensor.module.conv2d` with that ``activation`` (burn-ndarray applies it in the
  convolution's output pass: MobileNetV3's and EfficientNet-B0's layers); a zero ``Pad`` before
  such a ``Conv`` is folded into the same node;
* scaled dot-product attention written out, ``MatMul(Q, K^T) -> Mul|Div (a scalar) ->
  [Add (a constant additive mask)] -> Softmax(last axis) -> [Cast to float]* -> MatMul(., V)``,
  by one node running `burn.tensor.module.attention` (burn-ndarray's blocked kernel; under
  autodiff one node whose backward recomputes the weights).

A chain is rewritten only when its inner values are read by the next node of the chain alone
(nothing else, no graph output, no subgraph), its constants are the ones the operation needs
(within 1e-6 relative), and, for attention, the additive mask is a constant of zeros and values
at or below ``-1e30`` (``-inf``, float32's lowest: what exporters write) with an unmasked key in
every row: there the softmax gives the masked keys exactly 0, as the bool mask of `attention`
does. Shapes are checked when the node runs: a chain whose operands `attention` does not take
(leading dims that broadcast, a rank below 2, mixed dtypes) runs its original nodes.

Example:
    >>> from burn.onnx.patterns import FUSED
    >>> sorted(FUSED)
    ['burn.ConvActivation', 'burn.ScaledDotProductAttention']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from burn.onnx.graph import Node, node_captures
from burn.onnx.ops import OpInfo
from burn.tensor._errors import broadcasts_to

if TYPE_CHECKING:
    from burn.onnx.runtime import Ctx, Value

ATTENTION = "burn.ScaledDotProductAttention"
CONV_ACTIVATION = "burn.ConvActivation"
# Additive mask values at or below this are "do not attend": exp underflows to exactly 0 there
# for any finite score below 1e29, as for -inf.
MASKED = -1e30
_FLOAT_TYPES = (1, 10, 11, 16)  # ONNX FLOAT, FLOAT16, DOUBLE, BFLOAT16: Cast to the model's float


class _Graph:
    """The kept nodes with who produces and who reads each value (subgraph captures and graph
    outputs count as readers that cannot be rewritten)."""

    def __init__(
        self, nodes: Sequence[Node], constants: dict[str, np.ndarray], outputs: Sequence[str]
    ) -> None:
        self.nodes = list(nodes)
        self.constants = constants
        self.producer: dict[str, int] = {}
        self.readers: dict[str, list[int]] = {}
        for index, node in enumerate(self.nodes):
            for name in node.outputs:
                if name:
                    self.producer[name] = index
            for name in (*node.inputs, *node_captures(node)):
                if name:
                    self.readers.setdefault(name, []).append(index)
        for name in outputs:
            self.readers.setdefault(name, []).append(-1)
        self.removed: set[int] = set()

    def made_by(self, name: str, op: str) -> Node | None:
        index = self.producer.get(name)
        if index is None or index in self.removed:
            return None
        node = self.nodes[index]
        return node if node.op_type == op else None

    def sole_reader(self, name: str, op: str | tuple[str, ...]) -> Node | None:
        """The node reading `name`, when it is the only reader and of type `op`."""
        readers = self.readers.get(name, [])
        if len(readers) != 1 or readers[0] < 0 or readers[0] in self.removed:
            return None
        node = self.nodes[readers[0]]
        return node if node.op_type in ((op,) if isinstance(op, str) else op) else None

    def scalar(self, name: str) -> float | None:
        """The value of a one-element float constant, else None."""
        value = self.constants.get(name)
        if value is None or value.size != 1 or value.dtype.kind != "f":
            return None
        return float(value.reshape(()))

    def other(self, node: Node, name: str) -> str | None:
        """The other input of the binary `node`, one of whose inputs is `name`."""
        if len(node.inputs) != 2 or name not in node.inputs:
            return None
        a, b = node.inputs
        return b if a == name else a

    def index(self, node: Node) -> int:
        return self.producer[node.outputs[0]]


def _close(value: float | None, target: float) -> bool:
    return value is not None and math.isclose(value, target, rel_tol=1e-6)


def _scalar_operand(g: _Graph, node: Node, target: float) -> str | None:
    """The non-constant input of the binary `node` when its other input is the scalar `target`."""
    if len(node.inputs) != 2:
        return None
    for mine, other in (node.inputs, node.inputs[::-1]):
        if _close(g.scalar(other), target) and other != mine:
            return mine
    return None


# -- GELU ----------------------------------------------------------------------------------------
def _erf_gelu(g: _Graph, erf: Node) -> tuple[list[Node], Node] | None:
    """``Div(x, sqrt 2) | Mul(x, 1/sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5`` (the halving
    may also come first: ``Mul(Mul(x, 0.5), erf + 1)``)."""
    scaled = g.made_by(erf.inputs[0], "Div") or g.made_by(erf.inputs[0], "Mul")
    if scaled is None or g.sole_reader(scaled.outputs[0], "Erf") is not erf:
        return None
    if scaled.op_type == "Div":
        x = scaled.inputs[0] if _close(g.scalar(scaled.inputs[1]), math.sqrt(2)) else None
    else:
        x = _scalar_operand(g, scaled, 1 / math.sqrt(2))
    plus = g.sole_reader(erf.outputs[0], "Add")
    if x is None or plus is None or _scalar_operand(g, plus, 1.0) != erf.outputs[0]:
        return None
    times = g.sole_reader(plus.outputs[0], "Mul")
    if times is None:
        return None
    partner = g.other(times, plus.outputs[0])
    if partner == x:  # x (erf + 1), then halved
        half = g.sole_reader(times.outputs[0], "Mul")
        if half is None or _scalar_operand(g, half, 0.5) != times.outputs[0]:
            return None
        return [scaled, erf, plus, times, half], _gelu(x, half, "none")
    halved = _halved(g, partner, x, times)  # (x * 0.5) (erf + 1)
    if halved is None:
        return None
    return [scaled, erf, plus, halved, times], _gelu(x, times, "none")


def _halved(g: _Graph, name: str | None, x: str, times: Node | None) -> Node | None:
    """The node making `name` as ``Mul(x, 0.5)``, read by `times` only."""
    halved = g.made_by(name, "Mul") if name else None
    if halved is None or _scalar_operand(g, halved, 0.5) != x:
        return None
    if g.sole_reader(name or "", "Mul") is not times:
        return None
    return halved


def _gelu(x: str, last: Node, approximate: str) -> Node:
    return Node("Gelu", f"{last.name}::gelu", (x,), last.outputs, {"approximate": approximate})


def _tanh_gelu(g: _Graph, tanh: Node) -> tuple[list[Node], Node] | None:
    """``0.5 x (1 + Tanh(Mul(Add(x, Mul(x^3, 0.044715)), sqrt(2/pi))))``, the cube a ``Pow(x, 3)``
    (GPT-2's export) or ``Mul(Mul(x, x), x)``, halved first or last."""
    inner = g.made_by(tanh.inputs[0], "Mul")
    if inner is None or g.sole_reader(inner.outputs[0], "Tanh") is not tanh:
        return None
    summed_name = _scalar_operand(g, inner, math.sqrt(2 / math.pi))
    summed = g.made_by(summed_name, "Add") if summed_name else None
    if summed is None or g.sole_reader(summed.outputs[0], "Mul") is not inner:
        return None
    for x, cubic_name in (summed.inputs, summed.inputs[::-1]):
        cubic = g.made_by(cubic_name, "Mul")
        if cubic is None or g.sole_reader(cubic_name, "Add") is not summed:
            continue
        cube_name = _scalar_operand(g, cubic, 0.044715)
        cube = _cube(g, cube_name, x, cubic) if cube_name else None
        if cube is not None:
            break
    else:
        return None
    plus = g.sole_reader(tanh.outputs[0], "Add")
    if plus is None or _scalar_operand(g, plus, 1.0) != tanh.outputs[0]:
        return None
    times = g.sole_reader(plus.outputs[0], "Mul")
    if times is None:
        return None
    body = [*cube, cubic, summed, inner, tanh, plus, times]
    if g.other(times, plus.outputs[0]) == x:  # x (1 + tanh), then halved
        half = g.sole_reader(times.outputs[0], "Mul")
        if half is None or _scalar_operand(g, half, 0.5) != times.outputs[0]:
            return None
        return [*body, half], _gelu(x, half, "tanh")
    halved = _halved(g, g.other(times, plus.outputs[0]), x, times)
    if halved is None:
        return None
    return [halved, *body], _gelu(x, times, "tanh")


def _cube(g: _Graph, name: str, x: str, reader: Node) -> list[Node] | None:
    """The nodes making `name` as ``x^3`` (``Pow(x, 3)`` or ``Mul(Mul(x, x), x)``), read by
    `reader` only."""
    if g.sole_reader(name, "Mul") is not reader:
        return None
    power = g.made_by(name, "Pow")
    if power is not None:
        ok = power.inputs[0] == x and _close(g.scalar(power.inputs[1]), 3.0)
        return [power] if ok else None
    product = g.made_by(name, "Mul")
    square_name = g.other(product, x) if product is not None else None
    square = g.made_by(square_name, "Mul") if square_name else None
    if square is None or square.inputs != (x, x) or g.sole_reader(square_name or "", "Mul") is not product:
        return None
    assert product is not None
    return [square, product]


# -- attention -----------------------------------------------------------------------------------
def _attention(g: _Graph, softmax: Node, fresh: dict[str, np.ndarray]) -> tuple[list[Node], Node] | None:
    """``MatMul(Q, K^T) -> Mul|Div scalar -> [Add mask] -> Softmax(-1) -> [Cast]* -> MatMul(., V)``."""
    if softmax.attr("axis", -1) != -1:
        return None  # the scores' rank is only known when the node runs; ONNX exporters write -1
    value, added, additive = softmax.inputs[0], None, ""
    added = g.made_by(value, "Add")
    if added is not None:
        if g.sole_reader(value, "Softmax") is not softmax:
            return None
        for value, additive in (added.inputs, added.inputs[::-1]):  # noqa: B007 - both used below
            if g.made_by(value, "Mul") or g.made_by(value, "Div"):
                break
        else:
            return None
    scaled = g.made_by(value, "Mul") or g.made_by(value, "Div")
    if scaled is None or g.sole_reader(value, "Add" if added else "Softmax") is not (added or softmax):
        return None
    product, factor_name = scaled.inputs
    if scaled.op_type == "Mul" and g.scalar(factor_name) is None:
        product, factor_name = factor_name, product
    factor = g.scalar(factor_name)
    if factor is None or not math.isfinite(factor) or factor == 0:
        return None
    scores = g.made_by(product, "MatMul")
    if scores is None or g.sole_reader(product, scaled.op_type) is not scaled:
        return None
    chain = [scores, scaled, *([added] if added else []), softmax]
    out = softmax.outputs[0]
    while (reader := g.sole_reader(out, ("Cast", "MatMul"))) is not None and reader.op_type == "Cast":
        if reader.attr("to") not in _FLOAT_TYPES:
            return None
        chain.append(reader)
        out = reader.outputs[0]
    if reader is None or reader.inputs[0] != out:
        return None  # the weights must be the left operand of the product with V
    chain.append(reader)
    mask_name = ""
    if added is not None:
        mask = _bool_mask(g.constants.get(additive))
        if mask is None:
            return None
        mask_name = f"{additive}::burn_bool_mask"
        fresh[mask_name] = mask
    # The chain's own operands come last: a call whose operands `attention` does not take runs it.
    reads = (*scores.inputs, reader.inputs[1], mask_name, factor_name, additive)
    scale = factor if scaled.op_type == "Mul" else 1.0 / factor
    attrs = {"scale": scale, "chain": tuple(chain)}
    node = Node(ATTENTION, f"{reader.name}::attention", reads, reader.outputs, attrs)
    return chain, node


def _bool_mask(additive: np.ndarray | None) -> np.ndarray | None:
    """The bool mask (True: do not attend) an additive constant mask stands for, when it is one."""
    if additive is None or additive.dtype.kind != "f" or additive.ndim < 2:
        return None
    masked = additive <= MASKED
    if not np.all(masked | (additive == 0)) or np.any(masked.all(-1)):
        return None
    return masked


def _padded_conv(g: _Graph, pad: Node) -> tuple[list[Node], Node] | None:
    """``Pad`` (constant zeros on the spatial axes only) read by a ``Conv`` alone, as that ``Conv``
    with the zeros added to its own pads: the convolution pads its input once (the ``Pad``
    node takes a concatenation per padded axis, and the ``Conv`` after it a channels-last copy of
    the result on burn-ndarray: EfficientNet-B0's stride-2 layers, docs/benchmarks-log.md "small
    CNNs")."""
    if pad.attr("mode", "constant") != "constant" or len(pad.inputs) < 2:
        return None
    conv = g.sole_reader(pad.outputs[0], "Conv")
    if conv is None or conv.inputs[0] != pad.outputs[0]:
        return None
    auto_pad = conv.attr("auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "VALID", ""):  # SAME_*: pads that depend on the padded size
        return None
    pads = g.constants.get(pad.inputs[1])
    if pads is None or pads.dtype.kind not in "iu" or pads.ndim != 1:
        return None
    value = g.constants.get(pad.inputs[2]) if len(pad.inputs) > 2 and pad.inputs[2] else None
    if len(pad.inputs) > 2 and pad.inputs[2] and (value is None or np.any(value != 0)):
        return None
    if len(pad.inputs) > 3 and pad.inputs[3]:
        return None  # explicit axes: rare; left as the file wrote it
    rank = pads.size // 2
    spatial = rank - 2
    before, after = [int(p) for p in pads[:rank]], [int(p) for p in pads[rank:]]
    if spatial < 1 or any(p < 0 for p in before + after) or any(before[:2]) or any(after[:2]):
        return None
    zeros = [0] * (2 * spatial)
    own = zeros if auto_pad == "VALID" else [int(p) for p in conv.attr("pads", zeros)]
    if len(own) != 2 * spatial:
        return None
    merged = [a + b for a, b in zip(own, before[2:] + after[2:], strict=True)]
    attrs = {**conv.attrs, "pads": merged, "auto_pad": "NOTSET"}
    inputs = (pad.inputs[0], *conv.inputs[1:])
    types = conv.input_dtypes
    fused = Node(conv.op_type, conv.name, inputs, conv.outputs, attrs, (pad.input_dtype(0), *types[1:]))
    epilogue = _conv_activation(g, fused)
    if epilogue is not None:
        chain, fused = epilogue
        return [pad, conv, *chain], fused
    return [pad, conv], fused


# -- Conv -> activation ----------------------------------------------------------------------------
def _activation_of(g: _Graph, node: Node) -> str | None:
    """The `burn.backend.ops.conv.CONV_ACTIVATIONS` name of the one-input activation `node`, or
    None (another op, or constants other than the activation's)."""
    op = node.op_type
    if op == "Relu":
        return "relu"
    if op == "HardSwish":
        return "hardswish"
    if op == "HardSigmoid":  # PyTorch's hardsigmoid is relu6(x + 3) / 6; ONNX's default alpha 0.2
        alpha, beta = node.attr("alpha", 0.2), node.attr("beta", 0.5)
        return "hardsigmoid" if _close(alpha, 1 / 6) and _close(beta, 0.5) else None
    if op == "Sigmoid":
        return "sigmoid"
    if op == "Gelu":
        return "gelu" if node.attr("approximate", "none") == "none" else None
    if op == "Clip":
        low = g.scalar(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else node.attr("min")
        has_max = (len(node.inputs) > 2 and bool(node.inputs[2])) or node.attr("max") is not None
        high = g.scalar(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else node.attr("max")
        if low == 0 and high == 6:
            return "relu6"
        if low == 0 and not has_max:
            return "relu"
    return None


def _conv_activation(g: _Graph, conv: Node) -> tuple[list[Node], Node] | None:
    """The activation read from `conv`'s output (the nodes to remove after the conv, and the
    fused node), when that output has no other reader; `conv` may be a rewritten one."""
    out = conv.outputs[0]
    if conv.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID", ""):
        return None  # SAME_*: the Conv mapping resolves them; the fused node takes explicit pads
    readers = [i for i in g.readers.get(out, []) if i not in g.removed]
    if len(readers) != len(g.readers.get(out, [])) or not readers or min(readers) < 0:
        return None
    nodes = [g.nodes[i] for i in readers]
    chain: list[Node]
    if len(nodes) == 1:
        act = nodes[0]
        name = _activation_of(g, act)
        if name is None or act.inputs[0] != out:
            return None
        chain, last = [act], act
    elif len(nodes) == 2:  # SiLU: Mul(c, Sigmoid(c)), in either order
        sig = next((n for n in nodes if n.op_type == "Sigmoid"), None)
        mul = next((n for n in nodes if n.op_type == "Mul"), None)
        if sig is None or mul is None or g.sole_reader(sig.outputs[0], "Mul") is not mul:
            return None
        if sorted(mul.inputs) != sorted([out, sig.outputs[0]]):
            return None
        name, chain, last = "silu", [sig, mul], mul
    else:
        return None
    attrs = {**conv.attrs, "activation": name}
    fused = Node(CONV_ACTIVATION, conv.name, conv.inputs, last.outputs, attrs, conv.input_dtypes)
    return chain, fused


def _conv_with_activation(g: _Graph, conv: Node) -> tuple[list[Node], Node] | None:
    found = _conv_activation(g, conv)
    if found is None:
        return None
    chain, fused = found
    return [conv, *chain], fused


def _run_conv_activation(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.onnx.ops_nn import conv_nd

    x, w = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    bias = ctx.tensor(inputs[2]) if len(inputs) > 2 and inputs[2] is not None else None
    return [conv_nd(node, x, w, bias, node.attr("activation"))]


def _run_attention(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.foundations.kind import Bool, Float
    from burn.tensor.module.attention import attention

    q, kt, v = (ctx.tensor(x) for x in inputs[:3])
    mask = ctx.tensor(inputs[3], Bool) if len(inputs) > 3 and inputs[3] is not None else None
    rank = len(q.shape)
    scores = (*q.shape[:-1], kt.shape[-1]) if rank >= 2 else ()
    fits = (
        rank >= 2
        and len(kt.shape) == rank
        and len(v.shape) == rank
        and q.kind is Float
        and kt.dtype is q.dtype
        and v.dtype is q.dtype
        and kt.shape[:-2] == q.shape[:-2] == v.shape[:-2]
        and kt.shape[-2] == q.shape[-1]
        and v.shape[-2] == kt.shape[-1]
        and (mask is None or broadcasts_to(mask.shape, scores))
    )
    if not fits:
        return _run_chain(ctx, node, inputs)
    key = kt.swap_dims(rank - 2, rank - 1)
    return [attention(q, key, v, mask, scale=node.attr("scale"))]


def _run_chain(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    """The rewritten nodes, run as the file wrote them (operands `attention` does not take)."""
    from burn.onnx.ops import REGISTRY

    env = {name: value for name, value in zip(node.inputs, inputs, strict=True) if name}
    for chained in node.attr("chain"):
        run = REGISTRY[chained.op_type].run
        assert run is not None  # MatMul, Mul, Div, Add, Softmax, Cast: all run on tensors
        outs = run(ctx, chained, [env[i] if i else None for i in chained.inputs])
        env.update(zip(chained.outputs, outs, strict=False))
    return [env[name] for name in node.outputs]


FUSED: dict[str, OpInfo] = {
    ATTENTION: OpInfo(ATTENTION, "nn", "written-out attention (burn.onnx.patterns)", _run_attention, None),
    CONV_ACTIVATION: OpInfo(
        CONV_ACTIVATION, "nn", "Conv -> activation (burn.onnx.patterns)", _run_conv_activation, None
    ),
}


def rewrite(
    nodes: Sequence[Node], constants: dict[str, np.ndarray], outputs: Sequence[str]
) -> tuple[list[Node], dict[str, np.ndarray], dict[str, int]]:
    """`nodes` with the chains above replaced by their fused node, the constants with the masks
    those read added, and how many chains of each kind were rewritten."""
    g = _Graph(nodes, constants, outputs)
    placed: dict[int, Node] = {}  # index of a chain's last node -> the fused node run there
    fresh: dict[str, np.ndarray] = {}
    counts = {"gelu": 0, "gelu_tanh": 0, "attention": 0, "padded_conv": 0, "conv_activation": 0}
    for node in g.nodes:
        found: tuple[list[Node], Node] | None = None
        kind = ""
        if node.op_type == "Erf":
            found, kind = _erf_gelu(g, node), "gelu"
        elif node.op_type == "Tanh":
            found, kind = _tanh_gelu(g, node), "gelu_tanh"
        elif node.op_type == "Softmax":
            found, kind = _attention(g, node, fresh), "attention"
        elif node.op_type == "Pad":
            found, kind = _padded_conv(g, node), "padded_conv"
        elif node.op_type == "Conv":
            found, kind = _conv_with_activation(g, node), "conv_activation"
        if found is None:
            continue
        chain, fused = found
        indices = {g.index(n) for n in chain}
        if indices & g.removed:
            continue
        g.removed |= indices
        placed[max(indices)] = fused  # run where the chain ended: every operand exists there
        counts[kind] += 1
    if not placed:
        return list(nodes), constants, counts
    out: list[Node] = []
    for index, node in enumerate(g.nodes):
        if index in placed:
            out.append(placed[index])
        elif index not in g.removed:
            out.append(node)
    used = {n for node in out for n in node.inputs if n}
    return out, {**constants, **{k: v for k, v in fresh.items() if k in used}}, counts


__all__ = ["ATTENTION", "CONV_ACTIVATION", "FUSED", "rewrite"]
