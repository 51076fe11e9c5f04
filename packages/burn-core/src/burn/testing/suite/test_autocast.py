"""Autocast (`burn.amp.autocast`): every entry of the policy table runs in its dtype on this
backend, the low products match float32 products of rounded operands, regions nest and belong to
their thread, and under autodiff float32 params get float32 gradients."""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from burn import amp, nn
from burn.errors import DTypeError
from burn.foundations.dtype import DType
from burn.tensor import activation as A
from burn.tensor import module as F
from burn.tensor.autocast import POLICY
from burn.testing import covers
from burn.testing.gradcheck import require_autodiff
from burn.testing.helpers import make, require_dtype

LOW = [DType.BF16, DType.F16]
Run = Callable[[Any, Any, Any], Any]  # (backend, rng, dtype of the inputs) -> output tensor


def _t(backend: Any, rng: Any, shape: tuple[int, ...], dtype: DType, low: float = -1.0) -> Any:
    return make(backend, rng.uniform(low, 1.0, size=shape).astype(dtype.numpy), dtype)


def _conv(rank: int, transposed: bool) -> Run:
    def run(b: Any, rng: Any, d: DType) -> Any:
        spatial = (5,) * rank
        x = _t(b, rng, (1, 2, *spatial), d)
        w = _t(b, rng, (2, 3, *(3,) * rank) if transposed else (3, 2, *(3,) * rank), d)
        bias = _t(b, rng, (3,), d)
        fn = getattr(F, f"conv_transpose{rank}d" if transposed else f"conv{rank}d")
        return fn(x, w, bias)

    return run


def _module(build: Callable[[Any], Any], shape: tuple[int, ...]) -> Run:
    def run(b: Any, rng: Any, d: DType) -> Any:
        return build(b.default_device()).forward(_t(b, rng, shape, d))

    return run


def _cross_entropy(b: Any, rng: Any, d: DType) -> Any:
    targets = make(b, np.array([0, 2, 1]), b.int_dtype)
    return F.cross_entropy(_t(b, rng, (3, 4), d), targets)


def _ce_loss(b: Any, rng: Any, d: DType) -> Any:
    targets = make(b, np.array([0, 2, 1]), b.int_dtype)
    return nn.loss.CrossEntropyLossConfig().init().forward(_t(b, rng, (3, 4), d), targets)


CASES: dict[str, Run] = {
    "matmul": lambda b, rng, d: _t(b, rng, (2, 3, 4), d) @ _t(b, rng, (2, 4, 5), d),
    "linear": lambda b, rng, d: F.linear(_t(b, rng, (3, 4), d), _t(b, rng, (4, 2), d), _t(b, rng, (2,), d)),
    "conv1d": _conv(1, False),
    "conv2d": _conv(2, False),
    "conv3d": _conv(3, False),
    "conv_transpose1d": _conv(1, True),
    "conv_transpose2d": _conv(2, True),
    "conv_transpose3d": _conv(3, True),
    "attention": lambda b, rng, d: F.attention(*(_t(b, rng, (1, 2, 3, 4), d) for _ in range(3))),
    "sum": lambda b, rng, d: _t(b, rng, (3, 4), d).sum(),
    "sum_dim": lambda b, rng, d: _t(b, rng, (3, 4), d).sum_dim(1),
    "mean": lambda b, rng, d: _t(b, rng, (3, 4), d).mean(),
    "mean_dim": lambda b, rng, d: _t(b, rng, (3, 4), d).mean_dim(0),
    "prod": lambda b, rng, d: _t(b, rng, (3, 4), d).prod(),
    "prod_dim": lambda b, rng, d: _t(b, rng, (3, 4), d).prod_dim(1),
    "var": lambda b, rng, d: _t(b, rng, (3, 4), d).var(1),
    "cumsum": lambda b, rng, d: _t(b, rng, (3, 4), d).cumsum(1),
    "cumprod": lambda b, rng, d: _t(b, rng, (3, 4), d).cumprod(1),
    "exp": lambda b, rng, d: _t(b, rng, (3, 4), d).exp(),
    "log": lambda b, rng, d: _t(b, rng, (3, 4), d, 0.5).log(),
    "log1p": lambda b, rng, d: _t(b, rng, (3, 4), d, 0.0).log1p(),
    "powf": lambda b, rng, d: _t(b, rng, (3, 4), d, 0.5).powf(1.5),
    "softmax": lambda b, rng, d: A.softmax(_t(b, rng, (3, 4), d), -1),
    "log_softmax": lambda b, rng, d: A.log_softmax(_t(b, rng, (3, 4), d), -1),
    "layer_norm": _module(lambda dev: nn.LayerNormConfig(4).init(dev), (3, 4)),
    "rms_norm": _module(lambda dev: nn.RmsNormConfig(4).init(dev), (3, 4)),
    "group_norm": _module(lambda dev: nn.GroupNormConfig(2, 4).init(dev), (3, 4, 5)),
    "batch_norm": _module(lambda dev: nn.BatchNormConfig(4).init(dev), (3, 4, 5)),
    "cross_entropy": _cross_entropy,
    "cross_entropy_with_logits": lambda b, rng, d: F.cross_entropy_with_logits(
        _t(b, rng, (3, 4), d), A.softmax(_t(b, rng, (3, 4), d), -1)
    ),
    "mse_loss": lambda b, rng, d: nn.loss.MseLossConfig().init().forward(
        _t(b, rng, (3, 4), d), _t(b, rng, (3, 4), d)
    ),
}
"""One call of each op of the policy table (with the op's own layer where the table names one)."""

