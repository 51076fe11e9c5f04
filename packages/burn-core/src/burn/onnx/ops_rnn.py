"""Recurrent ops: ``LSTM`` and ``GRU`` as ONNX defines them (``torch.onnx.export`` of
``nn.LSTM`` / ``nn.GRU`` emits one node per layer), unrolled over time with burn tensor ops, so
they run and differentiate on every backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from burn import activation as act
from burn.onnx.errors import OnnxError
from burn.onnx.ops import register
from burn.onnx.ops_nn import matmul
from burn.onnx.runtime import ints
from burn.tensor.module.rnn import gru_cell, lstm_sequence

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Ctx, Value
    from burn.tensor.tensor import Tensor

_SIGMOID: Callable[[Tensor], Tensor] = act.sigmoid
_TANH: Callable[[Tensor], Tensor] = lambda t: t.tanh()  # noqa: E731
_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"Sigmoid": _SIGMOID, "Tanh": _TANH, "Relu": act.relu}


def _burn_gate_order(t: Tensor, dim: int) -> Tensor:
    """Blocks (input, output, forget, cell) along `dim` reordered to `lstm_cell`'s (input,
    forget, output, cell)."""
    from burn.tensor.tensor import Tensor

    i, o, f, c = t.chunk(4, dim)
    return Tensor.cat([i, f, o, c], dim)


def _opt(inputs: Sequence[Any], i: int) -> Any:
    return inputs[i] if len(inputs) > i and inputs[i] is not None else None


def _check(
    node: Node, ctx: Ctx, inputs: Sequence[Any], defaults: list[str], seq_len: int
) -> list[Callable[[Tensor], Tensor]]:
    """The activations (f, g[, h]) of each direction; refuses what is not supported."""
    if node.attr("clip") is not None:
        raise OnnxError(f"node {node.name!r} ({node.op_type}): the clip attribute is not supported")
    if node.attr("input_forget", 0):
        raise OnnxError(f"node {node.name!r} ({node.op_type}): input_forget=1 is not supported")
    lens = _opt(inputs, 4)
    if lens is not None and any(n != seq_len for n in ints(ctx.host(lens))):
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): sequence_lens shorter than the sequence (packed "
            "sequences) are not supported"
        )
    names = node.attr("activations")
    dirs = 2 if node.attr("direction", "forward") == "bidirectional" else 1
    names = names if names else defaults * dirs
    try:
        return [_ACTIVATIONS[n] for n in names]
    except KeyError as exc:
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): activation {exc.args[0]!r} is not supported "
            f"(supported: {', '.join(_ACTIVATIONS)})"
        ) from None


def _layout_in(node: Node, x: Tensor) -> Tensor:
    return x.swap_dims(0, 1) if node.attr("layout", 0) else x  # -> [seq, batch, input]


def _outputs(node: Node, ys: list[Tensor], finals: list[list[Tensor]]) -> list[Value]:
    """Y ``[seq, dirs, batch, hidden]`` and the final states ``[dirs, batch, hidden]`` (layout 0),
    or ``[batch, seq, dirs, hidden]`` and ``[batch, dirs, hidden]`` (layout 1)."""
    from burn.tensor.tensor import Tensor

    y = Tensor.stack(ys, 1)
    states = [Tensor.stack(f, 0) for f in finals]
    if node.attr("layout", 0):
        y = y.permute([2, 0, 1, 3])
        states = [s.swap_dims(0, 1) for s in states]
    return [y, *states]


def _directions(node: Node) -> list[bool]:
    direction = node.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise OnnxError(f"node {node.name!r} ({node.op_type}): unknown direction {direction!r}")
    return {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]


def _initial(
    ctx: Ctx, node: Node, inputs: Sequence[Any], i: int, d: int, batch: int, hidden: int, like: Tensor
) -> Tensor:
    value = _opt(inputs, i)
    if value is None:
        return _zeros(like, batch, hidden)
    t = ctx.tensor(value)
    if node.attr("layout", 0):
        t = t.swap_dims(0, 1)
    return t.narrow(0, d, 1).squeeze(0)


def _zeros(like: Tensor, batch: int, hidden: int) -> Tensor:
    from burn.tensor.tensor import Tensor

    return Tensor.zeros((batch, hidden), like.device, dtype=like.dtype, backend=like.backend)


@register("LSTM", "recurrent", "clip, input_forget and packed sequence_lens are not supported")
def _lstm(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = _layout_in(node, ctx.tensor(inputs[0]))
    seq, batch = x.shape[0], x.shape[1]
    fns = _check(node, ctx, inputs, ["Sigmoid", "Tanh", "Tanh"], seq)
    w, r = ctx.tensor(inputs[1]), ctx.tensor(inputs[2])
    hidden = node.attr("hidden_size") or r.shape[-1]
    b = ctx.tensor(inputs[3]) if _opt(inputs, 3) is not None else None
    p = ctx.tensor(inputs[7]) if _opt(inputs, 7) is not None else None
    ys: list[Tensor] = []
    hs: list[Tensor] = []
    cs: list[Tensor] = []
    for d, reverse in enumerate(_directions(node)):
        f, g, h_act = fns[3 * d : 3 * d + 3]
        wd, rd = w.narrow(0, d, 1).squeeze(0), r.narrow(0, d, 1).squeeze(0)  # [4H, I], [4H, H]
        bd = None if b is None else b.narrow(0, d, 1).reshape((2, 4 * hidden))
        # The standard cell (no peepholes, sigmoid and tanh): one `lstm_cell` op per step, its
        # gates reordered once from ONNX's input, output, forget, cell to input, forget, output, cell.
        fused = p is None and f is _SIGMOID and g is _TANH and h_act is _TANH
        if fused:
            wd, rd = _burn_gate_order(wd, 0), _burn_gate_order(rd, 0)
            bd = None if bd is None else _burn_gate_order(bd, 1)
        xw = matmul(x, wd.transpose())  # every step's input projection at once: [seq, batch, 4H]
        if bd is not None:
            xw = xw + (bd.narrow(0, 0, 1) + bd.narrow(0, 1, 1))
        peep = (
            None if p is None else [p.narrow(0, d, 1).reshape((3, hidden)).narrow(0, i, 1) for i in range(3)]
        )
        h = _initial(ctx, node, inputs, 5, d, batch, hidden, x)
        c = _initial(ctx, node, inputs, 6, d, batch, hidden, x)
        rt = rd.transpose()
        if fused:
            # The whole direction as one op: every step's recurrent GEMM and cell, one autodiff node.
            hc = lstm_sequence(xw, rt, c, h, reverse)  # [seq, batch, 6H]: hidden, cell, gates
            last = hc[0 if reverse else seq - 1]
            ys.append(hc.narrow(2, 0, hidden))
            hs.append(last.narrow(1, 0, hidden))
            cs.append(last.narrow(1, hidden, hidden))
            continue
        out: list[Tensor | None] = [None] * seq
        for t in range(seq - 1, -1, -1) if reverse else range(seq):
            gates = xw.narrow(0, t, 1).squeeze(0) + h.matmul(rt)
            gi, go, gf, gc = gates.chunk(4, 1)  # ONNX gate order: input, output, forget, cell
            if peep is not None:
                gi, gf = gi + peep[0] * c, gf + peep[2] * c
            i_t, f_t = f(gi), f(gf)
            c = f_t * c + i_t * g(gc)
            o_t = f(go + peep[1] * c) if peep is not None else f(go)
            h = o_t * h_act(c)
            out[t] = h
        from burn.tensor.tensor import Tensor

        ys.append(Tensor.stack([o for o in out if o is not None], 0))
        hs.append(h)
        cs.append(c)
    return _outputs(node, ys, [hs, cs])[: max(1, len(node.outputs))]


@register("GRU", "recurrent", "clip and packed sequence_lens are not supported")
def _gru(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.tensor.tensor import Tensor

    x = _layout_in(node, ctx.tensor(inputs[0]))
    seq, batch = x.shape[0], x.shape[1]
    fns = _check(node, ctx, inputs, ["Sigmoid", "Tanh"], seq)
    w, r = ctx.tensor(inputs[1]), ctx.tensor(inputs[2])
    hidden = node.attr("hidden_size") or r.shape[-1]
    b = ctx.tensor(inputs[3]) if _opt(inputs, 3) is not None else None
    before_reset = node.attr("linear_before_reset", 0)
    ys: list[Tensor] = []
    hs: list[Tensor] = []
    for d, reverse in enumerate(_directions(node)):
        f, g = fns[2 * d : 2 * d + 2]
        wd, rd = w.narrow(0, d, 1).squeeze(0), r.narrow(0, d, 1).squeeze(0)  # [3H, I], [3H, H]
        xw = matmul(x, wd.transpose())
        wb = rb = None
        if b is not None:
            bd = b.narrow(0, d, 1).reshape((2, 3 * hidden))
            wb, rb = bd.narrow(0, 0, 1), bd.narrow(0, 1, 1)
            xw = xw + wb
        rz, rh = rd.narrow(0, 0, 2 * hidden).transpose(), rd.narrow(0, 2 * hidden, hidden).transpose()
        rb_zr = None if rb is None else rb.narrow(1, 0, 2 * hidden)
        rb_h = None if rb is None else rb.narrow(1, 2 * hidden, hidden)
        h = _initial(ctx, node, inputs, 5, d, batch, hidden, x)
        out: list[Tensor | None] = [None] * seq
        # The reset gate after the hidden projection with sigmoid and tanh is `gru_cell` (one op
        # per step; ONNX's gate order, update, reset, hidden, is already the op's).
        fused = bool(before_reset) and f is _SIGMOID and g is _TANH
        rdt = rd.transpose() if fused else None
        for t in range(seq - 1, -1, -1) if reverse else range(seq):
            xt = xw.narrow(0, t, 1).squeeze(0)
            if rdt is not None:
                hh_all = h.matmul(rdt)
                if rb is not None:
                    hh_all = hh_all + rb
                h = gru_cell(xt, hh_all, h)
                out[t] = h
                continue
            x_zr, x_h = xt.narrow(1, 0, 2 * hidden), xt.narrow(1, 2 * hidden, hidden)
            h_zr = h.matmul(rz)
            if rb_zr is not None:
                h_zr = h_zr + rb_zr
            z_t, r_t = f(x_zr + h_zr).chunk(2, 1)  # ONNX gate order: update, reset, hidden
            if before_reset:
                hh = h.matmul(rh)
                if rb_h is not None:
                    hh = hh + rb_h
                n_t = g(x_h + r_t * hh)
            else:
                hh = (r_t * h).matmul(rh)
                if rb_h is not None:
                    hh = hh + rb_h
                n_t = g(x_h + hh)
            h = (1.0 - z_t) * n_t + z_t * h
            out[t] = h
        ys.append(Tensor.stack([o for o in out if o is not None], 0))
        hs.append(h)
    return _outputs(node, ys, [hs])[: max(1, len(node.outputs))]


@register("RNN", "recurrent", "clip and packed sequence_lens are not supported")
def _rnn(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.tensor.tensor import Tensor

    x = _layout_in(node, ctx.tensor(inputs[0]))
    seq, batch = x.shape[0], x.shape[1]
    fns = _check(node, ctx, inputs, ["Tanh"], seq)
    w, r = ctx.tensor(inputs[1]), ctx.tensor(inputs[2])
    hidden = node.attr("hidden_size") or r.shape[-1]
    b = ctx.tensor(inputs[3]) if _opt(inputs, 3) is not None else None
    ys: list[Tensor] = []
    hs: list[Tensor] = []
    for d, reverse in enumerate(_directions(node)):
        f = fns[d]
        wd, rd = w.narrow(0, d, 1).squeeze(0), r.narrow(0, d, 1).squeeze(0)  # [H, I], [H, H]
        xw = matmul(x, wd.transpose())  # every step's input projection at once: [seq, batch, H]
        if b is not None:
            bd = b.narrow(0, d, 1).reshape((2, hidden))
            xw = xw + (bd.narrow(0, 0, 1) + bd.narrow(0, 1, 1))
        h = _initial(ctx, node, inputs, 5, d, batch, hidden, x)
        rt = rd.transpose()
        out: list[Tensor | None] = [None] * seq
        for t in range(seq - 1, -1, -1) if reverse else range(seq):
            h = f(xw.narrow(0, t, 1).squeeze(0) + h.matmul(rt))
            out[t] = h
        ys.append(Tensor.stack([o for o in out if o is not None], 0))
        hs.append(h)
    return _outputs(node, ys, [hs])[: max(1, len(node.outputs))]
