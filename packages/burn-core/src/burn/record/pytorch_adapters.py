"""Layer adapters: where each burn param of a built-in layer lives in a PyTorch ``state_dict``.

The table `ADAPTERS` is data: one `LayerAdapter` per burn layer class, each a tuple of `Rule`.
`torch_sources` applies it to a module tree, `load_pytorch_safetensors` loads through it, and
`render_table` writes it as the Markdown table of ``docs/guides/pytorch-weights.md`` (regenerate
with ``python -m burn.record.pytorch_table docs/guides/pytorch-weights.md``; a test checks that
the guide holds the rendered table).

A `Rule` names a path relative to the layer (``burn``: a param, or a submodule, ``*`` matching any
list index) and where it is in PyTorch (``torch``: a key relative to the layer's PyTorch prefix).
A param rule may take one of ``count`` equal row blocks of a packed tensor (``part``: PyTorch packs
the query/key/value projections and the LSTM/GRU gates along dim 0) and transpose it (burn's
`Linear` stores ``[in, out]``, PyTorch ``[out, in]``). A submodule rule renames the prefix of
everything under it (``""`` keeps PyTorch's flat names: a stacked LSTM's levels share one
prefix) and may set context values that PyTorch keys of the layers below use (``{layer}``, the
level of a stack, default ``0``; ``{dir}``, ``""`` or ``"_reverse"``). A rule with ``when`` applies
only if that bool field of the layer is true (``"!field"``: false). Rules of an outer layer win
over those of the layers inside it; paths that no rule names keep their names.

The same table maps the other way (`torch_state`, behind `burn.record.pytorch_state_dict` and
the savers): each param goes back under its PyTorch key, transposed back, and the row blocks of a
packed tensor are stacked again in `put`, the inverse of `take`. A layer's `TorchBuffer` entries
name PyTorch buffers burn has no counterpart for (``BatchNorm``'s ``num_batches_tracked``): they
are skipped on load (`SKIP_KEYS` is made from them) and written with a fixed value on export, so
that PyTorch's strict ``load_state_dict`` finds every key it expects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from burn.record.errors import RecordError

__all__ = [
    "ADAPTERS",
    "LayerAdapter",
    "Rule",
    "Source",
    "TorchBuffer",
    "adapters_with",
    "put",
    "render_table",
    "take",
    "torch_sources",
    "torch_state",
    "write_table",
]


@dataclass(frozen=True)
class Rule:
    """Where the burn path `burn` (relative to its layer) is in a PyTorch state dict.

    Attributes:
        burn: a param (``"query.weight"``) or a submodule (``"mha"``, ``"layers.*"``).
        torch: the PyTorch key or prefix, relative to the layer's; ``{i}`` is the list index that
            ``*`` matched, ``{layer}`` and ``{dir}`` come from the enclosing layers' `sets`.
        part: ``(index, count)``: row block `index` of `count` equal blocks along dim 0.
        transpose: transpose the (2-D) tensor after taking the block.
        when: the name of a bool field of the layer the rule depends on (``"!name"``: when false).
        sets: context values for the keys under a submodule (templates, like `torch`).
    """

    burn: str
    torch: str
    part: tuple[int, int] | None = None
    transpose: bool = False
    when: str | None = None
    sets: Mapping[str, str] = field(default_factory=dict)

    def applies(self, layer: Any) -> bool:
        if self.when is None:
            return True
        name = self.when.lstrip("!")
        return bool(getattr(layer, name, False)) != self.when.startswith("!")


@dataclass(frozen=True)
class TorchBuffer:
    """A PyTorch buffer of a layer with no burn counterpart: skipped when loading, written as a
    constant of `dtype` and `shape` holding `value` when saving for PyTorch.

    Attributes:
        torch: the key, relative to the layer's PyTorch prefix.
        value: what every element holds.
        dtype: a NumPy dtype name (``"int64"``).
        shape: the buffer's shape (``()``: a scalar).
        why: for the docs: why that value.
    """

    torch: str
    value: int | float | bool
    dtype: str
    shape: tuple[int, ...] = ()
    why: str = ""

    def array(self) -> np.ndarray:
        return np.full(self.shape, self.value, dtype=self.dtype)


@dataclass(frozen=True)
class LayerAdapter:
    """The rules of one burn layer class (matched by name along the MRO; ``BatchNorm2d`` also
    matches ``BatchNorm``), with its PyTorch counterpart for the docs, the conditions without
    which the layer has no PyTorch counterpart (``(field, reason)``: loading and saving raise),
    and the PyTorch buffers it has no field for (`TorchBuffer`)."""

    layer: str
    torch_layer: str
    rules: tuple[Rule, ...]
    requires: tuple[tuple[str, str], ...] = ()
    buffers: tuple[TorchBuffer, ...] = ()


class Source(NamedTuple):
    """Where one burn param is read from: a key, an optional row block and a transpose."""

    key: str
    part: tuple[int, int] | None
    transpose: bool


def _norm(layer: str, torch_layer: str) -> LayerAdapter:
    return LayerAdapter(layer, torch_layer, (Rule("gamma", "weight"), Rule("beta", "bias")))


def _gates(gates: tuple[str, ...], suffix: str) -> tuple[Rule, ...]:
    """The rules of gate controllers packed in PyTorch's order (`gates`) into
    ``weight_ih``/``weight_hh``/``bias_ih``/``bias_hh`` + `suffix`."""
    rules = []
    count = len(gates)
    for index, gate in enumerate(gates):
        for ours, theirs in (("input_transform", "ih"), ("hidden_transform", "hh")):
            rules.append(Rule(f"{gate}.{ours}.weight", f"weight_{theirs}{suffix}", (index, count), True))
            rules.append(Rule(f"{gate}.{ours}.bias", f"bias_{theirs}{suffix}", (index, count)))
    return tuple(rules)


_SUFFIX = "_l{layer}{dir}"
_DIRECTIONS = (Rule("forward", "", sets={"dir": ""}), Rule("reverse", "", sets={"dir": "_reverse"}))
_LEVELS = (Rule("layers.*", "", sets={"layer": "{i}"}),)
_FF = (Rule("pwff.linear_inner", "linear1"), Rule("pwff.linear_outer", "linear2"))

ADAPTERS: tuple[LayerAdapter, ...] = (
    LayerAdapter("Linear", "Linear", (Rule("weight", "weight", transpose=True), Rule("bias", "bias"))),
    LayerAdapter(
        "BatchNorm",
        "BatchNorm1d/2d",
        _norm("", "").rules,
        buffers=(
            TorchBuffer(
                "num_batches_tracked",
                0,
                "int64",
                why="burn does not count batches; PyTorch reads the count only with momentum=None",
            ),
        ),
    ),
    _norm("LayerNorm", "LayerNorm"),
    _norm("GroupNorm", "GroupNorm"),
    _norm("InstanceNorm", "InstanceNorm1d/2d (affine=True)"),
    LayerAdapter("RmsNorm", "RMSNorm", (Rule("gamma", "weight"),)),
    LayerAdapter("PRelu", "PReLU", (Rule("alpha", "weight"),)),
    LayerAdapter(
        "MultiHeadAttention",
        "MultiheadAttention (kdim = vdim = embed_dim)",
        (
            Rule("query.weight", "in_proj_weight", (0, 3), True),
            Rule("key.weight", "in_proj_weight", (1, 3), True),
            Rule("value.weight", "in_proj_weight", (2, 3), True),
            Rule("query.bias", "in_proj_bias", (0, 3)),
            Rule("key.bias", "in_proj_bias", (1, 3)),
            Rule("value.bias", "in_proj_bias", (2, 3)),
            Rule("output", "out_proj"),
        ),
    ),
    LayerAdapter(
        "TransformerEncoderLayer",
        "TransformerEncoderLayer",
        (
            Rule("mha", "self_attn"),
            *_FF,
            # Post-norm: norm_1 after attention, norm_2 after the feed-forward, as PyTorch.
            Rule("norm_1", "norm1", when="!norm_first"),
            Rule("norm_2", "norm2", when="!norm_first"),
            # Pre-norm: burn's norm_2 comes before attention (Burn's field names), PyTorch's norm1.
            Rule("norm_2", "norm1", when="norm_first"),
            Rule("norm_1", "norm2", when="norm_first"),
        ),
    ),
    LayerAdapter(
        "TransformerDecoderLayer",
        "TransformerDecoderLayer",
        (
            Rule("self_attn", "self_attn"),
            Rule("cross_attn", "multihead_attn"),
            *_FF,
            Rule("norm_1", "norm1", when="!norm_first"),
            Rule("norm_2", "norm2", when="!norm_first"),
            Rule("norm_3", "norm3", when="!norm_first"),
            # Pre-norm: burn uses norm_3, norm_1, norm_2 in turn; PyTorch norm1, norm2, norm3.
            Rule("norm_3", "norm1", when="norm_first"),
            Rule("norm_1", "norm2", when="norm_first"),
            Rule("norm_2", "norm3", when="norm_first"),
        ),
    ),
    LayerAdapter("TransformerEncoder", "TransformerEncoder (no final norm)", (Rule("layers", "layers"),)),
    LayerAdapter("TransformerDecoder", "TransformerDecoder (no final norm)", (Rule("layers", "layers"),)),
    LayerAdapter(
        "Lstm",
        "LSTM (one level, one direction)",
        _gates(("input_gate", "forget_gate", "cell_gate", "output_gate"), _SUFFIX),
    ),
    LayerAdapter(
        "Gru",
        "GRU (one level, one direction)",
        _gates(("reset_gate", "update_gate", "new_gate"), _SUFFIX),
        requires=(
            (
                "reset_after",
                "PyTorch's GRU applies the reset gate after the hidden projection: build the Gru "
                "with reset_after=True",
            ),
        ),
    ),
    LayerAdapter("Rnn", "RNN (one level, one direction)", _gates(("gate",), _SUFFIX)),
    LayerAdapter("BiLstm", "LSTM (bidirectional=True)", _DIRECTIONS),
    LayerAdapter("BiGru", "GRU (bidirectional=True)", _DIRECTIONS),
    LayerAdapter("BiRnn", "RNN (bidirectional=True)", _DIRECTIONS),
    LayerAdapter("StackedLstm", "LSTM (num_layers, bidirectional)", _LEVELS),
    LayerAdapter("StackedGru", "GRU (num_layers, bidirectional)", _LEVELS),
    LayerAdapter("StackedRnn", "RNN (num_layers, bidirectional)", _LEVELS),
)
"""The built-in layers' adapters (see the module docstring)."""

