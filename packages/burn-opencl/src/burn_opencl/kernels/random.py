"""Random tensors from Philox-4x32-10, a counter-based generator.

Element pairs ``(2g, 2g+1)`` of a call take the four 32-bit words of block ``counter + g`` under
the 64-bit key. The bits depend only on (key, counter, index), never on the device or the
work-group size, so a seeded backend draws the same numbers on pocl and on a GPU (the float
transforms - log, cos - may differ in the last ulp between devices' math libraries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, SCALAR_NP, STORAGE, build_options, store
from burn_opencl.kernels.common import I64, LOCAL, global_size, new
from burn_opencl.tensor import CLTensor

if TYPE_CHECKING:
    from burn_opencl.runtime import Runtime

_PHILOX = r"""
inline uint4 philox4x32_10(uint4 c, uint2 k) {
  for (int r = 0; r < 10; r++) {
    uint hi0 = b_mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    uint hi1 = b_mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k += (uint2)(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}
"""

# Each transform turns two 32-bit words (w0, w1) per element into a value; `normal` uses the
# words of both elements of the pair (Box-Muller gives two normals).
_FLOAT_BODY = {
    # low + (high - low) * u can round up to `high` itself (u = 1 - 2^-24 near 3.0 in float32):
    # clamp to the last value below `high`, so the range stays [low, high)
    "uniform": (
        "T u0 = U(r.x, r.y), u1 = U(r.z, r.w); T top = nextafter(p1, p0); "
        "T v0 = fmin(p0 + (p1 - p0) * u0, top), v1 = fmin(p0 + (p1 - p0) * u1, top);"
    ),
    "normal": (
        "T u0 = (T)1 - U(r.x, r.y), u1 = U(r.z, r.w); T rad = b_sqrt((T)-2 * log(u0)); "
        "T v0 = p0 + p1 * rad * cos((T)6.283185307179586 * u1), "
        "v1 = p0 + p1 * rad * sin((T)6.283185307179586 * u1);"
    ),
    "bernoulli": "T v0 = U(r.x, r.y) < p0 ? (T)1 : (T)0, v1 = U(r.z, r.w) < p0 ? (T)1 : (T)0;",
}
_INT_BODY = {
    "uniform": (
        "ulong range_ = (ulong)(q1 - q0); "
        "long v0 = q0 + (long)((((ulong)r.x << 32) | r.y) % range_), "
        "v1 = q0 + (long)((((ulong)r.z << 32) | r.w) % range_);"
    ),
    "normal": (
        "F u0 = (F)1 - UF(r.x), u1 = UF(r.z); F rad = b_sqrt((F)-2 * log(u0)); "
        "long v0 = (long)b_rint(p0 + p1 * rad * cos((F)6.283185307179586 * u1)), "
        "v1 = (long)b_rint(p0 + p1 * rad * sin((F)6.283185307179586 * u1));"
    ),
    "bernoulli": "long v0 = UF(r.x) < p0 ? 1 : 0, v1 = UF(r.z) < p0 ? 1 : 0;",
}


def _source(kind: str, od: DType, fp64: bool) -> str:
    if od.is_float:
        t = COMPUTE[od]
        if t == "double":
            uniform = (
                "#define U(a, b) "
                "((double)(((ulong)((a) >> 5) << 26) | ((b) >> 6)) * (1.0 / 9007199254740992.0))"
            )
        else:
            uniform = "#define U(a, b) ((float)((a) >> 8) * (1.0f / 16777216.0f))"
        body = _FLOAT_BODY[kind]
        params = "T p0, T p1"
        defs = f"#define T {t}\n{uniform}"
    else:
        f = "double" if fp64 else "float"
        uf = "((double)(a) * (1.0 / 4294967296.0))" if fp64 else "((float)((a) >> 8) * (1.0f / 16777216.0f))"
        body = _INT_BODY[kind]
        params = f"{f} p0, {f} p1, long q0, long q1"
        defs = f"#define F {f}\n#define UF(a) {uf}"
    return f"""
{defs}
{_PHILOX}
__kernel void draw(__global {STORAGE[od]}* o, long n, uint k0, uint k1, ulong counter, {params}) {{
  long g = get_global_id(0);
  long e = 2 * g;
  GUARD(g, (n + 1) / 2);  /* each work-item writes two elements */
  ulong c = counter + (ulong)g;
  uint4 r = philox4x32_10((uint4)((uint)c, (uint)(c >> 32), 0u, 0u), (uint2)(k0, k1));
  {body}
  {store(od, "o", "e", f"({COMPUTE[od]})v0")}
  if (e + 1 < n) {{ {store(od, "o", "e + 1", f"({COMPUTE[od]})v1")} }}
}}"""


def _kind(distribution: Distribution) -> str:
    if isinstance(distribution, Uniform):
        return "uniform"
    if isinstance(distribution, Normal):
        return "normal"
    if isinstance(distribution, Bernoulli):
        return "bernoulli"
    raise TypeError(f"unknown distribution {distribution!r}")


def blocks(n: int) -> int:
    """Philox blocks (counter values) a draw of `n` elements uses."""
    return (n + 1) // 2


def draw(
    rt: Runtime, shape: tuple[int, ...], distribution: Distribution, dtype: DType, key: int, counter: int
) -> CLTensor:
    """A tensor of `shape` drawn from `distribution` with Philox `key` from block `counter` on."""
    out = new(rt, shape, dtype, "a random tensor")
    n = out.n
    if n == 0:
        return out
    kind = _kind(distribution)
    fp64 = rt.fp64
    cache_key = ("rand", kind, dtype, fp64)
    if dtype.is_float:
        ptype = SCALAR_NP[COMPUTE[dtype]]
        types = [None, I64, np.uint32, np.uint32, np.uint64, ptype, ptype]
    else:
        ptype = np.float64 if fp64 else np.float32
        types = [None, I64, np.uint32, np.uint32, np.uint64, ptype, ptype, I64, I64]
    kernel = rt.kernel(
        cache_key,
        "draw",
        lambda: _source(kind, dtype, fp64),
        build_options(DType.F64 if (fp64 and not dtype.is_float) else dtype),
        types,
    )
    if isinstance(distribution, Uniform):
        p = (distribution.low, distribution.high)
    elif isinstance(distribution, Normal):
        p = (distribution.mean, distribution.std)
    else:
        assert isinstance(distribution, Bernoulli)
        p = (distribution.prob, 0.0)
    args: list[object] = [
        out.buf,
        n,
        key & 0xFFFFFFFF,
        (key >> 32) & 0xFFFFFFFF,
        counter & 0xFFFFFFFFFFFFFFFF,
        *p,
    ]
    if not dtype.is_float:
        low, high = (
            (int(distribution.low), int(distribution.high)) if isinstance(distribution, Uniform) else (0, 1)
        )
        if isinstance(distribution, Uniform) and high <= low:
            raise ValueError(f"int_random: Uniform needs low < high, got [{low}, {high})")
        args += [low, high]
    g = blocks(n)
    rt.launch(kernel, global_size(g), (LOCAL,), *args)
    return out
