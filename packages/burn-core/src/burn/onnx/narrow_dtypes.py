"""The ONNX element types narrower than any burn dtype: float8 (e4m3fn, e4m3fnuz, e5m2,
e5m2fnuz, e8m0fnu), float4 (e2m1fn), int4 / uint4 and int2 / uint2.

burn has no tensor dtype for them, so their values live on the host as NumPy arrays of the
``ml_dtypes`` type ONNX's own reference uses: a ``Cast`` to one of them is computed there,
rounded and saturated as ONNX specifies, and an output declared with one comes back as that
NumPy array. Any other op reads them exactly widened (to the run's float dtype, or to Int).

Example:
    >>> import numpy as np
    >>> x = np.array([1.0, 500.0, -1e6], np.float32)
    >>> cast_narrow(x, narrow_dtype("float8_e4m3fn")).astype(np.float32)
    array([   1.,  448., -448.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

NARROW_NAMES = frozenset(
    "float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn "
    "int4 uint4 int2 uint2".split()
)
_SATURATING = frozenset("float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz".split())
_INTEGER = frozenset("int4 uint4 int2 uint2".split())


def narrow_dtype(name: str) -> np.dtype[Any]:
    """The NumPy (``ml_dtypes``) dtype of the narrow element type `name`."""
    if name not in NARROW_NAMES:
        raise ValueError(f"{name!r} is not a narrow element type ({', '.join(sorted(NARROW_NAMES))})")
    return np.dtype(getattr(ml_dtypes, name))


def is_narrow(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` is one of the narrow element types (held on the host only)."""
    return np.dtype(dtype).name in NARROW_NAMES


def is_narrow_integer(dtype: np.dtype[Any]) -> bool:
    return np.dtype(dtype).name in _INTEGER


def widen(array: np.ndarray) -> np.ndarray:
    """A narrow-typed array exactly as int64 (int4...) or float32 (every narrow float fits)."""
    return array.astype(np.int64 if is_narrow_integer(array.dtype) else np.float32)


def cast_narrow(
    array: np.ndarray, dtype: np.dtype[Any], saturate: bool = True, round_mode: str = "up"
) -> np.ndarray:
    """`array` cast to the narrow type `dtype` as ONNX's ``Cast`` does: the float8 types clamp
    finite overflow (and infinities) to their largest finite value when `saturate`; e8m0 keeps
    only a power of two, rounding the mantissa away `round_mode` (``up``, ``down``,
    ``nearest``); the others round as ``ml_dtypes`` does (float4 to nearest even, the small
    integers truncating and wrapping, as ONNX's reference)."""
    dtype = np.dtype(dtype)
    source = array.astype(np.float32) if array.dtype.kind in "fV" or is_narrow(array.dtype) else array
    if dtype.name == "float8_e8m0fnu":
        return _to_e8m0(np.asarray(source, np.float32), saturate, round_mode)
    if dtype.name in _SATURATING and saturate:
        info = ml_dtypes.finfo(dtype)
        source = np.clip(source, float(info.min), float(info.max))  # NaN stays NaN
    return np.asarray(source).astype(dtype)


def _to_e8m0(x: np.ndarray, saturate: bool, round_mode: str) -> np.ndarray:
    # e8m0 is the 8 exponent bits of a float32 (no sign, no mantissa; 0xFF is NaN): the
    # exponent is read off the float32 bits and moves up one when the mantissa is rounded away
    # upwards, except at the largest exponent when saturating.
    if round_mode not in ("up", "down", "nearest"):
        raise ValueError(f"round_mode must be 'up', 'down' or 'nearest', got {round_mode!r}")
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(np.uint16)
    special = exponent == 0xFF
    mantissa = bits & 0x7FFFFF
    if round_mode == "up":
        bump = mantissa > 0
    elif round_mode == "nearest":
        half = (mantissa & 0x400000) > 0
        # past half rounds up; exactly half too, except for the subnormals (exponent 0: ONNX's tie rule)
        bump = half & (((mantissa & 0x3FFFFF) > 0) | (exponent > 0))
    else:
        bump = np.zeros(exponent.shape, np.bool_)
    bump &= ~special
    if saturate:
        bump &= exponent != 0xFE
    out = np.where(special, 0xFF, exponent + bump).astype(np.uint8)
    return out.view(ml_dtypes.float8_e8m0fnu)
