"""Pointers for PyTorch habits: what to write in burn instead of a PyTorch-only name or call.

A user coming from PyTorch writes ``x.relu()``, ``x.numpy()``, ``x.mean(1)`` or
``Tensor.zeros(2, 3)``; each fails in burn, and the error should say what to write instead rather
than only that something is missing. Each name of `PYTORCH_NAMES` is an attribute of
`HintsMixin` (last in Tensor's bases, so a real method always wins) whose read raises the
AttributeError with the burn spelling. Not a ``__getattr__``: a class with one gets CPython's
getattr hook instead of the generic lookup, which slows every attribute read on every tensor
(``self._p``: 31 against 10 ns; a 4x4 ``a + b`` 1.06 against 0.87 us on Python 3.11). The
reductions and ``unsqueeze`` call `dim_given` when given a PyTorch-style dim.
"""

from __future__ import annotations

from typing import Any, NoReturn

PYTORCH_NAMES: dict[str, str] = {
    "relu": "burn.activation.relu(x)",
    "sigmoid": "burn.activation.sigmoid(x)",
    "softmax": "burn.activation.softmax(x, dim)",
    "log_softmax": "burn.activation.log_softmax(x, dim)",
    "gelu": "burn.activation.gelu(x)",
    "silu": "burn.activation.silu(x)",
    "numpy": "x.to_numpy() (a NumPy array; x.to_data() for burn's TensorData)",
    "size": "x.shape (a tuple; x.shape[d] for one dim)",
    "dim": "len(x.shape) (the rank)",
    "numel": "x.num_elements()",
    "view": "x.reshape(shape) (burn tensors are immutable values: no views to alias)",
    "contiguous": "nothing: burn has no strided views to make contiguous",
    "clone": "x itself: burn tensors are immutable, so sharing one is safe",
    "to": "x.to_device(device) for a device, x.cast(dtype) for a dtype",
    "cpu": "x.to_device(device) (or x.to_numpy() for host data)",
    "cuda": "burn.backend('cuda') and x.to_device(...), or create tensors on that backend's device",
    "type": "x.cast(dtype), or x.dtype to read it",
    "long": "x.int() (Burn's kinds: Float, Int, Bool)",
    "double": "x.cast(burn.float64)",
    "half": "x.cast(burn.float16)",
    "masked_fill": "x.mask_fill(mask, value)",
    "where": "x.mask_where(mask, other)",
    "eq": "x.equal(other)",
    "ne": "x.not_equal(other)",
    "gt": "x.greater(other)",
    "ge": "x.greater_equal(other)",
    "lt": "x.lower(other)",
    "le": "x.lower_equal(other)",
    "pow": "x.powf(exponent) (x ** exponent)",
    "exp_": "x.exp(): burn has no in-place ops (tensors are immutable)",
    "add_": "x.add(y) (x + y): burn has no in-place ops (tensors are immutable)",
    "mul_": "x.mul(y) (x * y): burn has no in-place ops (tensors are immutable)",
    "zero_": "x.zeros_like(): burn has no in-place ops (tensors are immutable)",
    "requires_grad_": "x.require_grad() (on an autodiff backend)",
    "requires_grad": "x.is_require_grad()",
}
"""PyTorch-only Tensor names and what to write in burn instead."""

_DIM_OPS: dict[str, str] = {
    "sum": "sum_dim",
    "mean": "mean_dim",
    "prod": "prod_dim",
    "max": "max_dim",
    "min": "min_dim",
    "unsqueeze": "unsqueeze_dim",
}


def missing_attribute(obj: Any, name: str) -> AttributeError:
    """The AttributeError for `name` on a Tensor: with the burn spelling when PyTorch has the name.

    Example:
        >>> str(missing_attribute(object(), "relu"))
        "'object' object has no attribute 'relu': burn.activation.relu(x) (PyTorch's x.relu())"
    """
    base = f"{type(obj).__name__!r} object has no attribute {name!r}"
    hint = PYTORCH_NAMES.get(name)
    if hint is None:
        return AttributeError(base, name=name, obj=obj)
    return AttributeError(f"{base}: {hint} (PyTorch's x.{name}())", name=name, obj=obj)


class _PyTorchName:
    """A class attribute standing for a PyTorch-only name: reading it, on a tensor or on the
    class, raises the AttributeError that names the burn spelling (so ``hasattr`` is False)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> NoReturn:
        if obj is None:  # Tensor.relu: the class has no such attribute either
            raise AttributeError(
                f"type object {owner.__name__!r} has no attribute {self.name!r}: {PYTORCH_NAMES[self.name]}",
                name=self.name,
                obj=owner,
            )
        raise missing_attribute(obj, self.name)


class HintsMixin:
    """Answers the PyTorch-only names of `PYTORCH_NAMES` with the burn spelling; other unknown
    names get Python's own AttributeError (with its "Did you mean")."""

    __slots__ = ()

    def __dir__(self) -> list[str]:
        # Completion (IPython, Jupyter) lists dir(x): the hint attributes are not the tensor's.
        return [name for name in super().__dir__() if name not in PYTORCH_NAMES]


for _name in PYTORCH_NAMES:
    setattr(HintsMixin, _name, _PyTorchName(_name))
del _name


def dim_given(op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> NoReturn:
    """Raise the TypeError for ``x.sum(1)``, ``x.mean(dim=1)``, ``x.unsqueeze(0)``: Burn's op
    without a dim works on the whole tensor (or adds a leading dim); the dim variant has its own name.

    Example:
        >>> dim_given("mean", (1,), {})  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        TypeError: mean() takes no dim ...
    """
    burn_op = _DIM_OPS[op]
    given = ", ".join([*(repr(a) for a in args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    dim = kwargs.get("dim", args[0] if args else "dim")
    if op == "unsqueeze":
        raise TypeError(
            f"unsqueeze() takes no dim in burn (it adds a leading dim, as Burn's unsqueeze); got ({given}). "
            f"Use x.unsqueeze_dim({dim}) for PyTorch's x.unsqueeze({dim})"
        )
    if op in ("max", "min"):  # PyTorch's x.max(dim) returns (values, indices), without the dim
        raise TypeError(
            f"{op}() takes no dim in burn: it reduces every element to shape (1,); got ({given}). "
            f"Use x.{burn_op}({dim}) for the values, or x.{burn_op}_with_indices({dim}) for "
            f"(values, indices) like PyTorch's x.{op}(dim={dim}); both keep the dim with size 1 "
            f"(Burn's rule: .squeeze({dim}) drops it)"
        )
    raise TypeError(
        f"{op}() takes no dim in burn: it reduces every element to shape (1,); got ({given}). "
        f"Use x.{burn_op}({dim}), which keeps the reduced dim with size 1 (Burn's rule; "
        f"x.{burn_op}({dim}).squeeze({dim}) drops it like PyTorch's x.{op}({dim}))"
    )


def shape_as_varargs(op: str, shape: Any, device: Any) -> None:
    """Raise the TypeError for ``Tensor.zeros(2, 3)``: the shape is one argument, a tuple.

    Called only when `device` is not a Device, so that a correct call pays one isinstance check.
    """
    if isinstance(device, int) and not isinstance(device, bool) and isinstance(shape, int):
        raise TypeError(
            f"Tensor.{op}({shape}, {device}): the shape is one argument, a tuple: "
            f"Tensor.{op}(({shape}, {device})) (the second argument is the device)"
        )
    raise TypeError(f"Tensor.{op}: device must be a burn Device, got {type(device).__name__} {device!r}")
