"""`trace(fn, *args)`: run a function once on a recording backend and keep what it did.

The function's tensor arguments become the program's inputs, the params of a module (`fn`
itself, or a module among the arguments) its params by param path, and its tensor results
(a tensor, or tensors in tuples, lists, named tuples and dicts, depth-first) its outputs.
The function runs eagerly on the tensors' own backend, so `Trace.outputs` are its real results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from burn.backend.base import Backend
from burn.backend.contract import Kind
from burn.backend.ir import Program, TensorIR
from burn.capture.backend import Capture, CaptureTensor, HostReads
from burn.errors import BackendMismatchError
from burn.module.base import Module
from burn.module.param import Param
from burn.tensor._base import wrap
from burn.tensor.tensor import Tensor

__all__ = ["Trace", "flatten_tensors", "trace"]


@dataclass(frozen=True)
class Trace:
    """What `trace` recorded.

    Attributes:
        program: the recorded contract-op calls (`burn.backend.ir.Program`).
        backend: the backend the function ran on.
        params: the value of each param in `program.params`, by path, on `backend`.
        outputs: the function's tensor results, flattened, on `backend`.
        result: the function's result as it returned it (tensors on `backend`).
        modules: the modules the function ran with (``fn`` first when it is a module, then the
            module arguments), params on the capture backend: a param the function replaced
            (batch norm's running statistics) holds a value computed in the trace.
    """

    program: Program
    backend: Backend
    params: dict[str, Tensor]
    outputs: tuple[Tensor, ...]
    result: Any
    modules: tuple[Module, ...] = ()


def flatten_tensors(value: Any) -> list[Any]:
    """The tensors in `value` (a tensor, or tuples, lists, named tuples and dict values of them,
    depth-first); other leaves are skipped.

    Example:
        >>> flatten_tensors((1, [2, "a"], {"k": 3}))
        []
    """
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, tuple | list):
        return [t for v in value for t in flatten_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in flatten_tensors(v)]
    return []


def _map_tensors(value: Any, fn: Callable[[Any], Any], leaves: type | tuple[type, ...] = Tensor) -> Any:
    """`value` with `fn` applied to each of its `leaves` (tensors unless told) inside tuples,
    named tuples, lists and dicts; anything else as it is."""
    if isinstance(value, leaves):
        return fn(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_map_tensors(v, fn, leaves) for v in value))
    if isinstance(value, tuple | list):
        return type(value)(_map_tensors(v, fn, leaves) for v in value)
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn, leaves) for k, v in value.items()}
    return value


def trace(
    fn: Callable[..., Any] | Module, *args: Any, host_reads: HostReads = "record", why: str = ""
) -> Trace:
    """Run ``fn(*args)`` once, recording every contract op it calls.

    Args:
        fn: a module (its params are the program's params, named by their paths) or a function.
        *args: the arguments: tensors become the program's inputs, modules have their params
            recorded (paths prefixed ``arg<i>.``), anything else is passed unchanged.
        host_reads: ``"record"`` notes reads of values back to the host (``.item()``...) in
            ``program.host_reads``; ``"error"`` raises `burn.capture.HostReadError` at the read.
        why: appended to the host-read error (what refuses it, e.g. an exporter).

    Returns:
        The `Trace`: the program, the params' values and the real results.

    Raises:
        BackendMismatchError: tensors or params of more than one backend.
        HostReadError: a host read with ``host_reads="error"``.

    Example:
        >>> import burn
        >>> from burn.capture import trace
        >>> x = burn.Tensor.from_data([1.0, -2.0], backend="ndarray")
        >>> t = trace(lambda v: (v.abs() * 2.0).exp(), x)
        >>> t.program.ops()
        ['float_abs', 'float_exp', 'float_mul_scalar']
        >>> round(t.outputs[0].tolist()[1], 3)
        54.598
    """
    backend: Backend | None = None

    def check(b: Backend, what: str) -> None:
        nonlocal backend
        if backend is None:
            backend = b
        elif b is not backend:
            raise BackendMismatchError(
                f"trace: {what} is on backend {b.name!r}, another argument on {backend.name!r}"
            )

    modules = [("", fn)] if isinstance(fn, Module) else []
    modules += [(f"arg{i}.", a) for i, a in enumerate(args) if isinstance(a, Module)]
    for prefix, m in modules:
        for path, p in m.named_params():
            check(p.val().backend, f"param {prefix}{path}")
    for i, a in enumerate(args):
        for t in flatten_tensors(a):
            check(t.backend, f"argument {i}")
    if backend is None:
        raise ValueError("trace: the function has no tensor argument and no module params to trace")
    cap = Capture(backend, host_reads, why)

    inputs: list[TensorIR] = []
    param_ir: dict[int, tuple[str, Tensor]] = {}

    def as_input(t: Tensor) -> Tensor:
        c = cap.input(t._p, _kind(t))
        inputs.append(c.ir)
        return wrap(c, cap, t._k)

    def mapper(prefix: str) -> Callable[[str, Param], Param]:
        def to_capture(path: str, p: Param) -> Param:
            t = p.val()
            c = cap.input(t._p, _kind(t))
            param_ir[c.ir.id] = (prefix + path, t)
            return Param(p.id, wrap(c, cap, t._k), False)

        return to_capture

    call_args = [
        a.map(mapper(f"arg{i}.")) if isinstance(a, Module) else _map_tensors(a, as_input)
        for i, a in enumerate(args)
    ]
    target = fn.map(mapper("")) if isinstance(fn, Module) else fn
    try:
        result = target(*call_args)
    except BackendMismatchError as e:
        if cap.name not in str(e):
            raise
        raise BackendMismatchError(
            f"{e}\ntrace: the function used a tensor that is not among the traced function's inputs nor a "
            "param of a traced module (a tensor it closes over?): pass it as an argument, or hold it "
            "in a Module as a Param"
        ) from e

    outs = flatten_tensors(result)
    for t in outs:
        if not isinstance(t._p, CaptureTensor) or t._b is not cap:
            raise BackendMismatchError(
                f"trace: a result is on backend {t._b.name!r}, not computed from the traced arguments"
            )
    read = _params_read(cap, (t._p.ir for t in outs), param_ir)
    irs = {t.id: t for t in _param_irs(cap, param_ir)}
    program = Program(
        tuple(inputs),
        tuple((param_ir[i][0], irs[i]) for i in read),
        tuple(cap.calls),
        tuple(t._p.ir for t in outs),
        tuple(cap.host_reads),
    )
    real = _map_tensors(result, lambda t: wrap(t._p.value, backend, t._k))  # type: ignore[arg-type]
    return Trace(
        program,
        backend,
        {param_ir[i][0]: param_ir[i][1] for i in read},
        tuple(flatten_tensors(real)),
        real,
        tuple(m for m in (target, *call_args) if isinstance(m, Module)),
    )


def _params_read(cap: Capture, outputs: Iterable[TensorIR], param_ir: Mapping[int, Any]) -> list[int]:
    """The ids in `param_ir` (the traced params) that the captured calls or the `outputs` read,
    in the order first read: the params a program takes."""
    read: dict[int, None] = {}
    for v in (*(v for call in cap.calls for v in call.values()), *outputs):
        if v.id in param_ir:
            read.setdefault(v.id)
    return list(read)


def _param_irs(cap: Capture, param_ir: dict[int, tuple[str, Tensor]]) -> list[TensorIR]:
    """The records of the param values (ids in `param_ir`), rebuilt from their tensors."""
    return [TensorIR(i, tuple(t.shape), t.dtype) for i, (_, t) in param_ir.items()]


def _kind(t: Tensor) -> Kind:
    name = t._k.name
    return "float" if name == "Float" else "int" if name == "Int" else "bool"