SKIP_KEYS: tuple[str, ...] = tuple(
    dict.fromkeys(rf"(^|\.){re.escape(b.torch)}$" for a in ADAPTERS for b in a.buffers)
)
"""Regexes of PyTorch keys that have no burn counterpart and are ignored by default (the
adapters' `TorchBuffer` keys: ``num_batches_tracked``)."""

_DEFAULT_CONTEXT = {"layer": "0", "dir": ""}


def adapters_with(
    layer_fields: Mapping[str, Mapping[str, str]] | None = None,
    *,
    adapters: Iterable[LayerAdapter] = ADAPTERS,
    transpose_linear: bool = True,
) -> dict[str, LayerAdapter]:
    """`adapters` by layer name, with `layer_fields` (``{layer class: {burn field: torch
    field}}``) added as plain renames taking precedence, and Linear's transpose dropped when
    `transpose_linear` is False."""
    table = {a.layer: a for a in adapters}
    if not transpose_linear and "Linear" in table:
        linear = table["Linear"]
        table["Linear"] = LayerAdapter(
            linear.layer,
            linear.torch_layer,
            tuple(Rule(r.burn, r.torch, r.part, False, r.when, r.sets) for r in linear.rules),
            linear.requires,
            linear.buffers,
        )
    for name, fields in (layer_fields or {}).items():
        extra = tuple(Rule(burn, torch) for burn, torch in fields.items())
        old = table.get(name)
        rules = extra + (old.rules if old else ())
        table[name] = LayerAdapter(
            name,
            old.torch_layer if old else name,
            rules,
            old.requires if old else (),
            old.buffers if old else (),
        )
    return table


