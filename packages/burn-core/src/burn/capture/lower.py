"""Lowering a captured `burn.backend.ir.Program` to a plan that replays it fast on one backend.

`Plan(program, backend)` does, once:

- **dead code removal**: calls none of whose results reach an output are dropped, except random
  ops (they advance the backend's generator, so the next call's draws match eager's);
- **fusion**: runs of element-wise calls over one iteration shape that the backend's fused
  kernels support (the fusion contract, `burn.backend.fusion`) become one `FusedBlock` launched
  through ``fusion_execute``; a block runs where its last op was, unless a call in between reads
  one of its values (the block then runs before that call);
- **buffer planning**: every value is dropped right after its last reader, so its memory goes
  back to the allocator while the rest of the program runs; inputs the caller *donates* (an
  optimizer's moments) and dying values are handed to the fused optimizer ops, which may write
  the new state into their buffers (in place);
- **scalar inputs**: a call argument that is a `ScalarInput` is read from ``Plan.run``'s
  `scalars` at each run (an optimizer's learning rate and bias corrections), so a value that
  changes between runs never changes the plan.

`Plan.run` then calls the backend's ops on primitives from a flat list of steps: no Tensor API,
no autodiff or capture layer, no name lookups per op.

Example:
    >>> import burn
    >>> from burn.capture import trace
    >>> x = burn.Tensor.from_data([1.0, -2.0], backend="ndarray")
    >>> plan = Plan(trace(lambda v: (v * 2.0 + 1.0).abs(), x).program, x.backend)
    >>> plan.fused_groups, plan.run([x._p], {})[0].tolist()
    (1, [3.0, 3.0])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from burn.backend.base import Backend
from burn.backend.contract import op_facts
from burn.backend.fusion import supports_fusion
from burn.backend.ir import DEVICE, ELEMENTWISE, CallIR, FusedBlock, OpIR, Program, TensorIR, broadcast_shapes
from burn.foundations.data import TensorData

__all__ = ["MAX_BLOCK_INPUTS", "MAX_BLOCK_OPS", "Plan", "ScalarInput", "is_random"]

MAX_BLOCK_OPS = 48  # a bound on a generated kernel's size
MAX_BLOCK_INPUTS = 12  # tensors one kernel reads

# How an argument is built at run time: a constant, a value, the device, a list of values, an
# array, a scalar input.
_CONST, _VALUE, _DEVICE, _VALUES, _ARRAY, _SCALAR = range(6)
_OWNED = 2  # a step calling an ``*_owned`` op with operands handed over
_HANDOVER = 3  # a step calling a fused optimizer op with its dying operands handed over
# The fused optimizer updates (`burn.backend.ops.optim`): their tensor operands other than the
# param may be handed over, the backend then writes the new state (and param) into them.
# Each with its arity: the call is made with each operand a local of the calling frame only (no
# argument tuple), which is what a backend's ownership proof counts (burn_ndarray.runtime.ownership).
HANDOVER_OPS: dict[str, int] = {"float_adam_step": 8, "float_sgd_momentum_step": 8, "float_rmsprop_step": 11}


@dataclass(frozen=True)
class ScalarInput:
    """A call argument read from ``Plan.run(..., scalars=...)`` at each run, not a constant.

    Attributes:
        index: its position in `scalars`.
        name: what it is (printed in the program), e.g. ``"fc.weight:step_size"``.

    Example:
        >>> print(ScalarInput(0, "lr"))
        s0:lr
    """

    index: int
    name: str

    def __repr__(self) -> str:
        return f"s{self.index}:{self.name}"


# Element-wise selects whose eager result's layout follows a broadcast operand (see `_group`).
_LAYOUT_OPS = frozenset({"float_mask_fill", "float_mask_where", "int_mask_fill", "int_mask_where"})


def is_random(op: str) -> bool:
    """Whether `op` draws from the backend's generator (never removed, never reordered), as
    declared at the op (``random=True``, `burn.backend.contract.OpFacts.random`).

    Example:
        >>> is_random("float_random"), is_random("float_add")
        (True, False)
    """
    return op_facts()[op].random


def _encode(a: Any) -> tuple[int, Any]:
    if isinstance(a, TensorIR):
        return (_VALUE, a.id)
    if a is DEVICE:
        return (_DEVICE, None)
    if isinstance(a, ScalarInput):
        return (_SCALAR, a.index)
    if isinstance(a, tuple) and a and all(isinstance(t, TensorIR) for t in a):
        return (_VALUES, tuple(t.id for t in a))
    if hasattr(a, "__array__") and hasattr(a, "dtype") and hasattr(a, "shape"):
        return (_ARRAY, a)
    return (_CONST, a)


class Plan:
    """A `Program` prepared for replay on `backend` (see the module docstring).

    Args:
        program: the captured program.
        backend: the backend its inputs and params live on.
        fuse: whether to group element-wise chains (when the backend implements the contract).
        donated: ids of inputs whose buffers `run` may hand over to a fused optimizer op
            reading them last (the caller gives them up: `run` empties its `inputs` list).
        unfused: ids of values whose calls run one op at a time, never in a fused block (a
            compiled step's optimizer update, see `burn.capture.step`).

    Attributes:
        fused_groups: fused blocks in the plan (each one kernel launch per run).
        fused_ops: element-wise ops inside those blocks.
        removed: calls dropped as dead code.
        steps: the number of backend calls per run.
        step_ops: each step's op (``"fused"`` for a fused block).
        kernels: fused kernels launched by `run` so far.
        timings: None, or a list each `run` appends its steps' times to (seconds).
    """

    def __init__(
        self, program: Program, backend: Backend, fuse: bool = True, donated: frozenset[int] = frozenset(),
        unfused: frozenset[int] = frozenset(),
    ) -> None:
        self.program = program
        self.backend = backend
        self.donated = donated
        calls = self._live(program)
        self.removed = len(program.calls) - len(calls)
        units: list[CallIR | FusedBlock] = list(calls)
        if fuse and supports_fusion(backend):
            units = self._group(calls, backend, unfused)
        self.fused_groups = sum(isinstance(u, FusedBlock) for u in units)
        self.fused_ops = sum(len(u.ops) for u in units if isinstance(u, FusedBlock))
        self.kernels = 0
        self.timings: list[float] | None = None
        self._steps = self._compile(units, program)
        self.steps = len(self._steps)
        self.step_ops = tuple(
            "fused" if isinstance(u, FusedBlock) else u.op for u in units
        )  # what each step runs, for `run`'s timings

    # -- planning ---------------------------------------------------------------------------
    @staticmethod
    def _live(program: Program) -> list[CallIR]:
        needed = {t.id for t in program.outputs}
        kept: list[CallIR] = []
        for call in reversed(program.calls):
            if is_random(call.op) or any(t is not None and t.id in needed for t in call.outputs):
                kept.append(call)
                needed.update(t.id for t in call.values())
        kept.reverse()
        return kept

    @staticmethod
    def _group(
        calls: list[CallIR], backend: Backend, unfused: frozenset[int] = frozenset()
    ) -> list[CallIR | FusedBlock]:
        fusable: Any = backend
        ops = frozenset(fusable.fusion_ops()) & ELEMENTWISE.keys()
        dtypes = frozenset(fusable.fusion_dtypes())
        units: list[CallIR | FusedBlock] = []
        group: list[OpIR] = []
        produced: set[int] = set()
        shape: tuple[int, ...] | None = None
        reads: dict[int, TensorIR] = {}

        def as_op(call: CallIR) -> OpIR | None:
            spec = ELEMENTWISE.get(call.op)
            if spec is None or call.op not in ops or call.kwargs or spec.result == "cast":
                return None
            if call.outputs and call.outputs[0] is not None and call.outputs[0].id in unfused:
                return None
            if len(call.args) != spec.arity + spec.nscalars:
                return None
            tensors, scalars = call.args[: spec.arity], call.args[spec.arity :]
            if not all(isinstance(t, TensorIR) and t.dtype in dtypes for t in tensors):
                return None
            if not all(isinstance(s, int | float) and not isinstance(s, bool) for s in scalars):
                return None
            out = call.outputs[0]
            if len(call.outputs) != 1 or out is None or out.dtype not in dtypes:
                return None
            try:
                if broadcast_shapes(call.op, [t.shape for t in tensors]) != out.shape:
                    return None
            except ValueError:
                return None
            if call.op in _LAYOUT_OPS and any(t.shape != out.shape for t in tensors):
                # Eagerly, a select over a broadcast operand (attention's causal mask) may return
                # another memory layout than the fused kernel's C-contiguous output (burn-ndarray),
                # and the reductions and products after it then sum in another order: left
                # unfused, the values downstream stay the eager run's bits.
                return None
            return OpIR(call.op, tuple(tensors), (out,), tuple(float(s) for s in scalars))

        def flush() -> None:
            nonlocal group, produced, shape, reads
            if len(group) == 1:
                units.append(pending_calls[0])
            elif group:
                assert shape is not None
                units.append(FusedBlock(shape, tuple(reads.values()), tuple(group), ()))
            group, produced, shape, reads = [], set(), None, {}
            pending_calls.clear()

        pending_calls: list[CallIR] = []
        for call in calls:
            op = as_op(call)
            if op is not None:
                new_reads = {t.id: t for t in op.inputs if t.id not in produced and t.id not in reads}
                joins = (
                    group and op.outputs[0].shape == shape and len(group) < MAX_BLOCK_OPS
                    and len(reads) + len(new_reads) <= MAX_BLOCK_INPUTS
                )
                if not joins:
                    flush()
                    new_reads = {t.id: t for t in op.inputs}
                    shape = op.outputs[0].shape
                group.append(op)
                pending_calls.append(call)
                reads.update(new_reads)
                produced.add(op.outputs[0].id)
                continue
            if group and any(t.id in produced for t in call.values()):
                flush()
            units.append(call)
        flush()
        return units

    def _compile(self, units: list[CallIR | FusedBlock], program: Program) -> list[tuple[Any, ...]]:
        out_ids = {t.id for t in program.outputs}
        reads: list[list[int]] = []
        for unit in units:
            if isinstance(unit, FusedBlock):
                reads.append([t.id for t in unit.inputs])
            else:
                reads.append([t.id for t in unit.values()])
        last: dict[int, int] = {}
        for k, ids in enumerate(reads):
            for i in ids:
                last[i] = k
        frees: list[list[int]] = [[] for _ in units]
        for i, k in last.items():
            if i not in out_ids:
                frees[k].append(i)
        # A block writes the values read after it: by later units or as the program's results.
        blocks: dict[int, FusedBlock] = {}
        wanted = set(out_ids)
        for k in range(len(units) - 1, -1, -1):
            unit = units[k]
            if isinstance(unit, FusedBlock):
                made = [o for op in unit.ops for o in op.outputs]
                kept = tuple(t for t in made if t.id in wanted)
                blocks[k] = FusedBlock(unit.shape, unit.inputs, unit.ops, kept)
            wanted.update(reads[k])
        steps: list[tuple[Any, ...]] = []
        backend: Any = self.backend
        # The caller's inputs and params are held by their tensors: never handed over, except
        # the donated ones.
        inputs = ({t.id for t in program.inputs} - self.donated) | {t.id for _, t in program.params}
        for k, unit in enumerate(units):
            if isinstance(unit, FusedBlock):
                block = blocks[k]
                ins = tuple((_VALUE, t.id) for t in block.inputs)
                written = tuple(t.id for t in block.outputs)
                steps.append((True, _launcher(backend, block, self), ins, (), written, tuple(frees[k])))
            else:
                outs = tuple(None if t is None or t.id not in last and t.id not in out_ids else t.id
                             for t in unit.outputs)
                args = tuple(_encode(a) for a in unit.args)
                if not unit.kwargs and len(args) == HANDOVER_OPS.get(unit.op):
                    moving = frozenset(
                        payload for tag, payload in args[1:]  # the param (first) is only read
                        if tag == _VALUE and payload in frees[k] and payload not in inputs
                    )
                    steps.append((_HANDOVER, getattr(backend, unit.op), args, moving, outs,
                                  tuple(i for i in frees[k] if i not in moving)))
                    continue
                owned = self._owned(unit, args, frees[k], inputs)
                if owned is not None:
                    steps.append((_OWNED, *owned, (), outs, tuple(i for i in frees[k] if i not in owned[1])))
                    continue
                steps.append((len(unit.outputs) > 1, getattr(backend, unit.op), args,
                              tuple((name, _encode(v)) for name, v in unit.kwargs), outs, tuple(frees[k])))
        return steps

    def _owned(
        self, call: CallIR, args: tuple[tuple[int, Any], ...], dying: list[int], inputs: set[int]
    ) -> tuple[Any, tuple[int, ...], tuple[tuple[int, Any], ...]] | None:
        """The backend's ``<op>_owned`` (it may write into an operand nobody else holds: the
        Tensor API's buffer reuse) with the ids of the operands that die at this call, which
        `run` hands over; None when no operand dies here or the backend has no such op."""
        fn = getattr(self.backend, call.op + "_owned", None)
        if fn is None or "buffer_reuse" not in self.backend.capabilities.features:
            return None
        if call.kwargs or len(args) not in (1, 2):
            return None
        moving = tuple(
            payload for tag, payload in args
            if tag == _VALUE and payload in dying and payload not in inputs
        )
        if not moving:
            return None
        return fn, moving, args

    # -- running ----------------------------------------------------------------------------
    def run(
        self,
        inputs: Sequence[Any],
        params: dict[str, Any],
        device: Any = None,
        scalars: Sequence[Any] = (),
    ) -> list[Any]:
        """The outputs' primitives for `inputs` (in `Program.inputs` order) and `params` by path.

        Args:
            inputs: the inputs' primitives; a list, emptied when the plan has donated inputs (so
                that the run holds their buffers alone and may hand them over).
            params: the params' primitives by path.
            device: the device of ops that create tensors (default: the backend's).
            scalars: the values of the program's `ScalarInput` arguments, by index.

        While `timings` is a list, each run appends the seconds each step took, in step order
        (`step_ops` names them): the kernels' time, to compare with the whole run's.
        """
        program = self.program
        env: dict[int, Any] = {t.id: v for t, v in zip(program.inputs, inputs, strict=True)}
        if self.donated and isinstance(inputs, list):
            inputs.clear()
        for path, t in program.params:
            env[t.id] = params[path]
        dev = self.backend.default_device() if device is None else device
        timings = self.timings
        clock = time.perf_counter if timings is not None else None
        started = 0.0

        def build(spec: tuple[int, Any]) -> Any:
            tag, payload = spec
            if tag == _VALUE:
                return env[payload]
            if tag == _CONST:
                return payload
            if tag == _DEVICE:
                return dev
            if tag == _VALUES:
                return [env[i] for i in payload]
            if tag == _SCALAR:
                return scalars[payload]
            return TensorData.from_numpy(payload)

        for kind, fn, *rest in self._steps:
            if clock is not None:
                started = clock()
            if kind == _HANDOVER:
                args, moving, outs, frees = rest
                operands = [env.pop(p) if t == _VALUE and p in moving else build((t, p)) for t, p in args]
                result = _call_handing_over(fn, operands)
                for i, r in zip(outs, result, strict=True):
                    if i is not None:
                        env[i] = r
                del result
                for i in frees:
                    del env[i]
                if clock is not None and timings is not None:
                    timings.append(clock() - started)
                continue
            if kind == _OWNED:
                moving, args, kwargs, outs, frees = rest
                # The operands are moved out of `env` into locals, so that each dying array is
                # held by this frame and the call only: what `*_owned` checks before writing.
                a = env.pop(args[0][1]) if args[0][0] == _VALUE and args[0][1] in moving else build(args[0])
                if len(args) == 1:
                    env[outs[0]] = fn(a)
                else:
                    tag, payload = args[1]
                    if tag != _VALUE or payload not in moving:
                        b = build(args[1])
                    else:  # ``x * x`` reads one dying value twice: it was moved into `a`
                        b = env.pop(payload) if payload in env else a
                    env[outs[0]] = fn(a, b)
                    del b
                del a
                for i in frees:
                    del env[i]
                if clock is not None and timings is not None:
                    timings.append(clock() - started)
                continue
            args, kwargs, outs, frees = rest
            result = fn(*[build(a) for a in args], **{name: build(v) for name, v in kwargs})
            if kind:
                for i, r in zip(outs, result, strict=True):
                    if i is not None:
                        env[i] = r
            elif outs[0] is not None:
                env[outs[0]] = result
            for i in frees:
                del env[i]
            if clock is not None and timings is not None:
                timings.append(clock() - started)
        return [env[t.id] for t in program.outputs]


def _call_handing_over(fn: Callable[..., Any], operands: list[Any]) -> Any:
    """``fn(*operands)`` with each operand held by one local of this frame only: `operands` is
    emptied first, and the call is spelled out (an argument tuple would be a second holder), so
    the backend's ownership proof sees the handed-over buffers as its alone."""
    if len(operands) == 11:  # RMSProp's
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 = operands
        operands.clear()
        return fn(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10)
    a0, a1, a2, a3, a4, a5, a6, a7 = operands
    operands.clear()
    return fn(a0, a1, a2, a3, a4, a5, a6, a7)


def _launcher(backend: Any, block: FusedBlock, plan: Plan) -> Callable[..., Any]:
    execute = backend.fusion_execute

    def launch(*inputs: Any) -> tuple[Any, ...]:
        plan.kernels += 1
        return tuple(execute(block, list(inputs)))

    return launch
