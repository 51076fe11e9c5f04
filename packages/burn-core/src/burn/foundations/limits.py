"""The input-limits policy: what every loader accepts before it allocates anything.

A checkpoint, a record or an ONNX file may come from anyone. Each loader of burn
(`burn.record.load_pytorch`, the record formats, `burn.onnx.load` and the run of the graph it
returns, the collectives' signatures) checks what a file *declares* against one `Limits` before it
reads, inflates, unpickles or allocates for it, and refuses with its own error (`RecordError`,
`OnnxError`) naming the file, the entry or node, and the limit that was broken, with the field to
raise. The defaults hold real models: a 70-billion-parameter checkpoint (about 2^36 elements in
all, its largest tensor well under 2^34 elements) loads with them; a file needing more is refused
in well under a second, never after filling memory.

Every loader takes ``limits=`` (a `Limits`; fields not given keep their defaults):

Example:
    >>> import burn
    >>> burn.Limits().max_tensor_elements == 1 << 34
    True
    >>> roomy = burn.Limits(max_total_elements=1 << 40)
    >>> roomy.max_total_elements > burn.Limits().max_total_elements
    True
    >>> print(roomy.refusal("max_graph_nodes", 3_000_000, "model.onnx"))  # doctest: +ELLIPSIS
    model.onnx: 3000000 nodes, over the limit of 1048576 (raise it with limits=burn.Limits(...=...))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields

__all__ = ["DEFAULT_LIMITS", "Limits", "resolve_limits"]

# What each limit counts, for the messages (field name -> unit).
_UNITS = {
    "max_file_bytes": "bytes",
    "max_decompressed_bytes": "bytes once decompressed",
    "max_tensor_elements": "elements in one tensor",
    "max_total_elements": "elements in all",
    "max_tensors": "tensors",
    "max_rank": "dims",
    "max_depth": "levels of nesting",
    "max_pickle_bytes": "bytes of pickle",
    "max_pickle_opcodes": "pickle opcodes",
    "max_memo_entries": "memo entries",
    "max_object_nodes": "objects (shared references counted as copies)",
    "max_graph_nodes": "nodes",
    "max_function_depth": "levels of nested functions",
    "max_folded_bytes": "bytes of folded constant",
}


@dataclass(frozen=True)
class Limits:
    """Bounds on what a loader accepts, checked against what the input declares before allocating.

    Attributes:
        max_file_bytes: size of a file on disk (4 TiB).
        max_decompressed_bytes: what a compressed record or archive member may inflate to (64 GiB;
            gzip records are also held to 1032x their compressed size, deflate's largest ratio).
        max_tensor_elements: elements of one tensor (2^34, 17 billion: a 70B model's largest
            tensor is under 2^31).
        max_total_elements: elements of all tensors of one file together (2^38; 70B is ~2^36).
        max_tensors: tensors in one file (2^22).
        max_rank: dims of one tensor (64).
        max_depth: nesting of containers in a record, pickle or graph attribute (128).
        max_pickle_bytes: size of a checkpoint's pickle (metadata only, about 200 bytes a tensor;
            256 MiB).
        max_pickle_opcodes: opcodes in one pickle (2^22: a state dict's pickle takes ~40 a tensor,
            and the scan ~1 us each, so a flood of opcodes is refused within seconds).
        max_memo_entries: pickle memo entries (2^20, ~10 a tensor).
        max_object_nodes: objects the pickle builds, a shared reference counted as a copy each
            time it is used, so a "billion laughs" DAG is refused as the tree it expands to (2^24).
        max_graph_nodes: nodes of an ONNX graph, its functions and subgraphs expanded (2^20).
        max_function_depth: nesting of ONNX local functions calling each other (32).
        max_folded_bytes: a constant computed while loading an ONNX graph (1 GiB); a fold above it
            is refused naming the node.
    """

    max_file_bytes: int = 1 << 42
    max_decompressed_bytes: int = 1 << 36
    max_tensor_elements: int = 1 << 34
    max_total_elements: int = 1 << 38
    max_tensors: int = 1 << 22
    max_rank: int = 64
    max_depth: int = 128
    max_pickle_bytes: int = 1 << 28
    max_pickle_opcodes: int = 1 << 22
    max_memo_entries: int = 1 << 20
    max_object_nodes: int = 1 << 24
    max_graph_nodes: int = 1 << 20
    max_function_depth: int = 32
    max_folded_bytes: int = 1 << 30

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Limits.{f.name} must be a positive int, got {value!r}")

    def replace(self, **changes: int) -> Limits:
        """A copy with `changes` (field name -> new bound)."""
        return dataclasses.replace(self, **changes)

    def refusal(self, field: str, value: int, what: str) -> str:
        """The message of a loader refusing `what`, which needs `value` against the limit `field`."""
        unit = _UNITS[field]
        return (
            f"{what}: {value} {unit}, over the limit of {getattr(self, field)} "
            f"(raise it with limits=burn.Limits({field}=...))"
        )

    def exceeds(self, field: str, value: int) -> bool:
        """Whether `value` is over the limit `field`."""
        return value > getattr(self, field)


DEFAULT_LIMITS = Limits()


def resolve_limits(limits: Limits | None, where: str = "limits") -> Limits:
    """`limits`, or the defaults when None; anything else is a TypeError naming `where`."""
    if limits is None:
        return DEFAULT_LIMITS
    if not isinstance(limits, Limits):
        raise TypeError(f"{where} must be a burn.Limits, got {type(limits).__name__}")
    return limits

