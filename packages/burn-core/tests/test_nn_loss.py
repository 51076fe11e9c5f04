"""burn.nn losses and reductions against NumPy references, and PyTorch where importable."""

from __future__ import annotations

import numpy as np
import pytest

import burn
from burn import nn

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def dev():
    return nd.NdArray(float_dtype="float64").default_device()


def tensor(dev, array, **kw):
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)


def close(actual, expected, tol=1e-10):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol)


def tt(a):
    return torch.from_numpy(np.array(a))


def log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


LOGITS = RNG.standard_normal((6, 4)) * 2
TARGETS = np.array([0, 3, 1, 1, 2, 3])
W = np.array([0.5, 1.0, 2.0, 3.0])


# -- reductions, MSE, Huber, KL -------------------------------------------------------------------
def test_mse_loss_reductions(dev) -> None:
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    loss = nn.MseLossConfig().init()
    sq = (a - b) ** 2
    close(loss(tensor(dev, a), tensor(dev, b)).to_numpy(), [sq.mean()])
    close(loss(tensor(dev, a), tensor(dev, b), nn.Reduction.SUM).to_numpy(), [sq.sum()])
    close(loss(tensor(dev, a), tensor(dev, b), "batch_mean").to_numpy(), [sq.sum() / 3])
    close(loss.forward_no_reduction(tensor(dev, a), tensor(dev, b)).to_numpy(), sq)
    with pytest.raises(burn.ShapeError, match="same shape"):
        loss(tensor(dev, a), tensor(dev, b[:2]))


def test_huber_loss_is_quadratic_then_linear(dev) -> None:
    pred = np.array([0.0, 0.3, -0.5, 2.0, -3.0])
    target = np.zeros(5)
    loss = nn.HuberLossConfig(delta=0.5).init()
    r = np.abs(pred - target)
    want = np.where(r <= 0.5, 0.5 * r**2, 0.5 * (r - 0.25))
    close(loss.forward_no_reduction(tensor(dev, pred), tensor(dev, target)).to_numpy(), want)
    close(loss(tensor(dev, pred), tensor(dev, target), nn.Reduction.SUM).to_numpy(), [want.sum()])
    if torch is not None:
        close(
            loss(tensor(dev, pred), tensor(dev, target)).to_numpy(),
            [TF.huber_loss(tt(pred), tt(target), delta=0.5).item()],
        )


def test_kl_div_loss(dev) -> None:
    pred = log_softmax(RNG.standard_normal((3, 5)))
    target = np.exp(log_softmax(RNG.standard_normal((3, 5))))
    target[0, 1] = 0.0  # 0 * log 0 counts as 0
    elementwise = np.where(target > 0, target * (np.log(np.where(target > 0, target, 1)) - pred), 0.0)
    loss = nn.KLDivLossConfig().init()
    close(loss.forward_no_reduction(tensor(dev, pred), tensor(dev, target)).to_numpy(), elementwise)
    close(
        loss(tensor(dev, pred), tensor(dev, target)).to_numpy(), [elementwise.sum() / 3]
    )  # AUTO = batch mean
    close(loss(tensor(dev, pred), tensor(dev, target), nn.Reduction.MEAN).to_numpy(), [elementwise.mean()])
    log_t = np.log(np.exp(log_softmax(RNG.standard_normal((3, 5)))))
    got = nn.KLDivLossConfig(log_target=True).init()(tensor(dev, pred), tensor(dev, log_t), nn.Reduction.SUM)
    close(got.to_numpy(), [(np.exp(log_t) * (log_t - pred)).sum()])
    if torch is not None:
        close(
            loss(tensor(dev, pred), tensor(dev, target)).to_numpy(),
            [TF.kl_div(tt(pred), tt(target), reduction="batchmean").item()],
        )