WITH_PARAMS = {"layer_norm", "rms_norm", "group_norm", "batch_norm"}

EXTRA: dict[str, Run] = {"CrossEntropyLoss": _ce_loss}  # nn.CrossEntropyLoss's non-fused paths too


def test_every_policy_entry_has_a_case() -> None:
    assert set(CASES) == set(POLICY), "burn.tensor.autocast.POLICY and these cases must list the same ops"


@covers("float_cast", "float_matmul", "conv2d", "float_sum", "softmax")
@pytest.mark.parametrize("low", LOW, ids=lambda d: d.value)
@pytest.mark.parametrize("op", sorted(POLICY), ids=str)
def test_policy_dtype(backend: Any, rng: Any, op: str, low: DType) -> None:
    require_dtype(backend, low)
    if POLICY[op] == "low":
        inputs, expected = DType.F32, low  # float32 operands are cast down
    else:
        inputs, expected = low, DType.F32  # half operands are cast up
    with amp.autocast(low):
        out = CASES[op](backend, rng, inputs)
    assert out.dtype is expected, f"{op} in autocast({low.value}): {out.dtype}, the policy: {expected.value}"
    if op in WITH_PARAMS:
        return  # float32 params widen a half input outside autocast too (the contract's rule)
    outside = CASES[op](backend, rng, inputs)
    assert outside.dtype is inputs, f"{op} outside autocast changed the dtype to {outside.dtype}"
    with amp.autocast(low, enabled=False):
        assert CASES[op](backend, rng, inputs).dtype is inputs, f"{op} in a disabled region"


@covers("float_cast", "cross_entropy")
@pytest.mark.parametrize("low", LOW, ids=lambda d: d.value)
def test_cross_entropy_loss_paths_run_in_float32(backend: Any, rng: Any, low: DType) -> None:
    require_dtype(backend, low)
    with amp.autocast(low):
        assert EXTRA["CrossEntropyLoss"](backend, rng, low).dtype is DType.F32
        smoothed = nn.loss.CrossEntropyLossConfig(smoothing=0.1).init()
        targets = make(backend, np.array([0, 2, 1]), backend.int_dtype)
        assert smoothed.forward(_t(backend, rng, (3, 4), low), targets).dtype is DType.F32


@covers("float_cast", "float_matmul", "conv2d")
@pytest.mark.parametrize("low", LOW, ids=lambda d: d.value)
def test_low_products_match_float32_of_rounded_operands(backend: Any, rng: Any, low: DType) -> None:
    """A low product is the float32 product of the operands rounded to the low dtype, rounded
    once more: within one low-dtype ulp of that (fp32 accumulation, as GPU GEMMs do)."""
    require_dtype(backend, low)
    a, w = rng.uniform(-1, 1, (8, 32)), rng.uniform(-1, 1, (32, 6))
    x, k = rng.uniform(-1, 1, (2, 3, 6, 6)), rng.uniform(-1, 1, (4, 3, 3, 3))
    with amp.autocast(low):
        prod = make(backend, a, DType.F32) @ make(backend, w, DType.F32)
        conv = F.conv2d(make(backend, x, DType.F32), make(backend, k, DType.F32), padding=1)
    rounded = [v.astype(np.float32).astype(low.numpy).astype(np.float64) for v in (a, w, x, k)]
    want_prod = rounded[0] @ rounded[1]
    eps = 2.0**-8 if low is DType.BF16 else 2.0**-11  # half an ulp at 1 (the unit roundoff)
    got = prod.to_data().to_numpy().astype(np.float64)
    np.testing.assert_allclose(got, want_prod, rtol=2 * eps, atol=2 * eps * np.abs(want_prod).max())
    padded = np.pad(rounded[2], ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), (2, 3))
    want_conv = np.einsum("nchwij,ocij->nohw", cols, rounded[3])
    got = conv.to_data().to_numpy().astype(np.float64)
    np.testing.assert_allclose(got, want_conv, rtol=2 * eps, atol=2 * eps * np.abs(want_conv).max())


