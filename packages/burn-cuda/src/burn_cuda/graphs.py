"""CUDA graphs: run a function of tensors once under stream capture, then replay its kernels.

On a GPU a small model's training step is bound by the host: every op costs Python and a CuPy
launch (12-27 us each on an H100 machine, `bench/gpu_overhead.py`), while its kernels take less.
`graphed` records the kernels of one call into a CUDA graph and replays the whole graph with one
launch on later calls, so the host cost of the forward and backward passes nearly vanishes.

How it works: on the first call with a given structure of arguments (and shapes, dtypes,
devices), the arguments' tensors are copied into buffers the graph owns, the function runs
``warmup`` times eagerly on a side stream (compiling kernels, filling a private memory pool),
then once under capture. Every later call copies its tensors into those buffers (skipped for a
tensor that already is one), launches the graph on the current stream and returns the results.

What a graphed function must be:

- **Device work only.** No host reads (``.item()``, ``to_data``, printing a tensor), no new host
  data (``Tensor.from_data``) inside: capture fails with `GraphCaptureError`. Random draws are
  fine: the generator state lives on the device and advances on every replay.
- **Pure in its tensor arguments.** Constants (ints, strings, a module's non-param fields) are
  those of the first call; a different value of a hashable argument captures another graph.
- **Without the optimizer step.** Its step count and learning rate are host values the graph
  would freeze; return gradients (`GradientsParams`) and step outside (the example below).

Results are rebuilt around the graph's own output buffers on every call: **the next call
overwrites them**, as in other frameworks' graph APIs; clone what you keep (``t.clone()``).
Results are detached from any autodiff graph. The function's arguments are never written.

Example:
    >>> import burn
    >>> from burn import nn, optim
    >>> from burn_cuda.graphs import graphed
    >>> B = burn.backend("autodiff(cuda)")  # doctest: +SKIP
    >>> model = nn.LinearConfig(784, 10).init(B.default_device())  # doctest: +SKIP
    >>> loss_fn, opt = nn.CrossEntropyLossConfig().init(), optim.AdamConfig().init()  # doctest: +SKIP
    >>> @graphed
    ... def grads(model, x, y):
    ...     return optim.GradientsParams.from_grads(loss_fn(model(x), y).backward(), model)
    >>> for x, y in batches:  # doctest: +SKIP
    ...     model = opt.step(1e-3, model, grads(model, x, y))
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import cupy as cp

from burn.errors import BurnError
from burn.foundations.kind import Float
from burn.tensor.tensor import Tensor
from burn_cuda import _gemm
from burn_cuda import _graph_tree as tree

R = TypeVar("R")
Array = Any

__all__ = ["GraphCaptureError", "GraphedFunction", "graphed"]


class GraphCaptureError(BurnError, RuntimeError):
    """The function did something a CUDA graph cannot record (a host read, new host data...)."""


def _array_of(path: str, t: Tensor) -> Array:
    """The CuPy array under `t` (through an autodiff wrapper), checked."""
    b = t.backend
    p = b.float_inner(t._p) if t.kind is Float and b.ad_enabled else t._p
    if not isinstance(p, cp.ndarray):
        raise TypeError(
            f"graphed: {path} is a tensor of backend {b.name!r}; graphs capture the tensors of "
            "'cuda' and 'autodiff(cuda)'"
        )
    return p


class _Captured:
    """One recorded graph: its input buffers, its results' buffers and the memory pool that holds
    them and its intermediates (never used by anything else)."""

    def __init__(
        self, graph: Any, inputs: list[Array], out_spec: Any, outputs: list[Array], pool: Any
    ) -> None:
        self.graph, self.inputs, self.out_spec, self.outputs = graph, inputs, out_spec, outputs
        self._pool = pool

    def replay(self, arrays: list[Array]) -> Any:
        for static, new in zip(self.inputs, arrays, strict=True):
            if new.data.ptr != static.data.ptr or new.strides != static.strides:
                cp.copyto(static, new)
        self.graph.launch(cp.cuda.get_current_stream())
        return tree.rebuild(self.out_spec, iter(self.outputs))


class _CaptureStreams(threading.local):
    """One side stream per thread and device for every capture: cuBLAS keeps a workspace per
    stream (`_cublas`), so a stream per graph would leave one behind for each."""

    def __init__(self) -> None:
        self.by_device: dict[int, Any] = {}

    def get(self) -> Any:
        device = cp.cuda.Device().id
        stream = self.by_device.get(device)
        if stream is None:
            # Blocking: it waits for the legacy default stream's work, and that stream for it.
            stream = self.by_device[device] = cp.cuda.Stream(non_blocking=False)
        return stream


_capture_streams = _CaptureStreams()


def _capture(fn: Callable[..., Any], spec: Any, arrays: list[Array], warmup: int, name: str) -> _Captured:
    pool = cp.cuda.MemoryPool()
    stream = _capture_streams.get()
    # The side stream must see the inputs' producers; afterwards the graph runs on the caller's.
    cp.cuda.get_current_stream().synchronize()
    # Matmuls take burn-cuda's own cuBLAS call (CuPy's refuses capture) in the warm-ups too.
    with cp.cuda.using_allocator(pool.malloc), stream, _gemm.direct_calls():
        inputs = [cp.array(a, copy=True, order="C") for a in arrays]
        args, kwargs = tree.rebuild(spec, iter(inputs))
        for _ in range(warmup):
            fn(*args, **kwargs)
        stream.synchronize()
        # Relaxed: the private pool may still allocate while capturing; the memory stays the pool's.
        stream.begin_capture(cp.cuda.runtime.streamCaptureModeRelaxed)
        try:
            out = fn(*args, **kwargs)
        except Exception as exc:
            try:
                stream.end_capture()
            except Exception:  # the capture is invalid already; the first error says why
                pass
            raise GraphCaptureError(
                f"graphed({name}): the function cannot be recorded in a CUDA graph: {exc}. A graphed "
                "function may only queue device work: no .item() / to_data / from_data inside"
            ) from exc
        graph = stream.end_capture()
    out_spec, leaves = tree.flatten(out, "result", result=True)
    outputs = [_array_of(path, t) for path, t in leaves]
    stream.synchronize()
    return _Captured(graph, inputs, out_spec, outputs, pool)


class GraphedFunction(Generic[R]):
    """`fn` recorded as a CUDA graph per structure of its arguments, replayed after; see
    `burn_cuda.graphs`. Calls are serialized (the graph's buffers are shared)."""

    def __init__(self, fn: Callable[..., R], warmup: int = 2) -> None:
        if warmup < 1:
            raise ValueError(f"graphed: warmup must be >= 1 (kernels compile eagerly first), got {warmup}")
        self._fn, self._warmup = fn, warmup
        self._name = getattr(fn, "__qualname__", repr(fn))
        self._graphs: dict[Any, _Captured] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    @property
    def captured(self) -> int:
        """How many graphs have been recorded (one per structure of arguments seen)."""
        return len(self._graphs)

    def reset(self) -> None:
        """Drop every recorded graph and its memory; the next call records again."""
        with self._lock:
            self._graphs.clear()

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        spec, leaves = tree.flatten((args, kwargs), "args")
        arrays = [_array_of(path, t) for path, t in leaves]
        devices = {a.device.id for a in arrays}
        if len(devices) > 1:
            raise ValueError(f"graphed({self._name}): the tensors are on several devices {sorted(devices)}")
        key = (spec, tuple((a.shape, a.dtype.str) for a in arrays), tuple(devices))
        with self._lock, cp.cuda.Device(devices.pop() if devices else cp.cuda.Device().id):
            entry = self._graphs.get(key)
            if entry is None:
                entry = _capture(self._fn, spec, arrays, self._warmup, self._name)
                self._graphs[key] = entry
            return entry.replay(arrays)  # type: ignore[no-any-return]


def graphed(fn: Callable[..., R] | None = None, *, warmup: int = 2) -> Any:
    """`fn` as a `GraphedFunction`; usable as ``@graphed`` or ``@graphed(warmup=3)``."""
    if fn is None:
        return lambda f: GraphedFunction(f, warmup)
    return GraphedFunction(fn, warmup)
