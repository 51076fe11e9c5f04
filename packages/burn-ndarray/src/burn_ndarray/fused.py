"""The fusion contract on burn-ndarray: a chain of element-wise ops as one generated numba kernel.

`burn.compile` (and the ``fusion`` decorator) hand a `burn.backend.ir.FusedBlock` to
`FusedOps.fusion_execute`, which generates a Python source of nested loops over the block's
(collapsed) iteration shape, each element computed in registers and only the block's outputs
stored, and compiles it with numba. The source is written to a file named by its hash in the
kernel cache folder and imported from there, so numba's own disk cache (``cache=True``, made safe
for several processes by `burn_ndarray.runtime.numba_cache`) keeps the machine code across runs:
a second process loads the kernel instead of compiling it.

Only ops whose NumPy result a scalar loop reproduces bit for bit are fused (`FUSED_EXPRS`):
IEEE-exact arithmetic, comparisons, selects, ``abs``, ``sqrt``. Transcendentals (``exp``,
``tanh``, ``erf``...) are left to the one-op kernels, because NumPy's SIMD versions and LLVM's
scalar ones differ in the last bit, and compiled results must equal eager ones exactly.

Example:
    >>> import numpy as np, burn
    >>> from burn.backend.ir import FusedBlock, OpIR, TensorIR
    >>> B = burn.backend("ndarray")
    >>> x, y, z = (TensorIR(i, (3,), burn.float32) for i in range(3))
    >>> block = FusedBlock((3,), (x,), (OpIR("float_mul_scalar", (x,), (y,), (2.0,)),
    ...                               OpIR("float_add", (y, x), (z,))), (z,))
    >>> B.fusion_execute(block, [np.array([1.0, 2.0, 3.0], np.float32)])[0].tolist()
    [3.0, 6.0, 9.0]
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from burn.backend.fusion_exprs import aligned_strides, collapse
from burn.backend.ir import FusedBlock
from burn.foundations.dtype import DType
from burn_ndarray.runtime import split

ENV_CACHE = "BURN_NDARRAY_FUSED_CACHE"
Pattern = tuple[tuple[str, ...], ...]

# Each fused op as a numba expression over registers ``a``, ``b``, ``c`` (tensor inputs) and
# ``s0`` (its scalar, already in the compute type): exactly what the one-op NumPy kernel computes.
FUSED_EXPRS: dict[str, str] = {
    "float_add": "a + b",
    "float_sub": "a - b",
    "float_mul": "a * b",
    "float_div": "a / b",
    "float_add_scalar": "a + s0",
    "float_sub_scalar": "a - s0",
    "float_mul_scalar": "a * s0",
    "float_div_scalar": "a / s0",
    "float_neg": "-a",
    "float_abs": "abs(a)",
    "float_sqrt": "np.sqrt(a)",
    "float_equal": "a == b",
    "float_not_equal": "a != b",
    "float_greater": "a > b",
    "float_greater_equal": "a >= b",
    "float_lower": "a < b",
    "float_lower_equal": "a <= b",
    "float_equal_elem": "a == s0",
    "float_not_equal_elem": "a != s0",
    "float_greater_elem": "a > s0",
    "float_greater_equal_elem": "a >= s0",
    "float_lower_elem": "a < s0",
    "float_lower_equal_elem": "a <= s0",
    "float_mask_where": "c if b else a",
    "float_mask_fill": "s0 if b else a",
    "bool_not": "not a",
    "bool_and": "a and b",
    "bool_or": "a or b",
}
_NP = {DType.F32: "np.float32", DType.F64: "np.float64", DType.BOOL: "np.bool_"}


def cache_dir() -> str:
    """The folder of generated kernel sources (`ENV_CACHE`, else ``~/.cache/burn/ndarray-fused``);
    numba keeps their machine code in its ``__pycache__``."""
    default = os.path.join(os.path.expanduser("~"), ".cache", "burn", "ndarray-fused")
    path = os.environ.get(ENV_CACHE) or default
    os.makedirs(path, exist_ok=True)
    return path


def kernel_source(block: FusedBlock, pattern: Pattern) -> str:
    """The numba source computing `block`: ``kernel(lo, hi, i0.., scalars, strides, n, o0..)``
    over ``[lo, hi)`` of the outermost collapsed dim, and ``launch(parts, ...)`` running it in
    `parts` chunks on numba's pool (the cut of `burn_ndarray.kernels.jit.bounds`).

    Every operand is a flat C-contiguous buffer; `pattern` gives, per operand (inputs, then
    outputs) and per collapsed dim, how the index moves: ``"0"`` (broadcast: not at all), ``"1"``
    (by one: the innermost dim of a contiguous operand, so the loop vectorizes) or ``"x"`` (by
    ``strides[operand, dim]`` elements). ``n`` holds the collapsed dims' sizes.

    Example:
        >>> from burn.backend.ir import OpIR, TensorIR
        >>> x, y = TensorIR(0, (4,), DType.F32), TensorIR(1, (4,), DType.F32)
        >>> block = FusedBlock((4,), (x,), (OpIR("float_neg", (x,), (y,)),), (y,))
        >>> "v1 = -v0" in kernel_source(block, (("1",), ("1",)))
        True
    """
    rank = len(pattern[0])
    inner = rank - 1
    nin = len(block.inputs)
    local: dict[int, str] = {}
    ins = [f"i{k}" for k in range(nin)]
    outs = [f"o{k}" for k in range(len(block.outputs))]
    params = ", ".join([*ins, "scalars", "strides", "n", *outs])
    lines = [
        "import numpy as np", "from numba import prange",
        "from burn_ndarray.kernels.jit import bounds, jit, jit_parallel", "", "",
        "@jit_parallel",
        f"def launch(parts, {params}):",
        "    for c in prange(parts):",
        "        lo, hi = bounds(n[0], c, parts)",
        f"        kernel(lo, hi, {params})", "", "",
        "@jit",
        f"def kernel(lo, hi, {params}):",
    ]
    pre: list[str] = [f"n{inner} = n[{inner}]"]
    row: list[str] = []  # per row (outer indices fixed): each operand's row view or its value
    body: list[str] = []
    buffers = [*ins, *outs]
    # Each operand is read through a row view (``r3 = i3[base:]``): the innermost index is then
    # the loop variable itself, which LLVM proves non-negative, so numba's wraparound check goes
    # and the loop vectorizes.
    for k, name in enumerate(buffers):
        terms = []
        for d in range(inner):
            if pattern[k][d] == "x":
                pre.append(f"s{k}_{d} = strides[{k}, {d}]")
                terms.append(f"d{d} * s{k}_{d}")
        base = " + ".join(terms) or "0"
        how = pattern[k][inner]
        if inner == 0 and how != "0":
            # One dim: the chunk's views start at `lo`, so the index runs from 0 here too.
            base = "lo" if how == "1" else f"lo * strides[{k}, 0]"
        if how == "0" and k < nin:
            row.append(f"r{k} = {name}[{base}]")  # one value per row
        elif how == "x":
            pre.append(f"s{k}_{inner} = strides[{k}, {inner}]")
            row.append(f"r{k} = {name}[{base}:]")
        else:
            row.append(f"r{k} = {name}[{base}:]")

    def at(k: int) -> str:
        how = pattern[k][inner]
        if how == "0":
            return f"r{k}[0]"
        return f"r{k}[d{inner}]" if how == "1" else f"r{k}[d{inner} * s{k}_{inner}]"

    nscalar = 0
    for k, t in enumerate(block.inputs):
        local[t.id] = f"r{k}" if pattern[k][inner] == "0" else f"v{len(local)}"
        if pattern[k][inner] != "0":
            body.append(f"{local[t.id]} = {at(k)}")
    for op in block.ops:
        regs = dict(zip("abc", (local[t.id] for t in op.inputs), strict=False))
        expr = FUSED_EXPRS[op.op]
        for name in ("a", "b", "c"):
            if name in regs:
                expr = _substitute(expr, name, regs[name])
        if "s0" in expr:
            compute = op.inputs[0].dtype
            pre.append(f"c{nscalar} = {_NP[compute]}(scalars[{nscalar}])")
            expr = _substitute(expr, "s0", f"c{nscalar}")
            nscalar += 1
        out = op.outputs[0]
        local[out.id] = f"v{len(local)}"
        body.append(f"{local[out.id]} = {expr}")
    for k, t in enumerate(block.outputs):
        body.append(f"{at(nin + k)} = {local[t.id]}")
    lines.extend(f"    {p}" for p in pre)
    indent = "    "
    # The outermost dim runs over [lo, hi): a chunk of a split launch.
    ranges = ["range(lo, hi)", *(f"range(n[{d}])" for d in range(1, inner)), f"range(n{inner})"][-rank:]
    for d in range(inner):
        lines.append(f"{indent}for d{d} in {ranges[d]}:")
        indent += "    "
    lines.extend(indent + r for r in row)
    lines.append(f"{indent}for d{inner} in {'range(hi - lo)' if inner == 0 else ranges[inner]}:")
    lines.extend(indent + "    " + b for b in body)
    return "\n".join(lines) + "\n"


def _substitute(expr: str, name: str, value: str) -> str:
    return re.sub(rf"\b{name}\b", value, expr)


_kernels: dict[tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def _kernel(block: FusedBlock, pattern: Pattern) -> Any:
    """The generated module of `block` (``kernel`` and ``launch``), imported once."""
    key = (block.signature(), pattern)
    found = _kernels.get(key)
    if found is not None:
        return found
    with _lock:
        found = _kernels.get(key)
        if found is not None:
            return found
        source = kernel_source(block, pattern)
        digest = hashlib.sha256(source.encode()).hexdigest()[:20]
        name = f"burn_fused_{digest}"
        path = os.path.join(cache_dir(), name + ".py")
        if not os.path.exists(path):
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                f.write(source)
            os.replace(tmp, path)  # atomic: another process never imports half a file
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # numba's cache locates a function by its module
        spec.loader.exec_module(module)
        found = module
        _kernels[key] = found
        return found


class FusedOps:
    """The fusion contract (`burn.backend.fusion.FusionBackend`) of burn-ndarray."""

    def fusion_ops(self) -> frozenset[str]:
        """The element-wise ops fused kernels compute bit for bit as the one-op kernels do."""
        return frozenset(FUSED_EXPRS)

    def fusion_dtypes(self) -> frozenset[DType]:
        """float32, float64 and bool (half floats compute in float32 one op at a time)."""
        return frozenset(_NP)

    def fusion_execute(self, block: FusedBlock, inputs: Sequence[Any]) -> list[Any]:
        """Run `block` as one generated numba kernel; new contiguous arrays for its outputs."""
        shape = block.shape
        arrays = [np.ascontiguousarray(x) for x in inputs]
        outs = [np.empty(t.shape, _np_dtype(t.dtype)) for t in block.outputs]
        # Element strides of each operand over the block's shape: 0 along broadcast dims (an
        # output smaller than the block, a per-row value, is written once per element onto it,
        # always the same value: the contract's rule).
        operands = [*arrays, *outs]
        strides = [aligned_strides(a.shape, _elements(a), shape) for a in operands]
        dims, walked = collapse(shape, strides)
        if not dims:
            dims, walked = (1,), [(0,)] * len(strides)
        pattern = tuple(
            tuple("0" if s == 0 else "1" if d == len(dims) - 1 and s == 1 else "x" for d, s in enumerate(w))
            for w in walked
        )
        scalars = np.array([s for op in block.ops for s in op.scalars], np.float64)
        flat = [a.reshape(-1) for a in operands]
        module = _kernel(block, pattern)
        args = (*flat[: len(arrays)], scalars, np.array(walked, np.int64), np.array(dims, np.int64),
                *flat[len(arrays):])
        # Chunks of the outermost dim, as burn-ndarray's one-op kernels split: each element is
        # computed by the same code in any chunk, so the bits do not depend on the thread count.
        size = int(np.prod(dims))
        parts = split.compiled_parts(size, split.UFUNC_PER_THREAD, split.NATIVE_UFUNC_PER_THREAD)
        split.run_ranges(module.kernel, module.launch, dims[0], parts, *args)
        return outs


def _np_dtype(dtype: DType) -> Any:
    return {DType.F32: np.float32, DType.F64: np.float64, DType.BOOL: np.bool_}[dtype]




def _elements(a: np.ndarray) -> tuple[int, ...]:
    """`a`'s strides in elements."""
    return tuple(s // a.itemsize for s in a.strides)


__all__ = ["ENV_CACHE", "FUSED_EXPRS", "FusedOps", "cache_dir", "kernel_source"]
