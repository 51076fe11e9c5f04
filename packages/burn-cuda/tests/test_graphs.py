"""`burn_cuda.graphs.graphed` on a real GPU: replays give the eager results step after step,
inputs are copied (never written), new structures record new graphs, and what a graph cannot
hold is refused with a clear error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn
from burn import Tensor, activation, nn, optim
from burn.module import Module


@pytest.fixture(scope="module")
def AD() -> Any:
    return burn.backend("autodiff(cuda)")


@pytest.fixture(scope="module")
def C() -> Any:
    return burn.backend("cuda")


class Net(Module):
    conv: nn.Conv2d
    pool: nn.MaxPool2d
    fc: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        x = self.pool(activation.relu(self.conv(x)))
        return self.fc(x.reshape((x.shape[0], -1)))


def _net(device: Any) -> Net:
    return Net(
        nn.Conv2dConfig((1, 4), (3, 3)).init(device),
        nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init(),
        nn.LinearConfig(4 * 5 * 5, 10).init(device),
    )


def _batch(B: Any, seed: int) -> tuple[Tensor, Tensor]:
    rng = np.random.default_rng(seed)
    x = Tensor.from_data(rng.standard_normal((8, 1, 12, 12)).astype(np.float32), device=B.default_device())
    y = Tensor.from_data(rng.integers(0, 10, 8), device=B.default_device())
    return x, y


def test_graphed_training_follows_eager_training(AD: Any) -> None:
    from burn_cuda.graphs import graphed

    AD.seed(0)
    start = _net(AD.default_device())
    w0 = start.conv.weight.val().to_data().to_numpy().copy()
    loss_fn = nn.CrossEntropyLossConfig().init()

    def grads(model: Net, x: Tensor, y: Tensor) -> optim.GradientsParams:
        return optim.GradientsParams.from_grads(loss_fn(model(x), y).backward(), model)

    fast = graphed(grads)
    batches = [_batch(AD, s) for s in range(4)]
    models, opts = [start, start], [optim.AdamConfig().init(), optim.AdamConfig().init()]
    for x, y in batches * 2:
        for i, fn in enumerate((grads, fast)):
            models[i] = opts[i].step(1e-2, models[i], fn(models[i], x, y))
    assert fast.captured == 1
    for eager, replayed in zip(models[0].params(), models[1].params(), strict=True):
        np.testing.assert_allclose(
            replayed.val().to_data().to_numpy(), eager.val().to_data().to_numpy(), rtol=1e-5, atol=1e-6
        )
    # Training moved the weights, and the first model's were never written (inputs are copied).
    assert not np.array_equal(models[1].conv.weight.val().to_data().to_numpy(), w0)
    np.testing.assert_array_equal(start.conv.weight.val().to_data().to_numpy(), w0)


def test_inputs_are_copied_results_are_overwritten_and_new_shapes_record_again(C: Any) -> None:
    from burn_cuda.graphs import graphed

    f = graphed(lambda x, scale: x * scale + 1.0)
    x1 = Tensor.from_data(np.arange(4, dtype=np.float32), device=C.default_device())
    x2 = Tensor.from_data(np.arange(4, dtype=np.float32) * 10, device=C.default_device())
    out1 = f(x1, 2.0)
    first = out1.to_data().to_numpy().tolist()
    out2 = f(x2, 2.0)
    assert first == [1.0, 3.0, 5.0, 7.0] and out2.to_data().to_numpy().tolist() == [1.0, 21.0, 41.0, 61.0]
    assert out1.to_data().to_numpy().tolist() == out2.to_data().to_numpy().tolist()  # same buffer
    assert x1.to_data().to_numpy().tolist() == [0.0, 1.0, 2.0, 3.0]  # never written
    assert f.captured == 1
    f(x1, 3.0)  # another constant: another graph
    f(Tensor.from_data(np.ones(5, np.float32), device=C.default_device()), 2.0)  # another shape
    assert f.captured == 3
    f.reset()
    assert f.captured == 0 and f(x1, 2.0).to_data().to_numpy().tolist() == first


def test_random_draws_advance_on_every_replay(C: Any) -> None:
    from burn.foundations.distribution import Uniform
    from burn_cuda.graphs import graphed

    f = graphed(lambda x: x + Tensor.random(x.shape, Uniform(0.0, 1.0), device=x.device))
    x = Tensor.zeros((1000,), device=C.default_device())
    a = f(x).to_data().to_numpy().copy()
    b = f(x).to_data().to_numpy()
    assert not np.array_equal(a, b) and 0.0 <= a.min() and a.max() < 1.0 and 0.0 <= b.min()


def test_host_reads_inside_fail_with_a_capture_error_and_leave_the_device_usable(C: Any) -> None:
    from burn_cuda.graphs import GraphCaptureError, graphed

    def reads_back(x: Tensor) -> Tensor:
        return x * float((x * 2).sum().item())

    x = Tensor.ones((4,), device=C.default_device())
    with pytest.raises(GraphCaptureError, match="reads_back"):
        graphed(reads_back)(x)
    assert (x + 1).to_data().to_numpy().tolist() == [2.0] * 4


def test_refused_arguments_and_results_name_the_path(C: Any) -> None:
    from burn_cuda.graphs import graphed

    x = Tensor.ones((4,), device=C.default_device())
    with pytest.raises(TypeError, match=r"result\[1\] is a float"):
        graphed(lambda t: (t * 2, 1.0))(x)
    on_cpu = Tensor.ones((4,), backend=burn.backend("ndarray"))
    with pytest.raises(TypeError, match=r"args\[0\]\[0\] is a tensor of backend 'ndarray'"):
        graphed(lambda t: t * 2)(on_cpu)
