"""`Capture(inner)`: the decorator backend that records every contract op it runs.

Each op runs eagerly on the inner backend (so a traced function computes real values) and is
appended to the trace as a `burn.backend.ir.CallIR`, with its arguments as values (`TensorIR`),
the device marker and constants. Every op is wrapped the same way, from the contract's
annotations (`burn.backend.decorator.delegate_op`) and its declared facts (`op_facts`: the kind
of each result, whether the op reads a value back to the host): nothing here lists ops by hand
except the metadata ops, which are answered from the record.

The recorded level is the op the Tensor API called: a ``softmax`` or ``conv2d`` is one record
whether the inner backend overrides it or composes it of other ops (those run inside the inner
backend and are not seen), which is the level an exporter and a compiler want.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from burn.backend.base import Backend
from burn.backend.contract import Kind, contract_ops, op_facts
from burn.backend.decorator import DecoratorBackend, delegate_op
from burn.backend.ir import DEVICE, CallIR, TensorIR
from burn.errors import BurnError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

__all__ = ["Capture", "CaptureTensor", "HostReadError", "result_kinds"]

HostReads = Literal["record", "error"]


class HostReadError(BurnError, RuntimeError):
    """A traced function read a value back to the host (``.item()``, ``to_data``...)."""

    def __init__(self, op: str, why: str) -> None:
        super().__init__(f"{op}: {why}")
        self.op = op


def result_kinds(op: str) -> tuple[Kind, ...]:
    """The kind of each primitive contract op `op` returns (one item for a ``P`` result; for a
    tuple result the last item stands for every later one).

    Declared at the op (`burn.backend.contract.OpFacts.results`): the family's kind unless the
    op says otherwise (conversions, indices, comparisons).

    Example:
        >>> result_kinds("float_greater_elem"), result_kinds("max_pool2d_with_indices")
        (('bool',), ('float', 'int'))
    """
    return op_facts()[op].results


class CaptureTensor:
    """A primitive of `Capture`: the inner backend's primitive and its record.

    Attributes:
        value: the inner primitive (computed: capture runs every op at once).
        ir: the value's id, shape and dtype in the trace.

    Example:
        >>> t = CaptureTensor(None, TensorIR(0, (2,), DType.F32))
        >>> t.ir.id
        0
    """

    __slots__ = ("value", "ir")

    def __init__(self, value: Any, ir: TensorIR) -> None:
        self.value = value
        self.ir = ir

    def __repr__(self) -> str:
        return f"CaptureTensor({self.ir})"


def _constant(x: Any) -> Any:
    """An argument that is not a value, as a constant of the record (no caller's object kept)."""
    if x is None or isinstance(x, bool | int | float | str | slice | DType):
        return x
    if isinstance(x, tuple | list):
        return tuple(_constant(v) for v in x)
    if isinstance(x, TensorData):
        array = np.array(x.to_numpy(), copy=True)
        array.setflags(write=False)
        return array
    if isinstance(x, np.generic):
        return x.item()
    # Anything else (a distribution, an options object) is kept as it is: it is a value of the
    # contract's own types, immutable by convention.
    return x


class Capture(DecoratorBackend):
    """A backend that runs every op on `inner` and records it (see the module docstring).

    Values enter through `input` (a traced function's arguments and params); the calls are in
    `calls` in program order. Reads of a value back to the host are recorded by op name in
    `host_reads`, or raise `HostReadError` with ``host_reads="error"``.

    Args:
        inner: the backend that computes.
        host_reads: ``"record"`` (the read happens and is noted) or ``"error"``.
        why: the reason a host read is refused, for the error (``"error"`` mode).

    Example:
        >>> import burn, numpy as np
        >>> cap = Capture(burn.backend("ndarray"))
        >>> inner = cap.wrapped
        >>> data = burn.TensorData(np.array([1.0, -2.0], np.float32))
        >>> x = cap.input(inner.float_from_data(data, inner.default_device()), "float")
        >>> y = cap.float_abs(x)
        >>> print(cap.calls[0])
        t1 = float_abs(t0)  # float32[2]
    """

    def __init__(self, inner: Backend, host_reads: HostReads = "record", why: str = "") -> None:
        self._check_inner(inner)
        # Values are never updated in place (no *_owned buffer reuse): a value id names one value.
        self._init_decorator(inner, "capture", inner.capabilities.features - {"buffer_reuse"})
        self.calls: list[CallIR] = []
        self.host_reads: list[str] = []
        self._policy = host_reads
        self._why = why
        self._next = 0
        for name in contract_ops():
            facts = op_facts()[name]
            if facts.host_read:
                setattr(self, name, self._host_read(name))
            elif facts.returns in ("P", "tuple"):
                setattr(self, name, self._op(name))
            elif name.endswith("_shape"):
                setattr(self, name, _shape)
            elif name.endswith("_get_dtype"):
                setattr(self, name, _dtype)
            else:  # devices, flags: asked of the inner backend, not recorded
                setattr(self, name, delegate_op(
                    name, getattr(inner, name), _value, _unsupported, self._inner_device, self._own_device
                ))

    @property
    def wrapped(self) -> Backend:
        """The backend that computes."""
        return self._in

    def input(self, primitive: Any, kind: Kind) -> CaptureTensor:
        """A new value of the trace holding the inner `primitive` of `kind`."""
        return CaptureTensor(primitive, self._ir(primitive, kind))

    def _ir(self, primitive: Any, kind: Kind) -> TensorIR:
        inner: Any = self._in
        if kind == "bool":
            shape, dtype = inner.bool_shape(primitive), DType.BOOL
        else:
            shape = getattr(inner, f"{kind}_shape")(primitive)
            dtype = getattr(inner, f"{kind}_get_dtype")(primitive)
        ir = TensorIR(self._next, tuple(shape), dtype)
        self._next += 1
        return ir

    def _op(self, name: str) -> Callable[..., Any]:
        facts = op_facts()[name]
        kinds = result_kinds(name)
        operands = {i: kind for i, _, kind in facts.operands}
        by_name = {pname: kind for _, pname, kind in facts.operands}
        calls = self.calls
        holder: list[CaptureTensor | None] = []

        def wrap(p: Any) -> CaptureTensor:
            k = kinds[len(holder)] if len(holder) < len(kinds) else kinds[-1]
            t = self.input(p, k)
            holder.append(t)
            return t

        def arg(kind: str | None, a: Any) -> Any:
            if kind is None:
                return _constant(a)
            if kind == "Device":
                return DEVICE
            if kind == "Sequence[P]":
                return tuple(t.ir for t in a)
            return None if a is None else a.ir

        def after(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
            results = result if isinstance(result, tuple) else (result,)
            outs = tuple(None if r is None else r.ir for r in results)
            holder.clear()
            calls.append(CallIR(
                name,
                tuple(arg(operands.get(i), a) for i, a in enumerate(args)),
                tuple((k, arg(by_name.get(k), v)) for k, v in kwargs.items()),
                outs,
            ))

        return delegate_op(
            name, getattr(self._in, name), _value, wrap, self._inner_device, self._own_device, after
        )

    def _host_read(self, name: str) -> Callable[..., Any]:
        fn = getattr(self._in, name)

        def op(tensor: CaptureTensor, *args: Any, **kwargs: Any) -> Any:
            if self._policy == "error":
                raise HostReadError(
                    name, f"the traced function reads value t{tensor.ir.id} {tensor.ir.dtype.value}"
                    f"{list(tensor.ir.shape)} back to the host (.item(), .tolist(), to_data(), a Python "
                    f"bool or int of a tensor...){self._why}",
                )
            self.host_reads.append(name)
            return fn(tensor.value, *args, **kwargs)

        op.__name__ = name
        return op


def _value(t: CaptureTensor) -> Any:
    return t.value


def _shape(t: CaptureTensor) -> tuple[int, ...]:
    return t.ir.shape


def _dtype(t: CaptureTensor) -> DType:
    return t.ir.dtype


def _unsupported(p: Any) -> Any:  # pragma: no cover - metadata ops return no primitive
    raise TypeError("capture: a metadata op returned a primitive")

