"""The documented errors: wrong shapes, kinds, dtypes, devices, and backends mixed.

Each error is a `burn.errors` type and its message names the op and what was wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import float_inputs, make, tensor_module


def _f(backend: Any, shape: tuple[int, ...]) -> Any:
    return make(backend, np.zeros(shape), backend.float_dtype)


def _i(backend: Any, shape: tuple[int, ...]) -> Any:
    return make(backend, np.zeros(shape, dtype=np.int64), backend.int_dtype)


def _b(backend: Any, shape: tuple[int, ...]) -> Any:
    return make(backend, np.zeros(shape, dtype=bool), DType.BOOL)


# (label, action, words the message must contain)
SHAPE_ERRORS: list[tuple[str, Callable[[Any], Any], list[str]]] = [
    ("add", lambda B: _f(B, (2, 3)) + _f(B, (4, 5)), ["add", "(2, 3)", "(4, 5)"]),
    ("mul-int", lambda B: _i(B, (2, 3)) * _i(B, (3, 2)), ["mul", "(2, 3)", "(3, 2)"]),
    ("matmul", lambda B: _f(B, (2, 3)) @ _f(B, (4, 5)), ["matmul", "(2, 3)", "(4, 5)"]),
    ("matmul-rank1", lambda B: _f(B, (3,)) @ _f(B, (3, 2)), ["matmul"]),
    ("reshape", lambda B: _f(B, (2, 3)).reshape((4, 2)), ["reshape", "(2, 3)", "(4, 2)"]),
    ("reshape-two-inferred", lambda B: _f(B, (2, 3)).reshape((-1, -1)), ["reshape"]),
    ("cat", lambda B: _cat([_f(B, (2, 3)), _f(B, (2, 4))], 0), ["cat", "(2, 3)", "(2, 4)"]),
    ("sum_dim-out-of-range", lambda B: _f(B, (2, 3)).sum_dim(2), ["sum_dim", "2"]),
    ("permute-not-a-permutation", lambda B: _f(B, (2, 3)).permute((0, 0)), ["permute"]),
    ("squeeze-not-1", lambda B: _f(B, (2, 3)).squeeze(0), ["squeeze", "(2, 3)"]),
    ("expand", lambda B: _f(B, (2, 3)).expand((4, 3)), ["expand", "(2, 3)", "(4, 3)"]),
    ("slice-too-many-dims", lambda B: _f(B, (2, 3)).slice([None, None, (0, 1)]), ["slice"]),
    ("slice_assign-value", lambda B: _f(B, (4, 4)).slice_assign([(0, 2)], _f(B, (3, 4))), ["slice_assign"]),
    ("mask_where", lambda B: _f(B, (2, 3)).mask_where(_b(B, (4,)), _f(B, (2, 3))), ["mask_where"]),
    ("gather-rank", lambda B: _f(B, (2, 3)).gather(1, _i(B, (2,))), ["gather"]),
    ("select-2d-indices", lambda B: _f(B, (2, 3)).select(0, _i(B, (1, 1))), ["select"]),
    ("bool-and", lambda B: _b(B, (2,)).bool_and(_b(B, (3,))), ["(2,)", "(3,)"]),
]


def _cat(tensors: list[Any], dim: int) -> Any:
    from burn import Tensor

    return Tensor.cat(tensors, dim)


@covers(
    "float_add",
    "int_mul",
    "float_matmul",
    "float_reshape",
    "float_cat",
    "float_sum_dim",
    "float_permute",
    "float_expand",
    "float_slice",
    "float_slice_assign",
    "float_mask_where",
    "float_gather",
    "float_select",
    "bool_and",
)
@pytest.mark.parametrize(("label", "action", "words"), SHAPE_ERRORS, ids=[e[0] for e in SHAPE_ERRORS])
def test_shape_errors(backend: Any, label: str, action: Any, words: list[str]) -> None:
    from burn.errors import ShapeError

    with pytest.raises(ShapeError) as err:
        action(backend)
    message = str(err.value)
    missing = [w for w in words if w not in message]
    assert not missing, f"ShapeError message {message!r} does not name {missing}"


KIND_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("int-plus-float-scalar", lambda B: _i(B, (2,)) + 1.5),
    ("float-plus-int-tensor", lambda B: _f(B, (2,)) + _i(B, (2,))),
    ("int-plus-float-tensor", lambda B: _i(B, (2,)) + _f(B, (2,))),
    ("bool-plus-bool", lambda B: _b(B, (2,)) + _b(B, (2,))),
    ("bool-neg", lambda B: -_b(B, (2,))),
    ("bool-sum", lambda B: _b(B, (2,)).sum()),
    ("int-exp", lambda B: _i(B, (2,)).exp()),
    ("bool-matmul", lambda B: _b(B, (2, 2)) @ _b(B, (2, 2))),
    ("float-not", lambda B: ~_f(B, (2,))),
    ("float-and", lambda B: _f(B, (2,)).bool_and(_f(B, (2,)))),
    ("float-index-tensor", lambda B: _f(B, (2, 3)).gather(1, _f(B, (2, 3)))),
    ("float-mask", lambda B: _f(B, (2,)).mask_fill(_f(B, (2,)), 1.0)),
    ("compare-float-int", lambda B: _f(B, (2,)).equal(_i(B, (2,)))),
    ("cat-mixed-kinds", lambda B: _cat([_f(B, (2,)), _i(B, (2,))], 0)),
]


@covers("int_add_scalar", "float_add", "int_add", "float_exp", "int_gather", "float_mask_fill", "bool_not")
@pytest.mark.parametrize(("label", "action"), KIND_ERRORS, ids=[e[0] for e in KIND_ERRORS])
def test_kind_errors(backend: Any, label: str, action: Any) -> None:
    from burn.errors import KindError

    with pytest.raises(KindError) as err:
        action(backend)
    message = str(err.value)
    assert any(k in message for k in ("Float", "Int", "Bool")), f"KindError message {message!r} names no kind"


@covers("float_add", "float_cat")
def test_mixing_backends_is_an_error(backend: Any) -> None:
    from burn.errors import BackendMismatchError

    other = _other_backend(backend)
    a = _f(backend, (2,))
    b = make(other, np.zeros(2), other.float_dtype)
    with pytest.raises(BackendMismatchError) as err:
        _ = a + b
    assert backend.name in str(err.value) or other.name in str(err.value), (
        f"message names no backend: {err.value}"
    )
    with pytest.raises(BackendMismatchError):
        _cat([a, b], 0)
    with pytest.raises(BackendMismatchError):
        _ = a.mask_where(make(other, np.zeros(2, dtype=bool), DType.BOOL), a)


def _other_backend(backend: Any) -> Any:
    """A backend distinct from `backend`: its inner one (decorators) or the same name with another
    float dtype; skip when neither exists."""
    from burn.plugins import backend as select_backend
    from burn.testing.plugin import parse_backend_arg

    if backend.inner is not backend:
        return backend.inner
    name, _ = parse_backend_arg(backend.name)
    for dtype in backend.capabilities.float_dtypes:
        if dtype is backend.float_dtype:
            continue
        try:
            other = select_backend(name, **{**backend.options(), "float_dtype": dtype.value})
        except Exception:  # noqa: BLE001 - any refusal means this variant does not exist
            continue
        if other is not backend:
            return other
    pytest.skip(f"no second backend instance to mix with {backend.name!r}")


@covers("float_cast", "int_cast")
def test_cast_to_undeclared_dtype_is_a_dtype_error(backend: Any) -> None:
    from burn.errors import DTypeError

    missing = [d for d in DType if not backend.capabilities.supports(d)]
    if not missing:
        pytest.skip(f"backend {backend.name!r} declares every dtype")
    for dtype in missing:
        with pytest.raises(DTypeError) as err:
            _f(backend, (2,)).cast(dtype)
        assert dtype.value in str(err.value)


def test_item_needs_one_element(backend: Any) -> None:
    t = _f(backend, (3,))
    with pytest.raises((ValueError, TypeError)):
        t.item()
    assert make(backend, np.array([2.5]), backend.float_dtype).item() == 2.5
    assert isinstance(make(backend, np.array(3), backend.int_dtype).item(), int)
    assert make(backend, np.array([True]), DType.BOOL).item() is True


# -- convolution and pooling of every rank ---------------------------------------------------------
@covers("conv3d", "conv_transpose1d", "conv_transpose3d", "max_pool3d", "avg_pool3d")
def test_3d_module_ops_errors(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    ((_, x),) = float_inputs(backend, rng, dtype, (1, 2, 3, 3, 3))
    ((_, x1),) = float_inputs(backend, rng, dtype, (1, 2, 4))
    m = tensor_module()
    with pytest.raises(ShapeError, match="conv3d: the input must have rank 5"):
        m.conv3d(x1, x1)
    ((_, w),) = float_inputs(backend, rng, dtype, (2, 3, 1, 1, 1))
    with pytest.raises(ShapeError, match="conv3d: weight .* expects 3 input channels"):
        m.conv3d(x, w)
    ((_, wt1),) = float_inputs(backend, rng, dtype, (2, 2, 3))
    with pytest.raises(ValueError, match="conv_transpose1d: padding_out"):
        m.conv_transpose1d(x1, wt1, stride=2, padding_out=2)
    ((_, wt3),) = float_inputs(backend, rng, dtype, (2, 2, 2, 2, 2))
    with pytest.raises(ValueError, match="conv_transpose3d: padding_out"):
        m.conv_transpose3d(x, wt3, stride=(2, 2, 2), padding_out=(0, 2, 0))
    with pytest.raises(ValueError, match="max_pool3d: padding .* at most half the kernel"):
        m.max_pool3d(x, 2, padding=(0, 2, 0))
    with pytest.raises(ShapeError, match="avg_pool3d: input depth 3 is too small"):
        m.avg_pool3d(x, (4, 1, 1))
    with pytest.raises(ValueError, match=r"conv3d: padding must be .* \(before, after\) pairs"):
        m.conv3d(x, wt3, padding=((1, 0), (1, 0)))
