"""The table of contract ops `burn.onnx.export` writes: one entry per op, each a function that
adds the op's ONNX nodes to a `Graph` and returns the names of the op's results.

Entries are registered by the family modules (`ops_tensor` for the float, int and bool ops,
`ops_module` for activations, convolutions, pooling, embedding, attention and recurrent cells)
with `exporter`; an op missing from the table cannot be exported, and `export` says which.
An ``*_owned`` op (the buffer-reusing form) is written as its plain op.
"""

from __future__ import annotations

from collections.abc import Callable

from burn.backend.ir import CallIR
from burn.onnx.exporter.graph import Graph

__all__ = ["EXPORTERS", "Exporter", "exported_ops", "exporter", "lookup"]

Exporter = Callable[[Graph, CallIR], list[str]]
EXPORTERS: dict[str, Exporter] = {}


def exporter(*ops: str) -> Callable[[Exporter], Exporter]:
    """Register the decorated function as the ONNX writer of each of `ops`."""

    def register(fn: Exporter) -> Exporter:
        for op in ops:
            if op in EXPORTERS:
                raise ValueError(f"burn.onnx.export: {op} is registered twice")
            EXPORTERS[op] = fn
        return fn

    return register


def lookup(op: str) -> Exporter | None:
    """The writer of `op` (an ``*_owned`` op uses its plain op's), or None."""
    _load()
    found = EXPORTERS.get(op)
    if found is None and op.endswith("_owned"):
        found = EXPORTERS.get(op[: -len("_owned")])
    return found


def exported_ops() -> list[str]:
    """The contract ops `burn.onnx.export` can write, sorted (``*_owned`` forms included).

    Example:
        >>> "conv2d" in exported_ops() and "float_add_owned" in exported_ops()
        True
    """
    from burn.backend.contract import op_facts

    _load()
    return sorted(op for op in op_facts() if lookup(op) is not None)


def _load() -> None:
    import burn.onnx.exporter.ops_module
    import burn.onnx.exporter.ops_tensor  # noqa: F401
