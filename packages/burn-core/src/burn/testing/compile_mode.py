"""The conformance suite's ``compile`` mode (``--burn-compile``): compiled results against eager ones.

With ``--burn-compile`` the suite runs as usual on each ``--burn-backend``, and additionally:

- every **module call** a test makes (a layer's or a model's forward, outside any other module's
  forward) is also run through `burn.compile`: traced once, then replayed, and the replay's
  tensors are compared with those of a plain eager call, which is what the test then gets;
- every **gradient check** (`burn.testing.gradcheck.check_gradients`, the ``test_*_gradients``
  cases) also computes the checked function's output and input gradients through
  `burn.compile.grad` (the forward and the backward pass replayed from one trace) and compares
  them with the eager autodiff ones.

Bitwise on a backend whose base is ``ndarray`` (the replay runs the same kernels, and the fused
ones reproduce them bit for bit); elsewhere within `burn.testing.tolerances` for the dtype.
Random draws are compared from the same generator state: the state is restored before the eager
call and before the replay, and left where one eager call leaves it.

A call that `burn.compile` runs eagerly (a host read, a param the forward replaces such as batch
norm's running statistics, lazy params not initialized yet) is not compared, and the session
ends with a summary line of what was compared and what fell back, by reason.

Example:
    >>> from burn.testing import compile_mode
    >>> compile_mode.active()
    False
"""

from __future__ import annotations

import copy
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from burn.capture.compiler import backend_generator_state, restore_generator
from burn.module.base import Module
from burn.module.param import Param

__all__ = ["active", "check_compiled_gradients", "disable", "draws", "enable", "enabled", "summary"]

_state: dict[str, Any] = {"active": False, "depth": 0, "original": None}
# Outcomes of the session: "module calls compared", "gradient checks compared", and one entry per
# fallback reason ("fell back: <reason>").
OUTCOMES: Counter[str] = Counter()
COMPARED_CALLS = "module calls compared"
COMPARED_GRADS = "gradient checks compared"


def active() -> bool:
    """Whether the suite runs in compile mode."""
    return bool(_state["active"])


def enable() -> None:
    """Turn the mode on: module calls go through `_checked_call` (idempotent)."""
    if _state["active"]:
        return
    _state["original"] = Module.__call__
    Module.__call__ = _checked_call  # type: ignore[method-assign, assignment]
    _state["active"] = True


def disable() -> None:
    """Turn the mode off and restore `Module.__call__`."""
    if not _state["active"]:
        return
    Module.__call__ = _state["original"]  # type: ignore[method-assign]
    _state["active"] = False


def summary() -> str:
    """One line: how many calls and gradient checks were compared, and the fallbacks by reason."""
    parts = [f"{OUTCOMES[COMPARED_CALLS]} module calls and {OUTCOMES[COMPARED_GRADS]} gradient checks "
             "compiled and equal to eager"]
    fell = sorted((n, k) for k, n in OUTCOMES.items() if k not in (COMPARED_CALLS, COMPARED_GRADS))
    if fell:
        parts.append("eager (not compared): " + "; ".join(f"{n} x {k}" for n, k in reversed(fell)))
    return ", ".join(parts)


# -- module calls ---------------------------------------------------------------------------------
def _checked_call(module: Any, *args: Any, **kwargs: Any) -> Any:
    original = _state["original"]
    if _state["depth"]:
        return original(module, *args, **kwargs)  # inside a forward, a trace or a replay
    _state["depth"] += 1
    try:
        return _compare_call(original, module, args, kwargs)
    finally:
        _state["depth"] -= 1


def _call(module: Any, *args: Any, **kwargs: Any) -> Any:
    return module(*args, **kwargs)


