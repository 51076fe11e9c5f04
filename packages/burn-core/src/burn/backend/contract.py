"""Declares the ops of the backend contract and what is known of each, at the op.

Every op is a method of one op family (`burn.backend.ops`: float, int, bool, activation, conv,
pool, sampling, embedding, loss, rnn, optim), marked where it is written:

- `required`: a backend must implement it; calling the stub names the backend and op;
- `default`: written once in burn-core from other ops; a backend overrides it only to be faster.

Both take the op's facts as keyword arguments, so that every layer that needs one reads it from
here (`op_facts`) instead of keeping a list of names of its own:

- ``grad=False``: the result carries no gradient (metadata, creation, comparisons, indices,
  optimizer updates). Autodiff passes such ops through and the gradient checks skip them.
- ``backward_of="conv2d"``: a backward helper, the op whose autodiff rule calls it.
- ``bound="memory" | "compute"``: the checkpoint class of a differentiable op. Balanced
  checkpointing recomputes a memory-bound op's output in backward instead of keeping it, and keeps
  a compute-bound op's output as a checkpoint.
- ``ew=Elementwise(...)``: the op is element-wise, with the C expression every fused-kernel
  generator and burn-opencl's one-op kernels compute it with (`Elementwise`).
- ``results=("float", "int")``: the kind of each primitive the op returns, when it is not the
  family's kind (an index, a comparison, a conversion); a tuple result's last item stands for
  every later one.
- ``random=True``: the op draws from the backend's generator, so a program never removes or
  reorders it (two runs of it differ, and the draws after it depend on it).
- ``host_read=True``: the op reads a value back to the host (``*_into_data``): a traced
  function's result may then depend on the data.

The `family` class decorator names each family and gives the facts its ops leave unsaid
(``grad``, ``bound`` and the kind of the primitives it returns): an op cannot be declared
without a family, so no op is unclassified.
`contract_ops()` lists every op with its mark; the conformance suite's meta-test uses it to check
that every op has a test.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

OpKind = Literal["required", "default"]
Bound = Literal["memory", "compute"]
Kind = Literal["float", "int", "bool"]
# How an element-wise op's result dtype follows from its inputs: "same" (the first input's),
# "wider" (the wider of two floats, the contract's promotion rule), "bool", or "cast" (a dtype
# given as the op's last argument).
ResultRule = Literal["same", "wider", "bool", "cast"]


@dataclass(frozen=True, slots=True)
class Elementwise:
    """What an element-wise op computes at each element, and how its operands are typed.

    The expression is C that both OpenCL C and CUDA C++ accept: it reads the tensor inputs ``a``,
    ``b``, ``c`` and the scalars ``s0``, ``s1`` in the compute type ``T``, with C operators, the
    math functions both dialects overload (``exp``, ``log``, ``log1p``, ``erf``, ``tanh``,
    ``sin``, ``cos``, ``pow``, ``fmod``) and the ``b_*`` helpers of `burn.backend.fusion_exprs`.

    Attributes:
        expr: the C expression of the result.
        arity: number of tensor inputs (they broadcast against each other).
        nscalars: number of Python number arguments after the tensors.
        result: how the result dtype is found (see `ResultRule`).
        kinds: the kind of each tensor input (``"float"``, ``"int"``, ``"bool"``).
        promote: per tensor input, whether it is converted to the compute type (False: read as
            its own type, e.g. a bool mask).
        literals: values of the scalar ``s0`` that generated kernels write into their code rather
            than take as an argument, so that the compiler folds the expression for them
            (``b_pow(a, 2)`` becomes ``a * a``, which vectorizes; a kernel per value).

    Example:
        >>> Elementwise("a + s0", nscalars=1).arity
        1
    """

    expr: str
    arity: int = 1
    nscalars: int = 0
    result: ResultRule = "same"
    kinds: tuple[Kind, ...] = ("float",)
    promote: tuple[bool, ...] = (True, True, True)
    literals: tuple[float, ...] = ()


def unary(expr: str, nscalars: int = 0, literals: tuple[float, ...] = ()) -> Elementwise:
    """A float op of one tensor (and `nscalars` scalars) keeping its dtype."""
    return Elementwise(expr, 1, nscalars, literals=literals)


def binary(expr: str) -> Elementwise:
    """A float op of two broadcasting tensors, computed in the wider dtype."""
    return Elementwise(expr, 2, 0, "wider", ("float", "float"))


def compare(expr: str, arity: int = 2) -> Elementwise:
    """A float comparison (of two tensors, or of a tensor and one scalar) giving bool."""
    if arity == 2:
        return Elementwise(expr, 2, 0, "bool", ("float", "float"))
    return Elementwise(expr, 1, 1, "bool")


@dataclass(frozen=True, slots=True)
class OpFacts:
    """What is known of one contract op, as declared at it.

    Attributes:
        name: the op (``"float_exp"``).
        kind: ``"required"`` or ``"default"``.
        family: the family it belongs to (``"float"``, ``"conv"``...), the stem of its module in
            `burn.backend.ops` and in every package that implements it.
        differentiable: whether its result carries a gradient.
        backward_of: for a backward helper, the op whose rule calls it.
        bound: the checkpoint class of a differentiable op that is not a helper, else None.
        elementwise: the element-wise facts, or None when the op is not element-wise.
        operands: the arguments that are primitives or devices, as ``(index, name, type)`` with
            the index after ``self`` and the type as annotated (``"P"``, ``"P | None"``,
            ``"Sequence[P]"``, ``"Device"``): what a decorator backend translates.
        returns: what the op returns: ``"P"``, ``"Device"``, ``"tuple"`` (of primitives) or
            ``""`` (anything else: shapes, dtypes, host data).
        results: the kind of each primitive result (one item for a ``P`` result; for a tuple
            the last item stands for every later one); empty when no primitive is returned.
        random: whether it draws from the backend's generator (never removed or reordered).
        host_read: whether it reads a value back to the host.
    """

    name: str
    kind: OpKind
    family: str
    differentiable: bool
    backward_of: str | None
    bound: Bound | None
    elementwise: Elementwise | None
    operands: tuple[tuple[int, str, str], ...] = ()
    returns: str = ""
    results: tuple[Kind, ...] = ()
    random: bool = False
    host_read: bool = False


@dataclass(frozen=True, slots=True)
class _Declared:
    kind: OpKind
    grad: bool | None
    backward_of: str | None
    bound: Bound | None
    ew: Elementwise | None
    results: tuple[Kind, ...] | None
    random: bool
    host_read: bool


_KINDS = ("float", "int", "bool")


def _declare(
    kind: OpKind, fn: F, grad: bool | None, backward_of: str | None, bound: Bound | None,
    ew: Elementwise | None, results: tuple[Kind, ...] | None = None, random: bool = False,
    host_read: bool = False,
) -> F:
    if bound is not None and bound not in ("memory", "compute"):
        raise ValueError(f"{fn.__name__}: bound must be 'memory' or 'compute', got {bound!r}")
    if results is not None and (
        not isinstance(results, tuple) or not results or any(k not in _KINDS for k in results)
    ):
        raise ValueError(
            f"{fn.__name__}: results must be a non-empty tuple of 'float', 'int', 'bool', got {results!r}"
        )
    fn.__burn_op__ = kind  # type: ignore[attr-defined]
    fn.__burn_declared__ = _Declared(  # type: ignore[attr-defined]
        kind, grad, backward_of, bound, ew, results, random, host_read
    )
    return fn


@overload
def required(fn: F) -> F: ...
@overload
def required(
    *, grad: bool | None = None, backward_of: str | None = None, bound: Bound | None = None,
    ew: Elementwise | None = None, results: tuple[Kind, ...] | None = None, random: bool = False,
    host_read: bool = False,
) -> Callable[[F], F]: ...


def required(
    fn: Any = None, *, grad: bool | None = None, backward_of: str | None = None, bound: Bound | None = None,
    ew: Elementwise | None = None, results: tuple[Kind, ...] | None = None, random: bool = False,
    host_read: bool = False,
) -> Any:
    """Declare a required op; calling it on a backend that lacks it names the backend and op.

    Used bare (``@required``) or with the op's facts (``@required(bound="memory", ew=...)``).
    """

    def mark(f: F) -> F:
        name = f.__name__

        @functools.wraps(f)
        def missing(self: Any, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError(f"backend {self.name!r} does not implement the required op {name}")

        return _declare(  # type: ignore[return-value]
            "required", missing, grad, backward_of, bound, ew, results, random, host_read
        )

    return mark if fn is None else mark(fn)


@overload
def default(fn: F) -> F: ...
@overload
def default(
    *, grad: bool | None = None, backward_of: str | None = None, bound: Bound | None = None,
    ew: Elementwise | None = None, results: tuple[Kind, ...] | None = None, random: bool = False,
    host_read: bool = False,
) -> Callable[[F], F]: ...


def default(
    fn: Any = None, *, grad: bool | None = None, backward_of: str | None = None, bound: Bound | None = None,
    ew: Elementwise | None = None, results: tuple[Kind, ...] | None = None, random: bool = False,
    host_read: bool = False,
) -> Any:
    """Declare an op with a default implementation written in terms of other ops.

    Used bare (``@default``) or with the op's facts (``@default(backward_of="conv2d")``).
    """

    def mark(f: F) -> F:
        return _declare("default", f, grad, backward_of, bound, ew, results, random, host_read)

    return mark if fn is None else mark(fn)


_OPERANDS = ("P", "P | None", "Sequence[P]", "Device")


def _signature(fn: Callable[..., Any]) -> tuple[tuple[tuple[int, str, str], ...], str]:
    """`OpFacts.operands` and `OpFacts.returns`, read from the op's annotations (strings: every
    contract module has ``from __future__ import annotations``)."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())[1:]
    operands = tuple(
        (i, p.name, str(p.annotation)) for i, p in enumerate(params) if p.annotation in _OPERANDS
    )
    ret = str(sig.return_annotation)
    return operands, ret if ret in ("P", "Device") else "tuple" if ret.startswith("tuple[P") else ""


