"""The losses of burn.nn against PyTorch in float64 (<= 1e-10): values for every reduction
("mean", "sum", "none") and the gradients of the float inputs, on autodiff(ndarray)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import burn
from burn import nn

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
torch = pytest.importorskip("torch", reason="PyTorch is not installed")
TF = torch.nn.functional

TOL = 1e-10
REDUCTIONS = ("mean", "sum", "none")


@pytest.fixture(scope="module")
def B():
    return ad.Autodiff(nd.NdArray(float_dtype="float64"))


def compare(
    B: Any,
    burn_fn: Callable[..., Any],
    torch_fn: Callable[..., Any],
    floats: list[np.ndarray],
    others: list[np.ndarray] = (),  # type: ignore[assignment]
    reduction: str = "mean",
    grads: bool = True,
) -> None:
    """Run both losses on the same inputs; compare the values and the floats' gradients."""
    rng = np.random.default_rng(7)
    tf = [torch.from_numpy(a.copy()).requires_grad_(grads) for a in floats]
    to = [torch.from_numpy(np.asarray(a)) for a in others]
    want = torch_fn(*tf, *to, reduction)
    bf = [burn.Tensor.from_data(a, backend=B).require_grad() for a in floats]
    bo = [burn.Tensor.from_data(np.asarray(a), backend=B) for a in others]
    got = burn_fn(*bf, *bo, reduction)
    expected = want.detach().numpy()
    assert got.shape == (expected.shape if reduction == "none" else (1,)), (got.shape, expected.shape)
    np.testing.assert_allclose(got.to_numpy().reshape(expected.shape), expected, rtol=TOL, atol=TOL)
    if not grads:
        return
    weights = rng.standard_normal(expected.shape)
    (want * torch.from_numpy(weights)).sum().backward()
    w = burn.Tensor.from_data(weights.reshape(got.shape), backend=B)
    g = (got * w).sum().backward()
    for t, b in zip(tf, bf, strict=True):
        np.testing.assert_allclose(b.grad(g).to_numpy(), t.grad.numpy(), rtol=TOL, atol=TOL)


RNG = np.random.default_rng(2019)
PRED, TARGET = RNG.standard_normal((4, 5)) * 2, RNG.standard_normal((4, 5)) * 2


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_l1_smooth_l1_lp(B, reduction) -> None:
    compare(
        B, nn.L1Loss(), lambda a, b, r: TF.l1_loss(a, b, reduction=r), [PRED, TARGET], reduction=reduction
    )
    for beta in (1.0, 0.5, 0.0):
        compare(
            B,
            nn.SmoothL1LossConfig(beta=beta).init(),
            lambda a, b, r, beta=beta: TF.smooth_l1_loss(a, b, reduction=r, beta=beta),
            [PRED, TARGET],
            reduction=reduction,
        )
    for p in (1.0, 2.0, 3.0):
        compare(
            B,
            nn.LpLossConfig(p=p).init(),
            lambda a, b, r, p=p: _torch_reduce((a - b).abs() ** p, r),
            [PRED, TARGET],
            reduction=reduction,
        )


def _torch_reduce(loss: Any, reduction: str) -> Any:
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_huber_reductions_include_none(B, reduction) -> None:
    compare(
        B, nn.MseLoss(), lambda a, b, r: TF.mse_loss(a, b, reduction=r), [PRED, TARGET], reduction=reduction
    )
    compare(
        B,
        nn.HuberLossConfig(delta=0.7).init(),
        lambda a, b, r: TF.huber_loss(a, b, reduction=r, delta=0.7),
        [PRED, TARGET],
        reduction=reduction,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.4, -0.3])
