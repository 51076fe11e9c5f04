"""`burn.profile()`: which backend ops cost what, by op and by module, on every backend.

cProfile sees Python frames; this sees backend ops. While a profile is open, every live backend
gets instance attributes that shadow its contract ops (`burn.backend.contract.op_facts`) with a
recording wrapper, and `Module.__call__` keeps a stack of module paths. Closing the last open
profile removes them all, so code outside a profile runs exactly the methods it always runs (no
flag is checked on the normal path).

What an event holds:

- ``name``: the contract op (``"float_matmul"``; the ``*_owned`` buffer-reusing variants are
  recorded under their op's name), or ``"<op>.backward"`` for an autodiff backward rule.
- ``depth``: 0 for an op the Tensor API called; ops that op ran in turn (a decorator's inner
  backend, a default op's building blocks, a backward rule's ops) have depth 1 and more. Tables
  count depth 0 only, so nothing is counted twice.
- time: host wall time (``perf_counter_ns``). With ``sync=True`` (default) the backend's
  ``sync()`` runs after every depth-0 op returning tensors, inside its time, so on asynchronous
  backends (OpenCL, CUDA) an op's time covers its device work: host time plus a sync, not device
  event time. Metadata ops (``float_shape``...) are contract ops too, and are recorded.
- ``nbytes``: the bytes of the op's outputs (elements x item size, from their shapes and dtypes).
- ``kind``: ``"op"``, ``"backward"``, ``"module"``, or ``"data"`` for the `DataLoader`'s
  ``"data.wait"`` spans (the calling thread waiting for a batch's items; `record_span`).
- ``module``: the innermost module being called, as a path from the outermost one
  (``"encoder.layers.1.mha"``; the outermost module is named by its class, ops outside any
  module have ``""``). Backward rules are attributed to the module of their forward op.

Under autodiff, a forward op recorded in a profile marks its graph node, so when backward runs
inside a profile the node's rule is recorded as ``"<op>.backward"`` with the rule's own ops
beneath it. Gradient seeding, accumulation and deferred products (autodiff defers the weight
gradient ``X^T G`` of a small matmul until every consumer ran) run outside any rule and appear
under their own op names, outside any module.

Threads: a profile records only the ops of the thread that opened it. Other threads keep running
while it is open; their ops pass through the wrappers unrecorded (a few hundred nanoseconds
each). Profiles nest: an inner one records into every profile open in its thread.

Example:
    >>> import burn
    >>> B = burn.backend("ndarray")
    >>> x = burn.Tensor.ones((4, 4), backend=B)
    >>> with burn.profile() as prof:
    ...     y = (x @ x + 1).sum()
    >>> {row.name: row.calls for row in prof.stats()}["float_matmul"]
    1
    >>> print(prof.table())  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import json
import math
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter_ns
from typing import Any

from burn.backend import instances
from burn.backend.contract import op_facts

__all__ = ["Event", "OpStats", "Profile", "profile", "record_span"]


@dataclass(frozen=True, slots=True)
class Event:
    """One recorded op call (or one module call, ``kind == "module"``).

    Attributes:
        name: the op (``"float_add"``), ``"<op>.backward"`` for a backward rule, or the module
            path for a module call.
        kind: ``"op"``, ``"backward"``, ``"module"``, or ``"data"`` (`record_span`).
        start_ns: when it started, in ``perf_counter_ns`` nanoseconds.
        duration_ns: how long it took.
        depth: 0 for ops the Tensor API called (or a backward rule); more for ops run inside one.
        module: the innermost module path (``""`` outside any module).
        nbytes: bytes of the outputs (0 for ops returning no tensor, and for module events).
        backend: the backend's name.
        thread: the id of the thread (``threading.get_ident()``).
    """

    name: str
    kind: str
    start_ns: int
    duration_ns: int
    depth: int
    module: str
    nbytes: int
    backend: str
    thread: int


@dataclass(frozen=True, slots=True)
class OpStats:
    """One row of `Profile.table`: the depth-0 events of one op (or one module path).

    Attributes:
        name: the op, or the module path.
        calls: how many.
        total_ns: their total time.
        nbytes: the bytes of their outputs, summed.
        percent: `total_ns` as a percentage of all depth-0 events' time.
    """

    name: str
    calls: int
    total_ns: int
    nbytes: int
    percent: float

    @property
    def mean_ns(self) -> float:
        """Mean time of one call."""
        return self.total_ns / self.calls


class _State(threading.local):
    """What the current thread is recording (class attributes give every thread its defaults)."""

    profiles: tuple[Profile, ...] = ()
    depth: int = 0
    module: str = ""
    modules: list[tuple[Any, str]]  # the module call stack: (module, path)

    def __init__(self) -> None:
        self.modules = []


_state = _State()
_lock = threading.Lock()  # guards installing and removing the wrappers
_open = 0  # profiles open in all threads
_installed: dict[int, tuple[Any, dict[str, Any]]] = {}  # id(backend) -> (backend, its previous attrs)
_MISSING = object()
_module_call: Any = None  # the Module.__call__ replaced while profiling
_paths: dict[tuple[int, int], tuple[Any, Any, str]] = {}  # (id(parent), id(child)) -> path in parent


def profile(*, sync: bool = True) -> Profile:
    """A profile of the backend ops run in this thread while it is open (a context manager).

    Args:
        sync: wait for the device after every op the Tensor API calls (inside that op's time), so
            an asynchronous backend's time is its device work's; no cost on ndarray, where it is a
            no-op. ``False`` gives enqueue times only.

    Returns:
        a `Profile`: use it in a ``with`` block (or call `Profile.start` and `Profile.stop`), then
        read `Profile.table`, `Profile.stats`, `Profile.events` or `Profile.export_chrome_trace`.

    Example:
        >>> import burn
        >>> B = burn.backend("ndarray")
        >>> with burn.profile() as prof:
        ...     _ = burn.Tensor.ones((2, 2), backend=B) + 1
        >>> [e.name for e in prof.events if e.depth == 0]
        ['float_full', 'float_add_scalar']
    """
    if not isinstance(sync, bool):
        raise TypeError(f"burn.profile(sync=...): expected a bool, got {sync!r}")
    return Profile(sync=sync)


class Profile:
    """Backend ops recorded between `start` and `stop` (see `burn.profile` and the module docs).

    Attributes:
        sync: whether depth-0 ops sync their backend inside their time.
        thread: the id of the thread it records (set by `start`).
    """

    def __init__(self, *, sync: bool = True) -> None:
        self.sync = sync
        self.thread: int | None = None
        self._events: list[Event] = []
        self._state = "new"  # new -> open -> closed

    # -- opening and closing ------------------------------------------------------------------
    def __enter__(self) -> Profile:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Profile:
        """Begin recording this thread's ops; returns self. A profile is started once."""
        if self._state != "new":
            raise RuntimeError(
                f"burn.profile: this profile is already {self._state}; start a new burn.profile()"
            )
        self._state = "open"
        self.thread = threading.get_ident()
        _open_profile()
        s = _state
        s.profiles = (*s.profiles, self)
        return self

    def stop(self) -> Profile:
        """Stop recording; returns self. Profiles nest: the innermost open one stops first."""
        if self._state != "open":
            raise RuntimeError(f"burn.profile: stop() on a profile that is {self._state}, not open")
        if threading.get_ident() != self.thread:
            raise RuntimeError("burn.profile: stop() must run in the thread that started the profile")
        s = _state
        if s.profiles[-1] is not self:
            raise RuntimeError("burn.profile: profiles nest; stop the innermost open profile first")
        s.profiles = s.profiles[:-1]
        self._state = "closed"
        _close_profile()
        return self

    @property
    def active(self) -> bool:
        """Whether it is recording now."""
        return self._state == "open"

    # -- results ------------------------------------------------------------------------------
    @property
    def events(self) -> list[Event]:
        """Every recorded event (ops at all depths, backward rules, module calls), by start time."""
        return sorted(self._events, key=lambda e: (e.start_ns, e.depth))

    def stats(self, by: str = "op") -> list[OpStats]:
        """Depth-0 events grouped by op name (``by="op"``) or by innermost module path
        (``by="module"``), most total time first.

        Raises:
            ValueError: `by` is neither ``"op"`` nor ``"module"``.

        Example:
            >>> import burn
            >>> B = burn.backend("ndarray")
            >>> with burn.profile() as prof:
            ...     x = burn.Tensor.ones((3,), backend=B)
            ...     y = x + x + x
            >>> {s.name: s.calls for s in prof.stats()}["float_add"]
            2
        """
        if by not in ("op", "module"):
            raise ValueError(f"Profile.stats(by=...): expected 'op' or 'module', got {by!r}")
        groups: dict[str, list[int]] = {}
        total = 0
        for e in self._events:
            if e.depth or e.kind == "module":
                continue
            key = e.name if by == "op" else e.module
            g = groups.get(key)
            if g is None:
                g = groups[key] = [0, 0, 0]
            g[0] += 1
            g[1] += e.duration_ns
            g[2] += e.nbytes
            total += e.duration_ns
        rows = [
            OpStats(name, c, t, b, 100.0 * t / total if total else 0.0) for name, (c, t, b) in groups.items()
        ]
        return sorted(rows, key=lambda r: (-r.total_ns, r.name))

    def stats_by_name(self, by: str = "op") -> dict[str, OpStats]:
        """`stats` as a dict by op name (or module path)."""
        return {row.name: row for row in self.stats(by)}

    def table(self, by: str = "op", top: int | None = 20) -> str:
        """A text table of `stats`: op (or module), calls, total time, mean, % of total, output
        bytes; the `top` rows with the most time (None: all), then the total.

        Raises:
            ValueError: a bad `by`, or `top` not a positive int or None.
        """
        if top is not None and (not isinstance(top, int) or isinstance(top, bool) or top < 1):
            raise ValueError(f"Profile.table(top=...): expected a positive int or None, got {top!r}")
        rows = self.stats(by)
        shown = rows if top is None else rows[:top]
        head = "module" if by == "module" else "op"
        names = [(r.name or "(no module)") for r in shown]
        width = max([len(head), 5, *map(len, names)])
        lines = [f"{head:<{width}}  {'calls':>7}  {'total':>10}  {'mean':>10}  {'%':>6}  {'out bytes':>10}"]
        lines.append("-" * len(lines[0]))
        for name, r in zip(names, shown, strict=True):
            lines.append(
                f"{name:<{width}}  {r.calls:>7}  {_time(r.total_ns):>10}  {_time(r.mean_ns):>10}  "
                f"{r.percent:>5.1f}%  {_bytes(r.nbytes):>10}"
            )
        if len(shown) < len(rows):
            lines.append(f"... {len(rows) - len(shown)} more")
        calls = sum(r.calls for r in rows)
        total = sum(r.total_ns for r in rows)
        nbytes = sum(r.nbytes for r in rows)
        lines.append(
            f"{'total':<{width}}  {calls:>7}  {_time(total):>10}  {'':>10}  {'':>6}  {_bytes(nbytes):>10}"
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<burn.Profile {self._state}, {len(self._events)} events>"

    def chrome_trace(self) -> dict[str, Any]:
        """The events in the Chrome trace format (``{"traceEvents": [...]}``, complete ``"X"``
        events in microseconds) that chrome://tracing and https://ui.perfetto.dev open."""
        t0 = min((e.start_ns for e in self._events), default=0)
        pid = os.getpid()
        out = []
        for e in self.events:
            out.append({
                "name": e.name,
                "cat": e.kind,
                "ph": "X",
                "ts": (e.start_ns - t0) / 1000.0,
                "dur": e.duration_ns / 1000.0,
                "pid": pid,
                "tid": e.thread,
                "args": {"module": e.module, "bytes": e.nbytes, "backend": e.backend, "depth": e.depth},
            })
        return {"traceEvents": out, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> Path:
        """Write `chrome_trace` as JSON to `path` (parent folders are created); returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.chrome_trace()))
        return target


def record_span(name: str, start_ns: int, duration_ns: int, kind: str = "data") -> None:
    """Record a span that is not a backend op (``kind="data"``: the `DataLoader`'s
    ``"data.wait"``, the time the calling thread waited for a batch's items) into the profiles
    open in this thread; nothing when none is open. Spans count in `Profile.stats` and tables like
    depth-0 ops.

    Example:
        >>> import burn
        >>> from burn.profiler import record_span
        >>> with burn.profile() as prof:
        ...     record_span("data.wait", 0, 1500)
        >>> prof.stats_by_name()["data.wait"].total_ns
        1500
    """
    profiles = _state.profiles
    if profiles:
        event = Event(name, kind, start_ns, duration_ns, 0, _state.module, 0, "", threading.get_ident())
        for p in profiles:
            p._events.append(event)


# -- formatting --------------------------------------------------------------------------------
def _time(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e3:.1f} us"


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _nbytes(out: Any) -> int:
    """Bytes of an op's output primitives: numpy-like arrays (``nbytes``), primitives with a shape
    and a burn dtype (OpenCL's), decorator primitives (``.p``: autodiff), tuples of them."""
    if isinstance(out, (tuple, list)):
        return sum(_nbytes(o) for o in out)
    nb = getattr(out, "nbytes", None)
    if isinstance(nb, int):
        return nb
    inner = getattr(out, "p", None)
    if inner is not None:
        return _nbytes(inner)
    shape, dtype = getattr(out, "shape", None), getattr(out, "dtype", None)
    size = getattr(dtype, "itemsize", None)
    if isinstance(shape, tuple) and isinstance(size, int):
        return math.prod(shape) * size
    return 0


# -- installing and removing the wrappers -----------------------------------------------------
@functools.cache
def _op_names() -> dict[str, tuple[str, bool, bool]]:
    """Attribute name -> (op recorded, whether it returns tensors, whether its result may carry
    an autodiff node)."""
    names: dict[str, tuple[str, bool, bool]] = {}
    for name, facts in op_facts().items():
        tensor_out = facts.returns in ("P", "tuple")
        names[name] = names[name + "_owned"] = (name, tensor_out, tensor_out and facts.differentiable)
    return names


def _open_profile() -> None:
    global _open
    with _lock:
        _open += 1
        if _open == 1:
            for backend in instances.live():
                _instrument(backend)
            instances.ON_NEW.append(_instrument_new)
            _patch_modules()


def _close_profile() -> None:
    global _open
    with _lock:
        _open -= 1
        if _open == 0:
            instances.ON_NEW.remove(_instrument_new)
            for backend in instances.live():
                _restore(backend)
            _installed.clear()
            _unpatch_modules()
            _paths.clear()


def _instrument_new(backend: Any) -> None:
    with _lock:
        _instrument(backend)


def _instrument(backend: Any) -> None:
    if id(backend) in _installed:
        return
    attrs = vars(backend)
    saved: dict[str, Any] = {}
    for attr, (op, tensor_out, tracked) in _op_names().items():
        fn = getattr(backend, attr, None)
        if fn is None or not callable(fn):
            continue
        if getattr(fn, "__burn_profiled__", False):  # a wrapper copied from another backend
            continue
        saved[attr] = attrs.get(attr, _MISSING)
        setattr(backend, attr, _wrap(op, fn, backend, tensor_out, tracked))
    _installed[id(backend)] = (backend, saved)


def _restore(backend: Any) -> None:
    """Put back what `_instrument` replaced, and unwrap wrappers copied from other backends
    (a decorator built during the profile binds its inner's ops)."""
    entry = _installed.get(id(backend))
    saved = entry[1] if entry is not None and entry[0] is backend else {}
    for attr, value in list(vars(backend).items()):
        if not getattr(value, "__burn_profiled__", False):
            continue
        previous = saved.get(attr, _MISSING)
        if attr in saved and previous is _MISSING:
            delattr(backend, attr)
        elif attr in saved:
            setattr(backend, attr, previous)
        else:
            setattr(backend, attr, value.__wrapped__)


def _wrap(
    op: str, fn: Callable[..., Any], backend: Any, tensor_out: bool, tracked: bool
) -> Callable[..., Any]:
    bname = backend.name

    def recorded(*args: Any, **kwargs: Any) -> Any:
        s = _state
        profiles = s.profiles
        if not profiles:  # another thread's op, or a profile closed while this one ran
            return fn(*args, **kwargs)
        depth = s.depth
        s.depth = depth + 1
        start = perf_counter_ns()
        try:
            out = fn(*args, **kwargs)
            if depth == 0 and tensor_out and profiles[-1].sync:
                backend.sync()
        finally:
            s.depth = depth
        end = perf_counter_ns()
        nbytes = _nbytes(out) if tensor_out else 0
        event = Event(op, "op", start, end - start, depth, s.module, nbytes, bname, threading.get_ident())
        for p in profiles:
            p._events.append(event)
        if tracked and depth == 0:
            _mark_nodes(out, op, s.module, args)
        return out

    recorded.__wrapped__ = fn  # type: ignore[attr-defined]
    recorded.__burn_profiled__ = True  # type: ignore[attr-defined]
    recorded.__name__ = getattr(fn, "__name__", op)
    return recorded


# -- autodiff: backward rules attributed to their forward op ----------------------------------
def _mark_nodes(out: Any, op: str, module: str, args: tuple[Any, ...]) -> None:
    """Wrap the backward rule of the graph node(s) `out` carries (an autodiff primitive's
    ``.node.rule``), unless the op passed an input through unchanged."""
    for o in out if isinstance(out, tuple) else (out,):
        node = getattr(o, "node", None)
        rule = getattr(node, "rule", None)
        if rule is None or getattr(rule, "__burn_profiled__", False) or any(o is a for a in args):
            continue
        node.rule = _backward_rule(rule, op, module)  # type: ignore[union-attr]


def _backward_rule(rule: Callable[..., Any], op: str, module: str) -> Callable[..., Any]:
    name = op + ".backward"

    def recorded(backend: Any, *args: Any) -> Any:
        s = _state
        profiles = s.profiles
        if not profiles:
            return rule(backend, *args)
        depth, outer = s.depth, s.module
        s.depth, s.module = depth + 1, module
        start = perf_counter_ns()
        try:
            grads = rule(backend, *args)
            if depth == 0 and profiles[-1].sync:
                backend.sync()
        finally:
            s.depth, s.module = depth, outer
        end = perf_counter_ns()
        nbytes = _nbytes(tuple(g for g in grads if g is not None))
        event = Event(name, "backward", start, end - start, depth, module, nbytes, backend.name,
                      threading.get_ident())
        for p in profiles:
            p._events.append(event)
        return grads

    recorded.__wrapped__ = rule  # type: ignore[attr-defined]
    recorded.__burn_profiled__ = True  # type: ignore[attr-defined]
    recorded.__name__ = getattr(rule, "__name__", name)
    return recorded


# -- modules: the path of the innermost module being called -----------------------------------
def _patch_modules() -> None:
    global _module_call
    from burn.module import Module

    _module_call = Module.__dict__["__call__"]
    original = _module_call

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        s = _state
        if not s.profiles:
            return original(self, *args, **kwargs)
        stack = s.modules
        path = _module_path(stack, self)
        outer = s.module
        stack.append((self, path))
        s.module = path
        start = perf_counter_ns()
        try:
            return original(self, *args, **kwargs)
        finally:
            end = perf_counter_ns()
            stack.pop()
            s.module = outer
            event = Event(path, "module", start, end - start, s.depth, path, 0, "", threading.get_ident())
            for p in s.profiles:
                p._events.append(event)

    Module.__call__ = __call__  # type: ignore[method-assign]


def _unpatch_modules() -> None:
    from burn.module import Module

    Module.__call__ = _module_call  # type: ignore[method-assign]


def _module_path(stack: list[tuple[Any, str]], module: Any) -> str:
    """The path of `module` called from the top of `stack`: its class name when outermost, else
    its field path in the module calling it (through lists and dicts), prefixed by that module's
    path unless that one is outermost."""
    if not stack:
        return type(module).__name__
    parent, parent_path = stack[-1]
    if parent is module:
        return parent_path
    key = (id(parent), id(module))
    hit = _paths.get(key)
    if hit is None:
        rel = next(_find(parent, module, ""), None) or type(module).__name__
        hit = _paths[key] = (parent, module, rel)
    rel = hit[2]
    return rel if len(stack) == 1 else f"{parent_path}.{rel}"


def _find(value: Any, target: Any, prefix: str) -> Iterator[str]:
    """Paths of `target` inside `value`'s fields, depth first (modules, lists, tuples, dicts)."""
    from burn.module import Module

    if isinstance(value, Module):
        items: Any = vars(value).items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    elif isinstance(value, dict):
        items = value.items()
    else:
        return
    for key, item in items:
        path = f"{prefix}{key}"
        if item is target:
            yield path
        elif isinstance(item, (Module, list, tuple, dict)):
            yield from _find(item, target, path + ".")