def _default_results(kind: Kind, returns: str, ew: Elementwise | None) -> tuple[Kind, ...]:
    """The kinds of an op's results when it declares none: a bool for an element-wise op whose
    rule says so (a comparison), else the family's kind; nothing for an op returning no primitive."""
    if returns not in ("P", "tuple"):
        return ()
    return ("bool",) if ew is not None and ew.result == "bool" else (kind,)


def family(
    name: str, *, grad: bool = True, bound: Bound | None = "compute", kind: Kind = "float"
) -> Callable[[C], C]:
    """Name the op family a contract class holds, and give its ops the facts they leave unsaid.

    Args:
        name: the family (``"conv"``): the stem of its module in every layer.
        grad: whether the family's ops carry a gradient unless declared otherwise.
        bound: the checkpoint class of its differentiable ops unless declared otherwise.
        kind: the kind of the primitives its ops return unless declared otherwise (``results``).

    Raises:
        TypeError: an op declares ``results`` but returns no primitive, or declares more kinds
            than its single primitive result has.

    Example:
        >>> @family("demo", bound="memory")
        ... class DemoOps:
        ...     @default
        ...     def demo_twice(self, x: P) -> P: ...
        ...     @default(results=("int",))
        ...     def demo_argmax(self, x: P) -> P: ...
        >>> DemoOps.demo_twice.__burn_facts__.bound, DemoOps.demo_twice.__burn_facts__.results
        ('memory', ('float',))
        >>> DemoOps.demo_argmax.__burn_facts__.results
        ('int',)
    """

    def finish(cls: C) -> C:
        for op, value in vars(cls).items():
            declared: _Declared | None = getattr(value, "__burn_declared__", None)
            if declared is None:
                continue
            helper = declared.backward_of is not None
            differentiable = (grad or helper) if declared.grad is None else declared.grad
            operands, returns = _signature(value)
            results = declared.results
            if results is None:
                results = _default_results(kind, returns, declared.ew)
            elif returns not in ("P", "tuple") or (returns == "P" and len(results) != 1):
                raise TypeError(
                    f"contract op {op} declares results={results!r} but returns "
                    f"{'one primitive' if returns == 'P' else 'no primitive'}"
                )
            value.__burn_facts__ = OpFacts(
                op, declared.kind, name, differentiable, declared.backward_of,
                None if helper or not differentiable else (declared.bound or bound or "compute"),
                declared.ew, operands, returns, results, declared.random, declared.host_read,
            )
        cls.__burn_family__ = name  # type: ignore[attr-defined]
        return cls

    return finish