# -- cross-entropy --------------------------------------------------------------------------------
def np_cross_entropy(logits, targets, weights=None, pad=(), smoothing=None):
    log_p = log_softmax(logits)
    n, c = logits.shape
    w = np.ones(c) if weights is None else weights
    keep = ~np.isin(targets, pad)
    dist = np.eye(c)[targets]
    if smoothing is not None:
        dist = dist * (1 - smoothing) + smoothing / c
    per = -(dist * w * log_p).sum(-1)
    return (per * keep).sum() / (w[targets] * keep).sum()


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(weights=W),
        dict(pad=(1,)),
        dict(pad=(1, 3), weights=W),
        dict(smoothing=0.1),
        dict(smoothing=0.2, weights=W, pad=(0,)),
    ],
    ids=["plain", "weights", "pad", "pad+weights", "smoothing", "all"],
)
def test_cross_entropy_matches_numpy(dev, kw) -> None:
    cfg = nn.CrossEntropyLossConfig(
        pad_tokens=list(kw["pad"]) if "pad" in kw else None,
        weights=list(kw["weights"]) if "weights" in kw else None,
        smoothing=kw.get("smoothing"),
    )
    got = cfg.init(dev)(tensor(dev, LOGITS), tensor(dev, TARGETS, kind=burn.Int))
    assert got.shape == (1,)
    close(
        got.to_numpy(),
        [np_cross_entropy(LOGITS, TARGETS, kw.get("weights"), kw.get("pad", ()), kw.get("smoothing"))],
    )


def test_cross_entropy_on_probabilities_and_errors(dev) -> None:
    probs = np.exp(log_softmax(LOGITS))
    got = nn.CrossEntropyLossConfig(logits=False).init(dev)(
        tensor(dev, probs), tensor(dev, TARGETS, kind=burn.Int)
    )
    close(got.to_numpy(), [np_cross_entropy(LOGITS, TARGETS)])
    loss = nn.CrossEntropyLossConfig().init(dev)
    with pytest.raises(burn.ShapeError, match=r"targets must have shape \(6,\)"):
        loss(tensor(dev, LOGITS), tensor(dev, TARGETS[:4], kind=burn.Int))
    with pytest.raises(burn.KindError, match="Int tensor of class indices"):
        loss(tensor(dev, LOGITS), tensor(dev, TARGETS.astype(float)))
    with pytest.raises(ValueError, match="positive"):
        nn.CrossEntropyLossConfig(weights=[1.0, -1.0]).init(dev)
    with pytest.raises(ValueError, match="smoothing"):
        nn.CrossEntropyLossConfig(smoothing=1.5).init(dev)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_functional_cross_entropy_is_the_loss_and_the_composition(dev, reduction) -> None:
    from burn.tensor import module as F

    x, y = tensor(dev, LOGITS), tensor(dev, TARGETS, kind=burn.Int)
    per = -log_softmax(LOGITS)[np.arange(6), TARGETS]
    want = {"none": per, "sum": [per.sum()], "mean": [per.mean()]}[reduction]
    close(F.cross_entropy(x, y, reduction).to_numpy(), want)
    close(nn.CrossEntropyLossConfig().init(dev)(x, y, reduction).to_numpy(), want)
    # the contract's default composition (log-softmax, gather, mean) on the same backend
    B = x.backend
    composed = burn.backend.Backend.cross_entropy
    close(np.asarray(composed(B, x._p, y._p, reduction)), want)


def test_functional_cross_entropy_errors(dev) -> None:
    from burn.tensor import module as F

    x, y = tensor(dev, LOGITS), tensor(dev, TARGETS, kind=burn.Int)
    shape = r"cross_entropy: logits must have shape \[batch_size, num_classes >= 1\]"
    with pytest.raises(burn.ShapeError, match=shape + r", got \(24,\)"):
        F.cross_entropy(x.reshape((24,)), y)
    with pytest.raises(burn.ShapeError, match=r"num_classes >= 1\], got \(6, 0\)"):
        F.cross_entropy(tensor(dev, np.zeros((6, 0))), y)
    with pytest.raises(burn.ShapeError, match=r"have shape \(6,\) for logits \(6, 4\), got \(3,"):
        F.cross_entropy(x, y.reshape((3, 2)))
    with pytest.raises(burn.KindError, match=r"cross_entropy: targets must be a Int tensor"):
        F.cross_entropy(x, x.sum_dim(1).reshape((6,)))
    with pytest.raises(burn.KindError, match="cross_entropy"):
        F.cross_entropy(y.reshape((2, 3)), y[:2])
    with pytest.raises(ValueError, match=r"reduction must be one of \('none', 'sum', 'mean'\), got 'avg'"):
        F.cross_entropy(x, y, "avg")  # type: ignore[arg-type]
    with pytest.raises(IndexError, match=r"cross_entropy: target 4 of row 1 is out of range \[0, 4\)"):
        F.cross_entropy(x, tensor(dev, np.array([0, 4, 1, 1, 2, 3]), kind=burn.Int))
    with pytest.raises(IndexError, match=r"target -1 of row 5"):
        nn.CrossEntropyLossConfig().init(dev)(x, tensor(dev, np.array([0, 3, 1, 1, 2, -1]), kind=burn.Int))


