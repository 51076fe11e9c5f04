"""`nn.MultiHeadAttention` through the attention op: without masks, quiet softmax or an active
dropout the heads run as one `burn.tensor.module.attention` call, the context and its gradients
equal the composed path's, and `MhaOutput.weights` is computed only when read (then equal to the
composed weights); masked calls keep Burn's `min_float` semantics (a fully masked row attends
uniformly)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn
from burn import nn

pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

RNG = np.random.default_rng(5)


def _mha(backend: Any, dropout: float = 0.0) -> nn.MultiHeadAttention:
    return nn.MultiHeadAttentionConfig(8, 2, dropout=dropout).init(backend.default_device())


def _x(backend: Any, shape: tuple[int, ...] = (2, 5, 8)) -> burn.Tensor:
    return burn.Tensor.from_data(RNG.standard_normal(shape), backend=backend)


def _composed(mha: nn.MultiHeadAttention, x: burn.Tensor) -> nn.MhaOutput:
    """The composed path of the same module (quiet softmax off): forced through an all-False mask."""
    batch, steps, _ = x.shape
    none = burn.Tensor.from_data(np.zeros((batch, steps), bool), backend=x.backend, kind=burn.Bool)
    return mha(nn.MhaInput.self_attn(x).with_mask_pad(none))


def test_unmasked_attention_runs_one_op_and_reads_weights_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    b = burn.backend("ndarray", float_dtype="float64")
    mha, x = _mha(b), _x(b)
    calls: list[str] = []
    original = type(b).attention

    def counted(self: Any, *args: Any) -> Any:
        calls.append("attention")
        return original(self, *args)

    monkeypatch.setattr(type(b), "attention", counted)
    out = mha(nn.MhaInput.self_attn(x))
    assert calls == ["attention"]
    assert out._weights is None  # not computed yet
    want = _composed(mha, x)
    np.testing.assert_allclose(out.context.to_numpy(), want.context.to_numpy(), rtol=1e-12, atol=1e-12)
    weights, context = out  # unpacks as the pair, weights computed now
    assert context is out.context and out[0] is weights
    np.testing.assert_allclose(weights.to_numpy(), want.weights.to_numpy(), rtol=1e-12, atol=1e-12)
    assert len(out) == 2 and "MhaOutput(weights=" in repr(out)


def test_fused_gradients_equal_the_composed_ones() -> None:
    b = burn.backend("autodiff(ndarray)", float_dtype="float64")
    mha = _mha(b)
    x_np = RNG.standard_normal((2, 4, 8))
    grads = []
    for fused in (True, False):
        x = burn.Tensor.from_data(x_np, backend=b).require_grad()
        out = mha(nn.MhaInput.self_attn(x)) if fused else _composed(mha, x)
        g = (out.context * out.context).sum().backward()
        grads.append([x.grad(g).to_numpy(), mha.query.weight.val().grad(g).to_numpy()])
    for fused, composed in zip(*grads, strict=True):
        np.testing.assert_allclose(fused, composed, rtol=1e-10, atol=1e-12)


def test_a_fully_masked_row_keeps_burns_uniform_weights() -> None:
    b = burn.backend("ndarray", float_dtype="float64")
    mha, x = _mha(b), _x(b, (1, 3, 8))
    mask = np.zeros((1, 3, 3), bool)
    mask[0, 1, :] = True
    out = mha(nn.MhaInput.self_attn(x).with_mask_attn(burn.Tensor.from_data(mask, backend=b, kind=burn.Bool)))
    np.testing.assert_allclose(out.weights.to_numpy()[0, :, 1], np.full((2, 3), 1 / 3), rtol=1e-12)


def test_active_dropout_keeps_the_composed_path(monkeypatch: pytest.MonkeyPatch) -> None:
    b = burn.backend("autodiff(ndarray)")
    mha = _mha(b, dropout=0.5)
    called: list[bool] = []
    monkeypatch.setattr(type(b), "attention", lambda self, *a: called.append(True))
    out = mha(nn.MhaInput.self_attn(_x(b)))
    assert not called and out._weights is not None
