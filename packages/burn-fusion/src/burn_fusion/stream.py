"""The stream: element-wise ops recorded as IR, grouped into one block and run as one kernel.

The stream holds one open block. An op joins it when its output has the block's iteration
shape, or when it reads a value of the block and its output broadcasts with the block's shape
to one of the two, when it is on the block's device, and while the block stays under the bounds.
A block grows to a larger shape only up to `GROWTH_LIMIT` times its size, unless the larger shape
is small (`RECOMPUTE_BELOW`): a per-row value such as a layer norm's ``1 / std`` over [1024, 1024]
is computed by its own small kernel rather than once per element of the ops that use it.
Otherwise the block is flushed first. Flushing keeps only the values somebody still holds (weak
references tell) and the ops they need, and hands that to the inner backend's
``fusion_execute`` as one `FusedBlock`.

A reduction along a dim of a value of the block (`Stream.reduce`, when the inner backend fuses
that reduction) *closes* the block: the ops become the reduction's prologue, computed inside the
reduction's kernel. The block is not run at once but when the next op is recorded or a value is
read, so that the temporaries of the expression that called the reduction (``(c * c)`` in
``(c * c).mean_dim(1)``) are dropped by then and not written to memory.

A *row chain*: where the inner backend offers it (``fusion_rows``, an optional part of the fusion
contract: burn-opencl on a CPU device, sums and means along the last dim), ops go on past the
reduction, over the block's shape or its per-row shape (a layer norm's ``y - mean``, ``c * c``,
the second mean, ``c * rstd * gamma + beta``; softmax's ``exp / sum``). The reductions cut the
ops into stages; on flush the inner's ``fusion_execute_rows`` runs the stages as one kernel (each
row read and written once), or, when it declines, each stage runs as a block of its own, writing
the values later stages read.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from burn.backend.device import Device
from burn.backend.ir import FusedBlock, OpIR, ReduceIR, Shape, TensorIR, broadcast_shapes
from burn_fusion.tensor import FusionTensor

ENV_LOG = "BURN_FUSION_LOG"
MAX_OPS = 48  # ops per block: a bound on the kernel's size and on the values kept pending
MAX_INPUTS = 12  # tensors read per block: each one is a few kernel arguments
GROWTH_LIMIT = 16  # a block of smaller shape joins ops of a shape up to this many times larger,
RECOMPUTE_BELOW = 1 << 16  # or of any larger shape of fewer elements than this


def _numel(shape: Shape) -> int:
    n = 1
    for size in shape:
        n *= size
    return n


class FusionStats:
    """Counters of a stream, for tests and benchmarks.

    Attributes:
        kernels: fused kernels launched (flushed blocks that computed something; a long reduced
            dim may take a second pass, counted once).
        fused_ops: element-wise ops run inside those kernels.
        fused_reductions: reductions run inside those kernels, with their prologue.
        eliminated_ops: recorded ops whose results nobody held (never computed).
        eager_ops: ops run one by one on the inner backend (not fusable, or their inputs' dtypes).

    Example:
        >>> FusionStats().kernels
        0
    """

    __slots__ = ("kernels", "fused_ops", "fused_reductions", "eliminated_ops", "eager_ops")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Set every counter to zero."""
        self.kernels = 0
        self.fused_ops = 0
        self.fused_reductions = 0
        self.eliminated_ops = 0
        self.eager_ops = 0

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return f"FusionStats({', '.join(f'{k}={v}' for k, v in self.as_dict().items())})"


class Stream:
    """The open block of one fusion backend and the code that flushes it.

    Args:
        execute: runs a `FusedBlock` over inner primitives (the inner's ``fusion_execute``).
    """

    def __init__(
        self,
        execute: Callable[[FusedBlock, list[Any]], list[Any]],
        rows: Callable[[str, Shape, int, Any], bool] | None = None,
        execute_rows: Callable[[list[FusedBlock], dict[int, Any]], dict[int, Any] | None] | None = None,
    ) -> None:
        self._execute = execute
        self._rows = rows
        self._execute_rows = execute_rows
        self.lock = threading.RLock()
        self.stats = FusionStats()
        self.log = os.environ.get(ENV_LOG, "") not in ("", "0")
        self._next = 0
        self._clear()

    def _clear(self) -> None:
        self._shape: Shape | None = None
        self._device: Device | None = None
        self._ops: list[OpIR] = []
        self._inputs: list[TensorIR] = []
        self._values: list[Any] = []
        self._held: list[FusionTensor] = []  # the input handles, kept alive so their ids stay unique
        self._index: dict[int, TensorIR] = {}
        self._pending: list[tuple[TensorIR, weakref.ref[FusionTensor]]] = []
        # The reduction closing the block, and whether ops may go on past it (a row chain).
        self._reduce: tuple[ReduceIR, weakref.ref[FusionTensor], bool] | None = None
        # Reductions ops went on past: (ops before it, the reduction, its handle).
        self._cuts: list[tuple[int, ReduceIR, weakref.ref[FusionTensor]]] = []

    def __len__(self) -> int:
        return len(self._ops)

    def record(
        self,
        op: str,
        tensors: tuple[FusionTensor, ...],
        scalars: tuple[float, ...],
        shape: Shape,
        dtype: Any,
        device: Device,
    ) -> FusionTensor:
        """Append `op` over `tensors` (pending in this block or computed) and return its handle."""
        with self.lock:
            if self._ops and not self._joins(shape, device, tensors):
                self.flush()
            if self._reduce is not None:  # joined past the reduction: the row chain goes on
                red, ref, _ = self._reduce
                self._cuts.append((len(self._ops), red, ref))
                self._reduce = None
            if not self._ops:
                self._shape, self._device = shape, device
            elif shape != self._shape:
                self._shape = shape if self._shape is None else broadcast_shapes(op, [self._shape, shape])
            ins = []
            for t in tensors:
                if t.value is None and t.ir is not None:
                    ins.append(t.ir)
                    continue
                found = self._index.get(id(t))
                if found is None:
                    found = TensorIR(self._next, t.shape, t.dtype)  # type: ignore[arg-type]
                    self._next += 1
                    self._index[id(t)] = found
                    self._inputs.append(found)
                    self._values.append(t.value)
                    self._held.append(t)
                ins.append(found)
            out = TensorIR(self._next, shape, dtype)
            self._next += 1
            self._ops.append(OpIR(op, tuple(ins), (out,), scalars))
            handle = FusionTensor(None, shape, dtype, device, out)
            self._pending.append((out, weakref.ref(handle)))
            if len(self._ops) >= MAX_OPS:
                self.flush()
            return handle

    def reduce(self, op: str, tensor: FusionTensor, dim: int, shape: Shape) -> FusionTensor | None:
        """Close the open block with reduction `op` of `tensor` (pending in it) along `dim`, giving
        a handle of `shape` (keepdim); None when the reduction cannot end the block (`tensor` is
        computed, or smaller than the block's shape: a per-row value): the caller runs it alone."""
        with self.lock:
            if self._reduce is not None or not tensor.pending or tensor.shape != self._shape:
                return None
            if self._cuts and self._cuts[0][1].dim != dim:
                return None  # a row chain reduces along one dim
            src = tensor.ir
            assert src is not None
            out = TensorIR(self._next, shape, src.dtype)
            self._next += 1
            handle = FusionTensor(None, shape, src.dtype, self._device, out)
            rows = self._rows is not None and self._rows(op, src.shape, dim, src.dtype)
            if self._cuts and not rows:
                return None
            self._reduce = (ReduceIR(op, src, dim, out), weakref.ref(handle), rows)
            return handle

    def _joins(self, shape: Shape, device: Device, tensors: tuple[FusionTensor, ...]) -> bool:
        if device is not self._device and device != self._device:
            return False
        if len(self._inputs) + len(tensors) > MAX_INPUTS:
            return False
        current = self._shape
        if self._reduce is not None or self._cuts:
            # Past a reduction (a row chain): ops over the block's shape, or its per-row values.
            if self._reduce is not None and not self._reduce[2]:
                return False  # a reduction closed the block
            dim = (self._reduce[0] if self._reduce is not None else self._cuts[0][1]).dim
            assert current is not None
            if shape == current:
                return True
            if shape != current[:dim] + (1,) + current[dim + 1 :]:
                return False
            return any(t.value is None and t.ir is not None for t in tensors)
        if shape == current:
            return True
        if not any(t.value is None and t.ir is not None for t in tensors):
            # Of another shape and reading nothing of the block: an independent chain (an Adam
            # update of a bias after its weight's) would be recomputed per element of the block.
            return False
        try:
            grown = broadcast_shapes("fusion", [current, shape])  # type: ignore[list-item]
        except ValueError:
            return False
        # Growth only to one of the two shapes: two broadcasts crossing each other would make every
        # value earlier in the block be computed (and written) once per element of the product.
        if grown == current:
            return True
        # Growth from a small block (a layer norm's per-row ``(var + eps) ** -0.5``) to a shape
        # GROWTH_LIMIT times larger computes the small block's ops once per element of the large
        # one: a square root and a division per element cost pocl ~3 ms over [1024, 1024] against
        # ~0.05 ms for running the per-row ops as their own kernel. Under RECOMPUTE_BELOW elements
        # the recomputation costs less than that launch.
        if grown != shape:
            return False
        big = _numel(shape)
        return big < RECOMPUTE_BELOW or big < GROWTH_LIMIT * _numel(current)  # type: ignore[arg-type]

    def flush(self) -> None:
        """Compute every recorded value still held by somebody: one kernel, or one per stage of a
        row chain the inner backend does not run as one."""
        with self.lock:
            if not self._ops:
                return
            ops, inputs, values, pending = self._ops, self._inputs, self._values, self._pending
            cuts = list(self._cuts)
            if self._reduce is not None:
                cuts.append((len(ops), self._reduce[0], self._reduce[1]))
            self._clear()
            live = [(t, h) for t, ref in pending if (h := ref()) is not None]
            needed = {t.id for t, _ in live}
            held: list[tuple[ReduceIR, FusionTensor]] = []
            for _, red, ref in cuts:
                if (h := ref()) is not None:
                    held.append((red, h))
                    needed.add(red.output.id)
            # Walk back from the held values: ops and reductions nobody needs are dropped.
            kept: list[OpIR] = []
            stages: list[tuple[list[OpIR], ReduceIR | None]] = [([], None)]
            c = len(cuts) - 1
            for pos in range(len(ops), -1, -1):
                while c >= 0 and cuts[c][0] == pos:
                    red = cuts[c][1]
                    c -= 1
                    if red.output.id in needed:
                        needed.add(red.input.id)
                        stages.append(([], red))
                    else:
                        self.stats.eliminated_ops += 1
                if pos == 0:
                    break
                op = ops[pos - 1]
                if any(o.id in needed for o in op.outputs):
                    kept.append(op)
                    stages[-1][0].append(op)
                    needed.update(t.id for t in op.inputs)
            self.stats.eliminated_ops += len(ops) - len(kept)
            # Built last to first: each stage holds the reduction ending it and the ops before it.
            chain = [(list(reversed(o)), r) for o, r in reversed(stages) if o or r is not None]
            if not chain:
                return
            live_ids = {t.id for t, _ in live}
            env: dict[int, Any] = {}
            try:
                if len(chain) == 1:
                    self._run_block(chain[0][0], chain[0][1], inputs, values, live, needed, env)
                else:
                    self._run_chain(chain, inputs, values, live_ids, env)
            except BaseException:
                for _, h in live:
                    h.ir = None  # the value is lost: reading it raises (see `Fusion._value`)
                for _, h in held:
                    h.ir = None
                raise
            self.stats.fused_ops += len(kept)
            self.stats.fused_reductions += sum(1 for _, r in chain if r is not None)
            for red, h in held:
                if red.output.id in env:
                    h.value = env[red.output.id]
                    h.ir = None
            for t, h in live:
                h.value = env[t.id]
                h.ir = None

    def _run_block(
        self, ops: list[OpIR], reduce: ReduceIR | None, inputs: list[TensorIR], values: list[Any],
        live: list[tuple[TensorIR, FusionTensor]], needed: set[int], env: dict[int, Any],
    ) -> None:
        """One `FusedBlock` of `ops` ending in `reduce`: its live values and reduction into `env`."""
        used = [k for k, t in enumerate(inputs) if t.id in needed]
        shapes = [o.shape for op in ops for o in op.outputs]
        if reduce is not None:
            shapes.append(reduce.input.shape)
        shape = broadcast_shapes("fusion", shapes)
        outputs = tuple(t for t, _ in live)
        block = FusedBlock(shape, tuple(inputs[k] for k in used), tuple(ops), outputs, reduce)
        if self.log:
            print(f"[burn-fusion] {block}", file=sys.stderr, flush=True)
        results = self._execute(block, [values[k] for k in used])
        self.stats.kernels += 1
        env.update((t.id, v) for t, v in zip(outputs, results, strict=False))
        if reduce is not None:
            env[reduce.output.id] = results[-1]

    def _run_chain(
        self, chain: list[tuple[list[OpIR], ReduceIR | None]], inputs: list[TensorIR], values: list[Any],
        live_ids: set[int], env: dict[int, Any],
    ) -> None:
        """A row chain (stages past reductions along one dim): one call of the inner's
        ``fusion_execute_rows`` when it runs it, else one block per stage, each writing the values
        later stages read."""
        by_id = {t.id: values[k] for k, t in enumerate(inputs)}
        stages = []
        for ops, red in chain:
            read: dict[int, TensorIR] = {}
            own = {o.id for op in ops for o in op.outputs}
            for op in ops:
                for t in op.inputs:
                    if t.id not in own:
                        read.setdefault(t.id, t)
            if red is not None and red.input.id not in own:
                read.setdefault(red.input.id, red.input)
            outputs = tuple(o for op in ops for o in op.outputs if o.id in live_ids)
            stages.append((ops, red, tuple(read.values()), outputs))
        shapes = [o.shape for ops, *_ in stages for op in ops for o in op.outputs]
        shapes += [red.input.shape for _, red, *_ in stages if red is not None]
        shape = broadcast_shapes("fusion", shapes)
        originals = {t.id: by_id[t.id] for _, _, reads, _ in stages for t in reads if t.id in by_id}
        if self._execute_rows is not None:
            blocks = [FusedBlock(shape, reads, tuple(ops), outs, red) for ops, red, reads, outs in stages]
            if self.log:
                print(f"[burn-fusion] row chain of {len(blocks)} blocks over {list(shape)}", file=sys.stderr)
            found = self._execute_rows(blocks, originals)
            if found is not None:
                self.stats.kernels += 1
                env.update(found)
                return
        env.update(originals)
        later_reads = [{t.id for t in reads} for _, _, reads, _ in stages]
        for k, (ops, red, reads, outs) in enumerate(stages):
            after = set().union(*later_reads[k + 1 :]) if k + 1 < len(stages) else set()
            extra = tuple(o for op in ops for o in op.outputs if o.id in after and o.id not in live_ids)
            written = outs + extra
            stage_shapes = [o.shape for op in ops for o in op.outputs]
            if red is not None:
                stage_shapes.append(red.input.shape)
            block = FusedBlock(broadcast_shapes("fusion", stage_shapes), reads, tuple(ops), written, red)
            if self.log:
                print(f"[burn-fusion] {block}", file=sys.stderr, flush=True)
            results = self._execute(block, [env[t.id] for t in reads])
            self.stats.kernels += 1
            env.update((t.id, v) for t, v in zip(written, results, strict=False))
            if red is not None:
                env[red.output.id] = results[-1]