def _compare_call(
    original: Callable[..., Any], module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    from burn.capture.compiler import CompiledFunction, CompileWarning, _uninitialized

    backend = _backend_of(module, (*args, *kwargs.values()))
    if backend is None:
        return original(module, *args, **kwargs)
    compiled = CompiledFunction(_call, f"suite:{type(module).__qualname__}", max_recompiles=1)
    if _uninitialized((module,)):
        # Reading lazy params for the signature would draw their initial values out of the
        # forward's order: the eager call initializes them (what the test gets), then a twin of
        # the module (its own attributes: a forward replacing its state changes the twin only)
        # is traced and replayed from the generator state after it, the replay compared with the
        # traced run (whose every op ran eagerly).
        eager = original(module, *args, **kwargs)
        after = draws(backend)
        twin = _twin(module)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            traced = compiled(twin, *args, **kwargs)
            if not compiled.fallback_reasons():
                restore_generator(after)
                _compare(compiled, compiled(twin, *args, **kwargs), traced, backend, module)
        restore_generator(after)
        OUTCOMES.update(f"fell back: {_short(r)}" for r in compiled.fallback_reasons())
        return eager
    before = draws(backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        first = compiled(module, *args, **kwargs)  # the trace (or the one eager fallback)
    reasons = compiled.fallback_reasons()
    if reasons:
        OUTCOMES.update(f"fell back: {_short(r)}" for r in reasons)
        return first
    restore_generator(before)
    eager = original(module, *args, **kwargs)
    after = draws(backend)
    restore_generator(before)
    replayed = compiled(module, *args, **kwargs)
    restore_generator(after)
    _compare(compiled, replayed, eager, backend, module)
    return eager


def _compare(compiled: Any, replayed: Any, eager: Any, backend: Any, module: Any) -> None:
    from burn.capture.trace import flatten_tensors

    assert compiled.stats()["replays"] == 1, f"compile mode: {type(module).__name__} did not replay"
    got, want = flatten_tensors(replayed), flatten_tensors(eager)
    label = f"compile mode: {type(module).__name__} forward"
    assert len(got) == len(want), f"{label}: {len(got)} result tensors compiled, {len(want)} eager"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        _assert_equal(g, w, backend, f"{label}, result {i}")
    OUTCOMES[COMPARED_CALLS] += 1


def _twin(value: Any) -> Any:
    """`value` with every module in it copied (shallow, recursively): replacing an attribute of
    the twin (batch norm's running statistics) leaves the original as it was."""
    if isinstance(value, Module):
        out = copy.copy(value)
        for k, v in vars(value).items():
            twin = _twin(v)
            if twin is not v:
                object.__setattr__(out, k, twin)
        return out
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        items = [_twin(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else type(value)(items)
    if isinstance(value, dict):
        return {k: _twin(v) for k, v in value.items()}
    return value


# -- gradient checks ------------------------------------------------------------------------------
def check_compiled_gradients(
    fn: Callable[..., Any],
    tensors: Sequence[Any],
    weights: Any,
    eager_out: np.ndarray,
    eager_grads: Sequence[np.ndarray | None],
    wrt: Sequence[int],
    backend: Any,
    what: str,
    draws_before: Any = None,
) -> None:
    """Assert that ``sum(weights * fn(*tensors))``'s output and gradients for ``tensors[i]``,
    ``i`` in `wrt`, computed through `burn.compile.grad` (traced, then replayed), equal the eager
    ones (`eager_out`, `eager_grads`, in `wrt` order).

    Args:
        fn: the checked function of tensors (a gradient case's ``fn``).
        tensors: its inputs on `backend` (untracked: the ones in `wrt` become the params).
        weights: the upstream gradient ``W`` (a tensor of the output's shape and dtype).
        eager_out, eager_grads: the eager output (as the backend gave it) and gradients (as
            float64 arrays), on the host.
        wrt: the differentiated inputs.
        backend: the autodiff backend under test.
        what: the case's label for failure messages.
        draws_before: the generator state (`draws`) the eager run started from; the trace and
            the replay start from it too, and the state after the eager run is restored.
    """
    from burn.capture.compiler import CompileWarning
    from burn.capture.step import CompiledGrad

    params = [Param.from_tensor(tensors[i]) for i in wrt]
    others = [i for i in range(len(tensors)) if i not in wrt]

    def loss(holder: _Inputs, w: Any, *rest: Any) -> tuple[Any, Any]:
        args: list[Any] = list(tensors)
        for i, p in zip(wrt, holder.values, strict=True):
            args[i] = p.val()
        for i, t in zip(others, rest, strict=True):
            args[i] = t
        out = fn(*args)
        return (out * w).sum(), out

    compiled = CompiledGrad(loss, f"suite-grad:{what}", max_recompiles=1)
    holder = _Inputs(values=params)
    rest = [tensors[i] for i in others]
    after = draws(backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        restore_generator(draws_before)
        compiled(holder, weights, *rest)  # the trace
        reasons = compiled.fallback_reasons()
        if reasons:
            restore_generator(after)
            OUTCOMES.update(f"fell back: {_short(r)}" for r in reasons)
            return
        restore_generator(draws_before)
        (_, out), grads = compiled(holder, weights, *rest)  # the replay
        restore_generator(after)
    assert compiled.stats()["replays"] == 1, f"compile mode: {what}: the gradient case did not replay"
    label = f"{what}: " if what else ""
    _assert_equal(out, eager_out, backend, f"{label}compiled output vs eager")
    for i, p, want in zip(wrt, params, eager_grads, strict=True):
        got = grads.get(p.id)
        if want is None:
            assert got is None, f"{label}input {i}: compiled gradient where eager had none"
            continue
        assert got is not None, f"{label}input {i}: no compiled gradient, eager had one"
        _assert_equal(got, want, backend, f"{label}compiled gradient of input {i} vs eager")
    OUTCOMES[COMPARED_GRADS] += 1


class _Inputs(Module):
    """The differentiated inputs of a gradient case, as params (burn.compile.grad's model)."""

    values: list[Param]


# -- helpers ----------------------------------------------------------------------------------------
def _assert_equal(got: Any, want: Any, backend: Any, label: str) -> None:
    from burn.foundations.dtype import DType
    from burn.testing.tolerances import tolerance

    g = got if isinstance(got, np.ndarray) else np.asarray(got.to_data().array)
    w = want if isinstance(want, np.ndarray) else np.asarray(want.to_data().array)
    assert g.shape == w.shape, f"{label}: shape {g.shape}, eager {w.shape}"
    if _base(backend).name == "ndarray":
        np.testing.assert_array_equal(g, w, err_msg=f"{label} (bitwise on ndarray)")
        return
    if g.dtype.kind != "f":
        np.testing.assert_array_equal(g, w, err_msg=label)
        return
    rtol, atol = tolerance(DType.from_any(g.dtype), terms=10)
    np.testing.assert_allclose(
        g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol, err_msg=label
    )


def _base(backend: Any) -> Any:
    while backend.inner is not backend:
        backend = backend.inner
    return backend


def _backend_of(module: Any, values: tuple[Any, ...]) -> Any:
    from burn.capture.trace import flatten_tensors

    for _, p in module.named_params():
        owner = p.device.owner if p.device is not None else None
        if owner is not None:
            return owner
    for v in values:
        for t in flatten_tensors(v):
            return t.backend
    return None


def draws(backend: Any) -> Any:
    """The generator state random ops of `backend` continue from (None without a host one)."""
    return backend_generator_state(backend)


def _short(reason: str) -> str:
    return reason.split(" (")[0].split(":")[0]


@contextmanager
def enabled() -> Iterator[None]:
    """The mode on inside a ``with`` block (tests of the mode itself)."""
    was = active()
    enable()
    try:
        yield
    finally:
        if not was:
            disable()