@needs_torch
def test_cross_entropy_matches_torch(dev) -> None:
    y = tensor(dev, TARGETS, kind=burn.Int)
    cases = [
        (nn.CrossEntropyLossConfig(weights=list(W), pad_tokens=[2]), dict(weight=tt(W), ignore_index=2)),
        (
            nn.CrossEntropyLossConfig(smoothing=0.15, weights=list(W)),
            dict(weight=tt(W), label_smoothing=0.15),
        ),
    ]
    for cfg, kw in cases:
        want = TF.cross_entropy(tt(LOGITS), tt(TARGETS), **kw).item()
        close(cfg.init(dev)(tensor(dev, LOGITS), y).to_numpy(), [want])


# -- binary cross-entropy -------------------------------------------------------------------------
def test_binary_cross_entropy_matches_numpy(dev) -> None:
    x = RNG.standard_normal(6)
    t = np.array([0, 1, 1, 0, 1, 0])
    p = sigmoid(x)
    plain = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    y = tensor(dev, t, kind=burn.Int)
    close(nn.BinaryCrossEntropyLossConfig().init(dev)(tensor(dev, p), y).to_numpy(), [plain.mean()])
    close(
        nn.BinaryCrossEntropyLossConfig(logits=True).init(dev)(tensor(dev, x), y).to_numpy(), [plain.mean()]
    )
    weighted = plain * np.array([3.0, 7.0])[t]  # [B] inputs: one weight per target value
    got = nn.BinaryCrossEntropyLossConfig(weights=[3.0, 7.0], logits=True).init(dev)(tensor(dev, x), y)
    close(got.to_numpy(), [weighted.mean()])
    ts = t * 0.9 + 0.05  # smoothing 0.1 over 2 classes
    smooth = -(ts * np.log(p) + (1 - ts) * np.log(1 - p))
    close(
        nn.BinaryCrossEntropyLossConfig(smoothing=0.1).init(dev)(tensor(dev, p), y).to_numpy(),
        [smooth.mean()],
    )
    # p = 0 or 1 stays finite (each log clamped at -100, as PyTorch)
    edge = nn.BinaryCrossEntropyLossConfig().init(dev)(
        tensor(dev, [0.0, 1.0]), tensor(dev, [1, 0], kind=burn.Int)
    )
    close(edge.to_numpy(), [100.0])


def test_binary_cross_entropy_burn_reference_values(dev) -> None:
    # Values from Burn's own BCE tests (computed there with PyTorch).
    x = tensor(dev, [0.8271, 0.9626, 0.3796, 0.2355])
    y = tensor(dev, [0, 1, 0, 1], kind=burn.Int)
    close(nn.BinaryCrossEntropyLossConfig(logits=True).init(dev)(x, y).to_numpy(), [0.7491], tol=1e-4)
    got = nn.BinaryCrossEntropyLossConfig(weights=[3.0, 7.0], logits=True).init(dev)(x, y)
    close(got.to_numpy(), [3.1531], tol=1e-4)
    xm = tensor(dev, [[0.5150, 0.3097, 0.7556], [0.4974, 0.9879, 0.1564]])
    ym = tensor(dev, [[1, 0, 1], [1, 0, 0]], kind=burn.Int)
    got = nn.BinaryCrossEntropyLossConfig(weights=[3.0, 7.0, 0.9], logits=True).init(dev)(xm, ym)
    close(got.to_numpy(), [3.1708], tol=1e-4)


@needs_torch
def test_binary_cross_entropy_multilabel_matches_torch(dev) -> None:
    x = RNG.standard_normal((4, 3))
    t = (RNG.random((4, 3)) > 0.5).astype(np.int64)
    w = np.array([0.5, 2.0, 1.5])
    got = nn.BinaryCrossEntropyLossConfig(weights=list(w), logits=True).init(dev)(
        tensor(dev, x), tensor(dev, t, kind=burn.Int)
    )
    want = TF.binary_cross_entropy_with_logits(tt(x), tt(t.astype(float)), weight=tt(w)).item()
    close(got.to_numpy(), [want])
    got = nn.BinaryCrossEntropyLossConfig().init(dev)(tensor(dev, sigmoid(x)), tensor(dev, t, kind=burn.Int))
    close(got.to_numpy(), [TF.binary_cross_entropy(tt(sigmoid(x)), tt(t.astype(float))).item()])