def test_cosine_embedding(B, reduction, margin) -> None:
    x1, x2 = RNG.standard_normal((6, 4)), RNG.standard_normal((6, 4))
    y = np.array([1, -1, 1, -1, -1, 1])
    loss = nn.CosineEmbeddingLossConfig(margin=margin).init()
    compare(
        B,
        loss,
        lambda a, b, t, r: TF.cosine_embedding_loss(a, b, t, margin=margin, reduction=r),
        [x1, x2],
        [y],
        reduction,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding_and_margin_ranking(B, reduction) -> None:
    x = RNG.standard_normal((3, 4)) * 2
    y = np.where(RNG.random((3, 4)) < 0.5, -1.0, 1.0)
    compare(
        B,
        nn.HingeEmbeddingLossConfig(margin=1.5).init(),
        lambda a, t, r: TF.hinge_embedding_loss(a, t, margin=1.5, reduction=r),
        [x],
        [y],
        reduction,
    )
    x1, x2 = RNG.standard_normal(7), RNG.standard_normal(7)
    y1 = np.where(RNG.random(7) < 0.5, -1.0, 1.0)
    compare(
        B,
        nn.MarginRankingLossConfig(margin=0.2).init(),
        lambda a, b, t, r: TF.margin_ranking_loss(a, b, t, margin=0.2, reduction=r),
        [x1, x2],
        [y1],
        reduction,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("p", "swap"), [(2.0, False), (1.0, True), (3.0, False), (2.0, True)])
def test_triplet_margin(B, reduction, p, swap) -> None:
    a, pos, neg = (RNG.standard_normal((5, 4)) for _ in range(3))
    loss = nn.TripletMarginLossConfig(margin=0.8, p=p, swap=swap).init()
    compare(
        B,
        loss,
        lambda x, y, z, r: TF.triplet_margin_loss(x, y, z, margin=0.8, p=p, swap=swap, reduction=r),
        [a, pos, neg],
        reduction=reduction,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll(B, reduction, full) -> None:
    mean, target = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    var = RNG.uniform(0.1, 2.0, (4, 3))
    var[0, 0] = 1e-9  # clamped to eps: the gradient still flows, as PyTorch's
    loss = nn.GaussianNllLossConfig(full=full).init()
    compare(
        B,
        lambda m, v, t, r: loss(m, t, v, r),
        lambda m, v, t, r: TF.gaussian_nll_loss(m, t, v, full=full, reduction=r),
        [mean, var],
        [target],
        reduction,
    )
    # One variance per sample: [B, 1] (and PyTorch's [B] form).
    var1 = RNG.uniform(0.1, 2.0, (4, 1))
    compare(
        B,
        lambda m, v, t, r: loss(m, t, v, r),
        lambda m, v, t, r: TF.gaussian_nll_loss(m, t, v, full=full, reduction=r),
        [mean, var1],
        [target],
        reduction,
    )
    compare(
        B,
        lambda m, v, t, r: loss(m, t, v, r),
        lambda m, v, t, r: TF.gaussian_nll_loss(m, t, v, full=full, reduction=r),
        [mean, var1[:, 0]],
        [target],
        reduction,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("log_input", "full"), [(True, False), (False, False), (True, True), (False, True)])
def test_poisson_nll(B, reduction, log_input, full) -> None:
    target = RNG.poisson(2.0, (3, 5)).astype(np.float64)
    x = RNG.standard_normal((3, 5)) if log_input else RNG.uniform(0.1, 4.0, (3, 5))
    loss = nn.PoissonNllLossConfig(log_input=log_input, full=full).init()
    compare(
        B,
        loss,
        lambda a, t, r: TF.poisson_nll_loss(a, t, log_input=log_input, full=full, reduction=r),
        [x],
        [target],
        reduction,
    )


# -- cross-entropy --------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("extra", [(), (5,), (3, 2)], ids=["BC", "BCT", "BCHW"])
def test_cross_entropy_nd_matches_torch(B, reduction, extra) -> None:
    logits = RNG.standard_normal((2, 4, *extra))
    targets = RNG.integers(0, 4, (2, *extra))
    compare(
        B,
        nn.CrossEntropyLossConfig().init(),
        lambda x, t, r: TF.cross_entropy(x, t, reduction=r),
        [logits],
        [targets],
        reduction,
    )
    weights = [0.5, 2.0, 1.0, 1.5]
    targets = np.where(targets == 2, 3, targets)
    targets[0, ...] = 2  # the first sample is all pad tokens, the second has none
    compare(
        B,
        nn.CrossEntropyLossConfig(weights=weights, pad_tokens=[2]).init(),
        lambda x, t, r: TF.cross_entropy(
            x, t, weight=torch.tensor(weights, dtype=torch.float64), ignore_index=2, reduction=r
        ),
        [logits],
        [targets],
        reduction,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_reductions(B, reduction) -> None:
    logits = RNG.standard_normal((4, 3))
    target = (RNG.random((4, 3)) < 0.5).astype(np.float64)
    compare(
        B,
        nn.BinaryCrossEntropyLossConfig(logits=True).init(),
        lambda x, t, r: TF.binary_cross_entropy_with_logits(x, t, reduction=r),
        [logits],
        [target],
        reduction,
    )


def test_cross_entropy_with_logits_matches_torch(B) -> None:
    logits = RNG.standard_normal((3, 5))
    probs = np.exp(logits[::-1]) / np.exp(logits[::-1]).sum(-1, keepdims=True)
    compare(
        B,
        lambda x, t, r: nn.loss.cross_entropy_with_logits(x, t),
        lambda x, t, r: TF.cross_entropy(x, t),
        [logits],
        [probs],
    )


# -- CTC ------------------------------------------------------------------------------------------
CTC_TARGETS = np.array([[1, 2, 2, 3], [3, 1, 0, 0], [2, 2, 2, 0], [4, 0, 0, 0]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    ("input_lengths", "target_lengths"),
    [([12, 12, 12, 12], [4, 2, 3, 1]), ([12, 9, 7, 3], [4, 2, 3, 1]), ([10, 6, 5, 4], [4, 0, 3, 1])],
    ids=["full", "padded", "empty-target"],
)
def test_ctc_matches_torch(B, reduction, input_lengths, target_lengths) -> None:
    # The gradient is compared with respect to the logits: PyTorch's CTC backward returns the
    # gradient through the log-softmax its input is assumed to come from.
    logits = RNG.standard_normal((12, 4, 5))
    ctc = nn.CtcLossConfig().init()

    def burn_fn(x: Any, targets: Any, r: str) -> Any:
        return ctc(burn.activation.log_softmax(x, 2), targets, input_lengths, target_lengths, r)

    def torch_fn(x: Any, targets: Any, r: str) -> Any:
        lp = TF.log_softmax(x, 2)
        return TF.ctc_loss(
            lp, targets, torch.tensor(input_lengths), torch.tensor(target_lengths), reduction=r
        )

    compare(B, burn_fn, torch_fn, [logits], [CTC_TARGETS], reduction)


def test_ctc_impossible_alignment_and_zero_infinity(B) -> None:
    logits = RNG.standard_normal((3, 2, 4))
    lp = burn.activation.log_softmax(burn.Tensor.from_data(logits, backend=B), 2)
    targets = burn.Tensor.from_data(np.array([[1, 1, 2], [2, 3, 0]]), backend=B)
    # Sample 0 needs at least 4 steps (1, blank, 1, 2) but has 3.
    got = nn.CtcLossConfig().init().forward_no_reduction(lp, targets, [3, 3], [3, 2]).to_numpy()
    want = TF.ctc_loss(
        TF.log_softmax(torch.from_numpy(logits), 2),
        torch.from_numpy(np.array([[1, 1, 2], [2, 3, 0]])),
        torch.tensor([3, 3]),
        torch.tensor([3, 2]),
        reduction="none",
    ).numpy()
    assert np.isinf(got[0]) and np.isinf(want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=TOL)
    zero = nn.CtcLossConfig(zero_infinity=True).init()
    assert zero.forward_no_reduction(lp, targets, [3, 3], [3, 2]).to_numpy()[0] == 0.0


def test_loss_argument_errors(B) -> None:
    x = burn.Tensor.from_data(PRED, backend=B)
    with pytest.raises(ValueError, match="unknown reduction 'avg'"):
        nn.L1Loss()(x, x, "avg")
    with pytest.raises(burn.ShapeError, match="same shape"):
        nn.SmoothL1Loss()(x, x.reshape((5, 4)))
    with pytest.raises(ValueError, match="beta must be >= 0"):
        nn.SmoothL1LossConfig(beta=-1.0).init()
    with pytest.raises(ValueError, match="p must be positive"):
        nn.LpLossConfig(p=0.0).init()
    ctc = nn.CtcLossConfig().init()
    lp = burn.Tensor.from_data(RNG.standard_normal((5, 2, 3)), backend=B)
    targets = burn.Tensor.from_data(np.array([[1, 2], [1, 0]]), backend=B)
    with pytest.raises(burn.ShapeError, match=r"\[time, batch, classes\]"):
        ctc(lp.reshape((10, 3)), targets, [5, 5], [2, 1])
    with pytest.raises(ValueError, match="input_lengths"):
        ctc(lp, targets, [6, 5], [2, 1])
    with pytest.raises(burn.ShapeError, match="target_lengths must be 2 integers"):
        ctc(lp, targets, [5, 5], [2])