def _adapter_for(owner: Any, table: Mapping[str, LayerAdapter]) -> LayerAdapter | None:
    for cls in type(owner).__mro__:
        name = cls.__name__
        if name in table:
            return table[name]
        base = re.sub(r"\d+d$", "", name)  # BatchNorm2d -> BatchNorm
        if base in table:
            return table[base]
    return None


class _Pending(NamedTuple):
    """A rule on its way down: the path segments still to match, the PyTorch prefix and context
    of the layer that owns it, and the list indices matched so far."""

    rest: tuple[str, ...]
    rule: Rule
    prefix: str
    context: dict[str, str]
    matched: str | None


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix and name else prefix or name


def torch_sources(module: Any, table: Mapping[str, LayerAdapter] | None = None) -> dict[str, Source]:
    """Each param path of `module` -> where it is in a PyTorch state dict of the same model.

    Raises:
        RecordError: a layer whose options have no PyTorch counterpart (e.g. a `Gru` with
            ``reset_after=False``).

    Example:
        >>> from burn import nn
        >>> src = torch_sources(nn.MultiHeadAttentionConfig(8, 2).init(device))  # doctest: +SKIP
        >>> src["key.weight"]  # doctest: +SKIP
        Source(key='in_proj_weight', part=(1, 3), transpose=True)
    """
    return _walk(module, table)[0]


