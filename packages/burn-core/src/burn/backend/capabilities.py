"""Declared capabilities: what a backend (and each of its devices) can do."""

from __future__ import annotations

from dataclasses import dataclass, field

from burn.foundations.dtype import DType


@dataclass(frozen=True)
class Capabilities:
    """What a backend declares it supports. The conformance suite reads this and skips,
    with the capability's name as the reason, whatever is not declared.

    Attributes:
        dtypes: every element type tensors of this backend may carry.
        features: optional op families or behaviours, by name (see `FEATURES`).

    Example:
        >>> caps = Capabilities(dtypes=frozenset({DType.F32, DType.I64, DType.BOOL}))
        >>> caps.supports(DType.F64)
        False
    """

    dtypes: frozenset[DType]
    features: frozenset[str] = field(default_factory=frozenset)

    def supports(self, dtype: DType) -> bool:
        return dtype in self.dtypes

    def has(self, feature: str) -> bool:
        return feature in self.features

    @property
    def float_dtypes(self) -> tuple[DType, ...]:
        return tuple(d for d in DType if d in self.dtypes and d.is_float)

    @property
    def int_dtypes(self) -> tuple[DType, ...]:
        return tuple(d for d in DType if d in self.dtypes and d.is_int)


# Optional features a backend may declare.
FEATURES = {
    "dlpack": "tensors export and import through DLPack",
    "autodiff": "the backend records gradients (Autodiff decorator)",
    "async": "ops are queued; sync() waits for them",
    "multi_device": "more than one device may exist at once",
    "buffer_reuse": "the backend overrides the *_owned ops and may reuse a buffer it proves unshared",
}
