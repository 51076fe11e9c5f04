"""ONNX writers of the module contract ops: activations, convolutions, pooling, embedding,
scaled dot-product attention, layer normalization, the LSTM cell and the LSTM sequence
(`burn.backend.ops.activation`, ``conv``, ``pool``, ``embedding``, ``attention``, ``norm``,
``rnn``).

Ops without an ONNX operator of their own at opset 17 are written as the few standard nodes of
their definition in the contract (GELU from ``Erf``, the attention weights with burn's rule for
fully masked rows, the LSTM cell's gates; the LSTM sequence unrolled over its steps, each step's
``MatMul`` and cell).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from burn.backend.ir import CallIR, TensorIR
from burn.onnx.exporter.graph import ExportError, Graph
from burn.onnx.exporter.table import exporter


def _x(call: CallIR, i: int = 0) -> TensorIR:
    t = call.args[i]
    assert isinstance(t, TensorIR)
    return t


def _simple(onnx_op: str, **attrs_of: Any) -> Any:
    """An activation that is one ONNX op; `attrs_of` maps attribute names to argument indexes."""

    def write(g: Graph, call: CallIR) -> list[str]:
        attrs: dict[str, Any] = {k: float(call.args[i]) for k, i in attrs_of.items()}
        return [g.node(onnx_op, [g.name(_x(call))], **attrs)]

    return write


# -- activations -------------------------------------------------------------------------------
exporter("relu")(_simple("Relu"))
exporter("sigmoid")(_simple("Sigmoid"))
exporter("leaky_relu")(_simple("LeakyRelu", alpha=1))
exporter("elu")(_simple("Elu", alpha=1))
exporter("hard_sigmoid")(_simple("HardSigmoid", alpha=1, beta=2))
exporter("softsign")(_simple("Softsign"))


@exporter("softmax", "log_softmax")
def _softmax(g: Graph, call: CallIR) -> list[str]:
    op = "Softmax" if call.op == "softmax" else "LogSoftmax"
    return [g.node(op, [g.name(_x(call))], axis=int(call.args[1]))]


@exporter("relu6", "hardtanh")
def _clip(g: Graph, call: CallIR) -> list[str]:
    x = _x(call)
    lo, hi = (0.0, 6.0) if call.op == "relu6" else (float(call.args[1]), float(call.args[2]))
    return [g.node("Clip", [g.name(x), g.scalar(lo, x.dtype), g.scalar(hi, x.dtype)])]


@exporter("gelu")
def _gelu(g: Graph, call: CallIR) -> list[str]:
    # 0.5 * x * (1 + erf(x / sqrt(2))), the contract's definition (ONNX's Gelu needs opset 20)
    x = _x(call)
    xn, dt = g.name(x), x.dtype
    erf = g.node("Erf", [g.node("Mul", [xn, g.scalar(1 / math.sqrt(2), dt)])])
    cdf = g.node("Add", [erf, g.scalar(1.0, dt)])
    return [g.node("Mul", [g.node("Mul", [xn, cdf]), g.scalar(0.5, dt)])]


@exporter("gelu_approximate")
def _gelu_tanh(g: Graph, call: CallIR) -> list[str]:
    # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
    x = _x(call)
    xn, dt = g.name(x), x.dtype
    cube = g.node("Mul", [g.node("Mul", [xn, xn]), xn])
    inner = g.node("Add", [xn, g.node("Mul", [cube, g.scalar(0.044715, dt)])])
    t = g.node("Tanh", [g.node("Mul", [inner, g.scalar(math.sqrt(2 / math.pi), dt)])])
    return [g.node("Mul", [g.node("Mul", [xn, g.node("Add", [t, g.scalar(1.0, dt)])]), g.scalar(0.5, dt)])]


@exporter("silu")
def _silu(g: Graph, call: CallIR) -> list[str]:
    xn = g.name(_x(call))
    return [g.node("Mul", [xn, g.node("Sigmoid", [xn])])]


@exporter("softplus")
def _softplus(g: Graph, call: CallIR) -> list[str]:
    x, beta = _x(call), float(call.args[1])
    if beta == 1.0:
        return [g.node("Softplus", [g.name(x)])]
    scaled = g.node("Softplus", [g.node("Mul", [g.name(x), g.scalar(beta, x.dtype)])])
    return [g.node("Div", [scaled, g.scalar(beta, x.dtype)])]


# -- convolution and pooling -------------------------------------------------------------------
def _tuple(v: Any, n: int) -> list[int]:
    return [int(i) for i in v] if isinstance(v, tuple | list) else [int(v)] * n


def _window_attrs(x: Any, kernel: Any, stride: Any, padding: Any, dilation: Any = None) -> dict[str, Any]:
    """The sliding-window attributes ONNX's Conv, MaxPool and AveragePool share, from burn's
    per-dim ints or tuples: ``kernel_shape``, ``strides``, ``pads`` (burn pads both ends alike,
    ONNX lists the starts then the ends) and, where given, ``dilations``."""
    n = len(x.shape) - 2
    pads = _tuple(padding, n)
    attrs: dict[str, Any] = {"kernel_shape": _tuple(kernel, n), "strides": _tuple(stride, n)}
    attrs["pads"] = pads + pads
    if dilation is not None:
        attrs["dilations"] = _tuple(dilation, n)
    return attrs


@exporter("conv1d", "conv2d", "conv3d")
def _conv(g: Graph, call: CallIR) -> list[str]:
    x, w, bias, stride, padding, dilation, groups = call.args[:7]
    inputs = [g.name(x), g.name(w)] + ([] if bias is None else [g.name(bias)])
    attrs = _window_attrs(x, list(w.shape[2:]), stride, padding, dilation)
    return [g.node("Conv", inputs, group=int(groups), **attrs)]


@exporter("max_pool1d", "max_pool2d", "max_pool3d")
def _max_pool(g: Graph, call: CallIR) -> list[str]:
    x, kernel, stride, padding, dilation = call.args[:5]
    return [g.node("MaxPool", [g.name(x)], **_window_attrs(x, kernel, stride, padding, dilation))]


@exporter("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(g: Graph, call: CallIR) -> list[str]:
    x, kernel, stride, padding, count_include_pad = call.args[:5]
    attrs = _window_attrs(x, kernel, stride, padding)
    return [g.node("AveragePool", [g.name(x)], count_include_pad=int(bool(count_include_pad)), **attrs)]


@exporter("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d")
def _adaptive_avg_pool(g: Graph, call: CallIR) -> list[str]:
    x = _x(call)
    n = len(x.shape) - 2
    out = _tuple(call.args[1], n)
    if all(o == 1 for o in out):
        return [g.node("GlobalAveragePool", [g.name(x)])]
    size = g.static_dims(x, call.op, range(2, n + 2))
    if any(s % o for s, o in zip(size, out, strict=True)):
        raise ExportError(
            f"{call.op}: input size {list(size)} is not a multiple of output size {out}: ONNX has no "
            "adaptive average pooling with uneven bins"
        )
    kernel = [s // o for s, o in zip(size, out, strict=True)]
    return [g.node("AveragePool", [g.name(x)], kernel_shape=kernel, strides=kernel)]


# -- embedding -----------------------------------------------------------------------------------
@exporter("embedding")
def _embedding(g: Graph, call: CallIR) -> list[str]:
    return [g.node("Gather", [g.name(_x(call, 0)), g.name(_x(call, 1))], axis=0)]


# -- attention ------------------------------------------------------------------------------------
@exporter("attention")
def _attention(g: Graph, call: CallIR) -> list[str]:
    q, k, v, mask, scale, causal = call.args[:6]
    rank = len(q.shape)
    dt = q.dtype
    perm = list(range(rank))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    kt = g.node("Transpose", [g.name(k)], perm=perm)
    scores = g.node("Mul", [g.node("MatMul", [g.name(q), kt]), g.scalar(float(scale), dt)])
    masked = None if mask is None else g.name(mask)
    if causal:
        (rows,) = g.static_dims(q, "attention (causal)", [rank - 2])
        (cols,) = g.static_dims(k, "attention (causal)", [rank - 2])
        upper = g.const(np.triu(np.ones((rows, cols), bool), 1), "causal")
        masked = upper if masked is None else g.node("Or", [masked, upper])
    if masked is not None:
        scores = g.node("Where", [masked, g.scalar(float("-inf"), dt), scores])
    # the contract's rule: a row with every key masked gives weights 0 (not NaN)
    top = g.reduce("ReduceMax", scores, [rank - 1], 1)
    top = g.node("Where", [g.node("IsInf", [top]), g.scalar(0.0, dt), top])
    e = g.node("Exp", [g.node("Sub", [scores, top])])
    total = g.reduce("ReduceSum", e, [rank - 1], 1)
    total = g.node("Where", [g.node("Equal", [total, g.scalar(0.0, dt)]), g.scalar(1.0, dt), total])
    return [g.node("MatMul", [g.node("Div", [e, total]), g.name(v)])]


# -- norm -----------------------------------------------------------------------------------------
@exporter("layer_norm")
def _layer_norm(g: Graph, call: CallIR) -> list[str]:
    x, gamma, beta, epsilon = call.args[:4]
    assert isinstance(x, TensorIR) and isinstance(gamma, TensorIR)
    names = [g.name(x), g.name(gamma)] + ([g.name(beta)] if isinstance(beta, TensorIR) else [])
    return [g.node("LayerNormalization", names, axis=-1, epsilon=float(epsilon))]


# -- recurrent cells ------------------------------------------------------------------------------
def _lstm_cell_nodes(g: Graph, gates: str, cell: str, hidden: int) -> str:
    """The cell's nodes: gates [B, 4H] as (i, f, o, g); c' = f * c + i * g, h = o * tanh(c');
    returns the name of ``[h, c']``."""
    i, f, o, c = g.node("Split", [gates, g.const(np.array([hidden] * 4, np.int64))], n_out=4, axis=-1)
    i, f, o = (g.node("Sigmoid", [t]) for t in (i, f, o))
    c = g.node("Tanh", [c])
    new_cell = g.node("Add", [g.node("Mul", [f, cell]), g.node("Mul", [i, c])])
    h = g.node("Mul", [o, g.node("Tanh", [new_cell])])
    return str(g.node("Concat", [h, new_cell], axis=-1))


@exporter("lstm_cell")
def _lstm_cell(g: Graph, call: CallIR) -> list[str]:
    gates, cell = _x(call, 0), _x(call, 1)
    return [_lstm_cell_nodes(g, g.name(gates), g.name(cell), int(cell.shape[-1]))]


@exporter("lstm_sequence")
def _lstm_sequence(g: Graph, call: CallIR) -> list[str]:
    # Unrolled, as the op's definition: step t's gates are proj[t] + h @ weight, then the cell.
    # (ONNX's LSTM node would redo the input projection that proj already holds.)
    proj, weight, cell, hidden_state = (_x(call, i) for i in range(4))
    reverse = bool(call.args[4])
    (steps,) = g.static_dims(proj, "lstm_sequence", (0,))
    hidden = int(cell.shape[-1])
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    h, c = g.name(hidden_state), g.name(cell)
    rows: list[str] = [""] * steps
    halves, first = g.const(np.array([hidden, hidden], np.int64)), g.const(np.array([0], np.int64))
    for t in order:
        # (constants are at least 1-D, so the step is gathered as [1, B, 4H] and squeezed)
        step = g.node("Gather", [g.name(proj), g.const(np.array([t], np.int64))], axis=0)
        step = g.node("Squeeze", [step, first])
        gates = g.node("Add", [step, g.node("MatMul", [h, g.name(weight)])])
        hc = _lstm_cell_nodes(g, gates, c, hidden)
        h, c = g.node("Split", [hc, halves], n_out=2, axis=-1)
        rows[t] = g.node("Unsqueeze", [g.node("Concat", [hc, gates], axis=-1), first])  # [1, B, 6H]
    return [g.node("Concat", rows, axis=0)]
