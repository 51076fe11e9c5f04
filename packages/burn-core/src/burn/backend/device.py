"""Devices: hashable, printable handles that belong to one backend."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from burn.backend.base import Backend


@dataclass(frozen=True, slots=True, eq=False)
class Device:
    """A device of a backend, printed as ``backend:id`` (``ndarray:cpu``, ``opencl:0``, ``cuda:1``).

    `backend` is the base backend's name; `id` is what the backend uses to tell its devices apart.
    `owner` is the backend instance that handed the device out: creation ops given only a device
    (``Tensor.zeros(shape, device=d)``) build the tensor on it. It takes no part in equality, so
    ``autodiff(ndarray)`` and ``ndarray`` share the physical device ``ndarray:cpu``.

    Example:
        >>> str(Device("cuda", 1))
        'cuda:1'
        >>> Device("ndarray", "cpu") == Device("ndarray", "cpu")
        True
    """

    backend: str
    id: int | str
    owner: Backend | None = field(default=None, compare=False, repr=False)

    def with_owner(self, owner: Backend) -> Device:
        """The same physical device, handed out by `owner` (used by decorator backends)."""
        return Device(self.backend, self.id, owner)

    def __str__(self) -> str:
        return f"{self.backend}:{self.id}"

    def __repr__(self) -> str:
        return f"Device({self})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Device):
            return NotImplemented
        return self.backend == other.backend and self.id == other.id

    def __hash__(self) -> int:
        return hash((self.backend, self.id))