def _walk(
    module: Any, table: Mapping[str, LayerAdapter] | None
) -> tuple[dict[str, Source], dict[str, TorchBuffer]]:
    """`torch_sources`, and the PyTorch-only buffers of the layers by their full PyTorch key."""
    from burn.module.base import Module
    from burn.module.param import Param

    adapters = adapters_with() if table is None else table
    out: dict[str, Source] = {}
    buffers: dict[str, TorchBuffer] = {}

    def visit(value: Any, path: str, prefix: str, context: dict[str, str], pending: list[_Pending]) -> None:
        if isinstance(value, Param):
            out[path] = Source(prefix, None, False)
            return
        if isinstance(value, Module):
            adapter = _adapter_for(value, adapters)
            if adapter is not None:
                for name, reason in adapter.requires:
                    if not getattr(value, name, False):
                        where = path or "<root>"
                        raise RecordError(
                            f"{type(value).__name__} at {where!r} has no PyTorch counterpart: {reason}"
                        )
                pending = pending + [
                    _Pending(tuple(r.burn.split(".")), r, prefix, context, None)
                    for r in adapter.rules
                    if r.applies(value)
                ]
                for buffer in adapter.buffers:
                    buffers[_join(prefix, buffer.torch)] = buffer
            children: Iterable[tuple[str, Any]] = vars(value).items()
        elif isinstance(value, (list, tuple)):
            children = ((str(i), item) for i, item in enumerate(value))
        elif isinstance(value, dict):
            children = ((str(k), item) for k, item in value.items())
        else:
            return
        for name, child in children:
            visit_child(child, _join(path, name), name, prefix, context, pending)

    def visit_child(
        child: Any, path: str, name: str, prefix: str, context: dict[str, str], pending: list[_Pending]
    ) -> None:
        below: list[_Pending] = []
        target: _Pending | None = None
        for p in pending:
            head = p.rest[0]
            if head != name and not (head == "*" and name.isdigit()):
                continue
            matched = p._replace(rest=p.rest[1:], matched=name if head == "*" else p.matched)
            if matched.rest:
                below.append(matched)
            elif target is None:  # the first (outermost) rule naming this path wins
                target = matched
        if target is None:
            visit(child, path, _join(prefix, name), context, below)
            return
        rule = target.rule
        values = {**_DEFAULT_CONTEXT, **target.context, "i": target.matched or ""}
        key = _join(target.prefix, rule.torch.format(**values))
        if isinstance(child, Param):
            out[path] = Source(key, rule.part, rule.transpose)
            return
        new_context = {**target.context, **{k: v.format(**values) for k, v in rule.sets.items()}}
        visit(child, path, key, new_context, below)

    visit(module, "", "", {}, [])
    return out, buffers