@covers("float_cast", "float_matmul")
@pytest.mark.parametrize("low", LOW, ids=lambda d: d.value)
def test_a_dtype_the_backend_lacks_is_a_clear_error(
    backend: Any, rng: Any, low: DType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend that declares `low` has it taken out of its capabilities for the test (what the
    check reads), so that the error is checked on every backend, not only on those without it."""
    if backend.capabilities.supports(low):
        caps = backend.capabilities
        monkeypatch.setattr(backend, "capabilities", dataclasses.replace(caps, dtypes=caps.dtypes - {low}))
    a = _t(backend, rng, (2, 2), DType.F32)
    with amp.autocast(low), pytest.raises(DTypeError, match=f"autocast.*matmul.*{re.escape(backend.name)}"):
        a @ a


@covers("float_cast", "float_matmul")
def test_regions_nest_and_belong_to_their_thread(backend: Any, rng: Any) -> None:
    require_dtype(backend, DType.BF16)
    require_dtype(backend, DType.F16)
    a = _t(backend, rng, (2, 2), DType.F32)
    seen: list[Any] = []
    with amp.autocast("bfloat16"):
        assert (a @ a).dtype is DType.BF16
        with amp.autocast("float16"):
            assert (a @ a).dtype is DType.F16
            with amp.autocast(enabled=False):
                assert (a @ a).dtype is DType.F32
            assert (a @ a).dtype is DType.F16
        other = threading.Thread(target=lambda: seen.append((a @ a).dtype))
        other.start()
        other.join()
        assert (a @ a).dtype is DType.BF16

    @amp.autocast("float16")
    def decorated(x: Any) -> Any:
        return x @ x

    assert (a @ a).dtype is DType.F32
    assert seen == [DType.F32], "another thread saw this thread's region"
    assert decorated(a).dtype is DType.F16 and (a @ a).dtype is DType.F32
    with pytest.raises(ValueError, match="bfloat16"):
        amp.autocast("float64")


@covers("float_cast", "float_matmul", "conv2d", "conv2d_weight_backward")
@pytest.mark.parametrize("low", LOW, ids=lambda d: d.value)
def test_float32_params_get_float32_gradients(backend: Any, rng: Any, low: DType) -> None:
    """A small CNN + MLP under autocast: every param's gradient is float32 and close to the
    float32 run's (within the low dtype's precision)."""
    require_autodiff(backend)
    require_dtype(backend, low)
    device = backend.default_device()
    backend.seed(0)  # the params, whatever ran before
    conv = nn.Conv2dConfig((2, 3), (3, 3)).init(device)
    head = nn.LinearConfig(3 * 4 * 4, 5).init(device)
    norm = nn.LayerNormConfig(5).init(device)
    x = _t(backend, rng, (4, 2, 6, 6), DType.F32)
    targets = make(backend, np.array([0, 1, 4, 2]), backend.int_dtype)
    loss_fn = nn.loss.CrossEntropyLossConfig().init()

    def grads(region: Any) -> dict[str, np.ndarray]:
        with region:
            h = A.relu(conv.forward(x))
            logits = norm.forward(head.forward(h.reshape((4, -1))))
            loss = loss_fn.forward(logits, targets)
        assert loss.dtype is DType.F32
        g = loss.backward()
        out = {}
        for name, module in (("conv", conv), ("head", head), ("norm", norm)):
            for path, param in module.named_params():
                grad = param.val().grad(g)
                assert grad is not None, f"{name}.{path} has no gradient"
                assert grad.dtype is DType.F32, f"{name}.{path}: gradient {grad.dtype}, param float32"
                out[f"{name}.{path}"] = grad.to_data().to_numpy().astype(np.float64)
        return out

    mixed = grads(amp.autocast(low))
    full = grads(amp.autocast(low, enabled=False))
    for name, want in full.items():
        # bfloat16 keeps 8 bits of mantissa (float16 11): a few percent of the gradient's norm
        # covers the rounding of activations and products through three layers.
        tol = 0.05 if low is DType.BF16 else 0.01
        error, size = float(np.linalg.norm(mixed[name] - want)), float(np.linalg.norm(want))
        assert error <= tol * max(size, 1e-6), f"{name}: error {error:.3g}, norm {size:.3g}"
