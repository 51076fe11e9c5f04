"""The XOR example (seed 004's end-to-end example) trains to within 0.1 of [0, 1, 1, 0], and
follows the same trajectory as PyTorch from the same initial weights."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "xor.py"
TARGET = np.array([0.0, 1.0, 1.0, 0.0])


@pytest.fixture(scope="module")
def xor():  # noqa: ANN201
    if not EXAMPLE.exists():
        pytest.skip(f"{EXAMPLE} is not in this checkout")
    spec = importlib.util.spec_from_file_location("xor_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["xor_example"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def predictions(xor) -> np.ndarray:  # noqa: ANN001
    return xor.train(ad.Autodiff(nd.NdArray()), log=False)


def test_xor_learns_within_0_1(predictions: np.ndarray) -> None:
    assert predictions.shape == (4, 1)
    assert np.max(np.abs(predictions[:, 0] - TARGET)) < 0.1, predictions[:, 0]


def test_xor_matches_torch_from_the_same_weights(xor, predictions: np.ndarray) -> None:  # noqa: ANN001
    torch = pytest.importorskip("torch", reason="torch is not installed")
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)  # the example's default seed, same draws in the same order
    layers = []
    for d_in, d_out in [(2, 4), (4, 1)]:
        bound = 1.0 / np.sqrt(d_in)
        w = rng.uniform(-bound, bound, size=(d_in, d_out)).astype(np.float32)
        b = rng.uniform(-bound, bound, size=(d_out,)).astype(np.float32)
        layers.append((torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)))
    (w1, b1), (w2, b2) = layers
    optimizer = torch.optim.Adam([w1, b1, w2, b2], lr=0.02, eps=1e-5)  # burn's Adam defaults
    x, y = torch.tensor(xor.X), torch.tensor(xor.Y)
    for _ in range(3000):
        out = torch.relu(torch.relu(x @ w1 + b1) @ w2 + b2)
        loss = ((out - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    np.testing.assert_allclose(predictions, out.detach().numpy(), atol=1e-3)


def test_xor_main_reports_success(xor, capsys, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(xor, "train", lambda: np.array([[0.0], [0.95], [1.02], [0.05]]))
    assert xor.main() == 0
    monkeypatch.setattr(xor, "train", lambda: np.array([[0.0], [0.5], [1.0], [0.0]]))
    assert xor.main() == 1
    assert "did not learn XOR" in capsys.readouterr().err