def take(data: Any, source: Source, path: str) -> Any:
    """The array `source` describes, cut from `data` (a `TensorData` read from the file)."""
    array = data.array
    if source.part is not None:
        index, count = source.part
        rows = array.shape[0] if array.ndim else 0
        if array.ndim == 0 or rows % count:
            raise RecordError(
                f"PyTorch key {source.key!r} of shape {list(array.shape)} cannot be split into {count} "
                f"equal row blocks (block {index} was expected to hold this param)",
                path=path,
            )
        size = rows // count
        array = array[index * size : (index + 1) * size]
    if source.transpose and array.ndim == 2:
        array = array.T  # a view: made contiguous when the param is loaded
    return array


def put(pieces: Sequence[tuple[Source, np.ndarray, str]], key: str) -> np.ndarray:
    """The PyTorch tensor `key` rebuilt from the burn arrays `take` cuts from it: each piece is
    ``(source, array, burn path)``; a transposed piece is transposed back, and the row blocks of
    a packed tensor are stacked in their order.

    Raises:
        RecordError: pieces that do not make one tensor: two params without row blocks on one
            key, blocks missing (PyTorch packs all of them: a `MultiHeadAttention` with a query
            bias and no key bias has no PyTorch counterpart), or blocks of unequal shapes.

    Example:
        >>> import numpy as np
        >>> q, k = Source("in_proj_bias", (0, 2), False), Source("in_proj_bias", (1, 2), False)
        >>> put([(k, np.array([3, 4]), "key.bias"), (q, np.array([1, 2]), "query.bias")], "in_proj_bias")
        array([1, 2, 3, 4])
    """
    arrays = []
    for source, array, _ in pieces:
        arrays.append(array.T if source.transpose and array.ndim == 2 else array)
    paths = [path for _, _, path in pieces]
    if all(source.part is None for source, _, _ in pieces):
        if len(pieces) != 1:
            raise RecordError(f"params {', '.join(paths)} all map to the PyTorch key {key!r}")
        return arrays[0]
    counts = {source.part[1] if source.part else 1 for source, _, _ in pieces}
    blocks: dict[int, np.ndarray] = {}
    for (source, _, path), array in zip(pieces, arrays, strict=True):
        index = source.part[0] if source.part else -1
        if len(counts) != 1 or index in blocks or index < 0:
            raise RecordError(
                f"params {', '.join(paths)} do not make the row blocks of the PyTorch key {key!r}",
                path=path,
            )
        blocks[index] = array
    (count,) = counts
    if len(blocks) != count:
        missing = count - len(blocks)
        raise RecordError(
            f"the PyTorch key {key!r} packs {count} row blocks, but only {', '.join(paths)} exist here "
            f"({missing} missing): PyTorch's layer has all of them or none (e.g. a bias on every "
            "projection or on none)",
            path=paths[0],
        )
    ordered = [blocks[i] for i in range(count)]
    if len({a.shape for a in ordered}) != 1 or ordered[0].ndim == 0:
        shapes = ", ".join(f"{p} {list(a.shape)}" for p, a in zip(paths, arrays, strict=True))
        raise RecordError(f"row blocks of unequal shapes for the PyTorch key {key!r}: {shapes}")
    return np.concatenate(ordered, axis=0)