def _walk(cls: type) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if getattr(value, "__burn_op__", None) is not None:
                found[name] = value
    return found


def contract_ops(cls: type | None = None) -> dict[str, OpKind]:
    """Every op of the contract, by name, with whether it is required or has a default.

    Example:
        >>> ops = contract_ops()
        >>> ops["float_add"], ops["float_mean_dim"]
        ('required', 'default')
    """
    if cls is None:
        from burn.backend.base import Backend

        cls = Backend
    return {name: value.__burn_op__ for name, value in sorted(_walk(cls).items())}


@functools.cache
def op_facts() -> dict[str, OpFacts]:
    """The facts of every contract op, by name (see the module docstring).

    Raises:
        TypeError: an op declared outside a `family` class.

    Example:
        >>> facts = op_facts()
        >>> facts["conv3d"].family, facts["conv3d"].bound
        ('conv', 'compute')
        >>> facts["float_exp"].elementwise.expr
        'exp(a)'
    """
    from burn.backend.base import Backend

    out: dict[str, OpFacts] = {}
    for name, value in sorted(_walk(Backend).items()):
        facts = getattr(value, "__burn_facts__", None)
        if facts is None:
            raise TypeError(
                f"contract op {name} is declared outside an op family (burn.backend.contract.family)"
            )
        out[name] = facts
    return out


def families() -> list[str]:
    """The op families of the contract (the stems of their modules in every layer), sorted.

    Example:
        >>> "conv" in families() and "float" in families()
        True
    """
    return sorted({f.family for f in op_facts().values()})


def required_ops() -> list[str]:
    """Names of the required ops."""
    return [name for name, kind in contract_ops().items() if kind == "required"]


def implemented_ops(backend_cls: type) -> set[str]:
    """Ops of the contract that `backend_cls` (or a class between it and Backend) overrides."""
    from burn.backend.base import Backend

    ops = contract_ops()
    out = set()
    for name in ops:
        impl = getattr(backend_cls, name, None)
        if impl is not None and impl is not getattr(Backend, name):
            out.add(name)
    return out
