"""The scan every recurrent layer runs: input checks, the projection of every time step, initial
states, step order, and the batch-first / time-major swap; what the bidirectional layers and the
stacks need of a one-direction layer (`_Scan`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from burn.errors import ShapeError
from burn.module.base import Module
from burn.tensor.tensor import Tensor

States = tuple[Tensor, ...]
"""A layer's state tensors: ``(cell, hidden)`` for an LSTM, ``(hidden,)`` for a GRU or an RNN."""


def _check_input(op: str, x: Tensor, d_input: int) -> tuple[int, int]:
    """``(batch, steps)`` of a batch-first input, which must be ``[B, T, d_input]`` with ``T > 0``."""
    shape = x.shape
    if len(shape) != 3 or shape[2] != d_input:
        raise ShapeError(f"{op}: expected a batch-first input [B, T, {d_input}], got shape {shape}")
    if shape[1] == 0:
        raise ShapeError(f"{op}: the input {shape} has no time steps")
    return shape[0], shape[1]


def _project(op: str, x: Tensor, d_input: int, w_x: Tensor, b: Tensor | None) -> tuple[Tensor, int, int]:
    """Every time step of ``x [B, T, D]`` through `w_x` -> ``[T, B, G*H]``."""
    batch, steps = _check_input(op, x, d_input)
    proj = x.matmul(w_x)
    if b is not None:
        proj = proj + b
    return proj.swap_dims(0, 1), batch, steps


def _initial(op: str, state: Tensor | None, x: Tensor, batch: int, hidden: int, name: str) -> Tensor:
    if state is None:
        return Tensor.zeros((batch, hidden), device=x.device, dtype=x.dtype)
    if state.shape != (batch, hidden):
        raise ShapeError(f"{op}: the initial {name} must have shape ({batch}, {hidden}), got {state.shape}")
    return state


def _steps(steps: int, reverse: bool) -> range:
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _collect(outputs: list[Tensor], reverse: bool) -> Tensor:
    """The per-step hidden states, in time order, as ``[B, T, H]``."""
    return Tensor.stack(outputs[::-1] if reverse else outputs, 1)


def _time_major(x: Tensor, batch_first: bool) -> Tensor:
    """``[T, B, ...] <-> [B, T, ...]`` when the layer is not batch-first (the swap is its own inverse)."""
    return x if batch_first else x.swap_dims(0, 1)


class _Scan(Protocol):
    """What the bidirectional layers and the stacks need of a one-direction layer."""

    d_input: int
    d_hidden: int

    def _scan(self, x: Tensor, states: States | None, reverse: bool) -> tuple[Tensor, States]: ...


class _Recurrent(Module):
    """What every recurrent layer shares: it computes batch-first (`_batch_major`) and swaps the time
    axis in and out around that when it is not `batch_first`."""

    if TYPE_CHECKING:  # declared by the subclasses, as dataclass fields

        @property
        def batch_first(self) -> bool: ...

        def _batch_major(self, x: Tensor, states: States | None) -> tuple[Tensor, States]: ...

    def _run(self, x: Tensor, states: States | None) -> tuple[Tensor, States]:
        out, final = self._batch_major(_time_major(x, self.batch_first), states)
        return _time_major(out, self.batch_first), final


class _OneDirection(_Recurrent):
    """`Lstm`, `Gru` and `Rnn`: one scan forward in time."""

    if TYPE_CHECKING:

        def _scan(self, x: Tensor, states: States | None, reverse: bool) -> tuple[Tensor, States]: ...

    def _batch_major(self, x: Tensor, states: States | None) -> tuple[Tensor, States]:
        return self._scan(x, states, False)


def _split_states(op: str, states: States | None, count: int, batch: int, hidden: int) -> list[States | None]:
    """``[count, B, H]`` state tensors -> one ``[B, H]`` tuple per direction / layer."""
    if states is None:
        return [None] * count
    for s in states:
        if s.shape != (count, batch, hidden):
            raise ShapeError(
                f"{op}: the initial state must have shape ({count}, {batch}, {hidden}), got {s.shape}"
            )
    return [tuple(s[k] for s in states) for k in range(count)]