def torch_state(module: Any, table: Mapping[str, LayerAdapter] | None = None) -> dict[str, np.ndarray]:
    """`module`'s params as a PyTorch state dict: PyTorch key -> array in PyTorch's layout, with
    the layers' PyTorch-only buffers (`TorchBuffer`) added; keys in the order of the module's
    params (each packed tensor where its first block is).

    Raises:
        RecordError: a layer with no PyTorch counterpart, or params that do not fit their keys
            (`put`).

    Example:
        >>> from burn import nn
        >>> state = torch_state(nn.LinearConfig(3, 2).init(device))  # doctest: +SKIP
        >>> state["weight"].shape  # doctest: +SKIP
        (2, 3)
    """
    sources, buffers = _walk(module, table)
    groups: dict[str, list[tuple[Source, np.ndarray, str]]] = {}
    for path, param in module.named_params():
        source = sources[path]
        groups.setdefault(source.key, []).append((source, param.val().to_data().array, path))
    state = {key: put(pieces, key) for key, pieces in groups.items()}
    for key, buffer in buffers.items():
        if key in state:
            raise RecordError(f"the PyTorch-only buffer {key!r} is also the key of a param")
        state[key] = buffer.array()
    return state


# -- docs -----------------------------------------------------------------------------------------
BEGIN = "<!-- adapter-table:begin (generated by python -m burn.record.pytorch_table; do not edit) -->"
END = "<!-- adapter-table:end -->"


def _conversion(rule: Rule) -> str:
    parts = []
    if rule.part is not None:
        index, count = rule.part
        parts.append(f"rows block {index + 1} of {count}")
    if rule.transpose:
        parts.append("transposed")
    if rule.sets:
        parts.append("sets " + ", ".join(f"`{{{k}}}` = `{v!r}`" for k, v in rule.sets.items()))
    return "; ".join(parts) or "none"


def render_table(adapters: Iterable[LayerAdapter] = ADAPTERS) -> str:
    """The adapter table as Markdown: one row per rule."""
    lines = [
        "| burn layer | PyTorch layer | burn path | PyTorch key | conversion | when |",
        "|---|---|---|---|---|---|",
    ]
    for adapter in adapters:
        for rule in adapter.rules:
            when = "always"
            if rule.when:
                when = f"`{rule.when[1:]}=False`" if rule.when.startswith("!") else f"`{rule.when}=True`"
            torch = f"`{rule.torch}`" if rule.torch else "(flattened: no prefix)"
            cells = (adapter.layer, adapter.torch_layer, f"`{rule.burn}`", torch, _conversion(rule), when)
            lines.append("| " + " | ".join(cells) + " |")
        for name, reason in adapter.requires:
            cells = (adapter.layer, adapter.torch_layer, f"(requires `{name}=True`)", "", reason, "")
            lines.append("| " + " | ".join(cells) + " |")
        for buffer in adapter.buffers:
            value = f"{buffer.dtype} {buffer.value!r}" + (
                f" of shape {list(buffer.shape)}" if buffer.shape else ""
            )
            what = f"skipped on load; saved as {value} ({buffer.why})"
            cells = (adapter.layer, adapter.torch_layer, "(none)", f"`{buffer.torch}`", what, "always")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_table(path: str | Path, check: bool = False) -> bool:
    """Replace the generated table of the Markdown file `path` (between `BEGIN` and `END`).
    Returns whether it was already up to date; with `check`, never writes."""
    text = Path(path).read_text(encoding="utf-8")
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"{path}: the markers {BEGIN!r} and {END!r} are missing")
    new = text[: start + len(BEGIN)] + "\n" + render_table() + text[stop:]
    if new == text:
        return True
    if not check:
        Path(path).write_text(new, encoding="utf-8")
    return False
