"""PyTorch habits: accepted where Burn's API allows it without ambiguity, else an error that gives
the burn spelling."""

from __future__ import annotations

import pytest

import burn
from burn import nn
from burn.optim import GradientsParams, SgdConfig

pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
B = burn.backend("ndarray")


def _x() -> burn.Tensor:
    return burn.Tensor.arange(120, backend=B).float().reshape((2, 3, 4, 5))


def test_reshape_takes_sizes_one_by_one() -> None:
    x = _x()
    assert x.reshape(2, -1).shape == (2, 60)
    assert x.reshape(2, -1).tolist() == x.reshape((2, -1)).tolist()


def test_permute_takes_dims_one_by_one() -> None:
    x = _x()
    assert x.permute(0, 2, 3, 1).shape == (2, 4, 5, 3)
    assert x.permute(0, 2, 3, 1).tolist() == x.permute((0, 2, 3, 1)).tolist()


def test_transpose_with_two_dims_swaps_them() -> None:
    x = _x()
    assert x.transpose(1, 2).tolist() == x.swap_dims(1, 2).tolist()
    assert x.transpose().shape == (2, 3, 5, 4)  # Burn's: the last two
    with pytest.raises(TypeError, match=r"swap_dims\(dim1, dim2\)"):
        x.transpose(1)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_with_a_dim_points_to_max_dim(op: str) -> None:
    x = _x()
    with pytest.raises(TypeError, match=rf"x\.{op}_dim\(1\).*x\.{op}_dim_with_indices\(1\)"):
        getattr(x, op)(dim=1)
    with pytest.raises(TypeError, match=rf"x\.{op}_dim\(1\)"):
        getattr(x, op)(1)
    assert getattr(x, op)().shape == (1,)


def test_prod_with_a_dim_points_to_prod_dim() -> None:
    with pytest.raises(TypeError, match=r"x\.prod_dim\(0\)"):
        _x().prod(0)


def test_pad_mode_in_pytorchs_place() -> None:
    x = burn.Tensor.from_data([[1.0, 2.0, 3.0]], backend=B)
    assert x.pad((1, 1), "reflect").tolist() == [[2.0, 1.0, 2.0, 3.0, 2.0]]
    img = _x()
    assert img.pad((1, 1, 1, 1), "reflect").tolist() == img.pad((1, 1, 1, 1), mode="reflect").tolist()
    assert img.pad((1, 1, 1, 1), "reflect").shape == (2, 3, 6, 7)
    assert x.pad((1, 0), "edge").tolist() == [[1.0, 1.0, 2.0, 3.0]]
    with pytest.raises(TypeError, match="PyTorch's 'replicate' is burn's mode='edge'"):
        x.pad((1, 1), "replicate")
    with pytest.raises(ValueError, match="mode='edge'"):
        x.pad((1, 1), mode="replicate")
    assert x.pad((1, 0), 7.0).tolist() == [[7.0, 1.0, 2.0, 3.0]]  # a number is still the value


def test_step_without_lr_says_where_it_goes() -> None:
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    AB = burn.backend("autodiff(ndarray)")
    model = nn.LinearConfig(3, 2).init(AB.default_device())
    loss = model(burn.Tensor.ones((1, 3), backend=AB)).sum()
    grads = GradientsParams.from_grads(loss.backward(), model)
    optimizer = SgdConfig().init()
    with pytest.raises(TypeError, match=r"optimizer\.step\(1e-3, model, grads\)"):
        optimizer.step(model, grads)  # type: ignore[call-arg]
    assert len(grads) == 2  # nothing taken out by the refused call
    updated = optimizer.step(0.1, model, grads)
    assert updated.weight.val().tolist() != model.weight.val().tolist()


class _Net(burn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.LinearConfig(3, 2)  # the slip: .init() forgotten
        self.blocks = {"head": nn.LinearConfig(2, 1)}

    def forward(self, x: burn.Tensor) -> burn.Tensor:
        return self.fc(x)

    def head(self, x: burn.Tensor) -> burn.Tensor:
        return self.blocks["head"](x)


def test_config_field_called_names_the_field() -> None:
    net = _Net()
    x = burn.Tensor.ones((1, 3), backend=B)
    with pytest.raises(TypeError, match=r"field 'fc' of _Net holds a LinearConfig.*\.init\(\.\.\.\)"):
        net(x)
    with pytest.raises(TypeError, match=r"field 'fc' of _Net"):
        net.forward(x)
    with pytest.raises(TypeError, match=r"field \"blocks\['head'\]\" of _Net holds a LinearConfig"):
        net.head(x)
    with pytest.raises(TypeError, match="a LinearConfig is a config, not a layer"):
        nn.LinearConfig(3, 2)(x)  # type: ignore[operator]


def test_documented_silent_differences_hold() -> None:
    x = burn.Tensor.zeros((1, 1, 4, 4), backend=B)
    assert nn.MaxPool2dConfig((2, 2)).init()(x).shape == (1, 1, 3, 3)  # stride 1, not PyTorch's 2
    assert nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init()(x).shape == (1, 1, 2, 2)
    from burn.optim import GradientClippingConfig

    g = burn.Tensor.from_data([3.0, 4.0], backend=B)  # norm 5
    assert GradientClippingConfig.norm(1.0).init().clip(g).tolist() == pytest.approx([0.6, 0.8])
    assert GradientClippingConfig.global_norm(1.0).init().is_global


def test_step_empties_the_grads() -> None:
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    AB = burn.backend("autodiff(ndarray)")
    model = nn.LinearConfig(3, 2).init(AB.default_device())
    grads = GradientsParams.from_grads(model(burn.Tensor.ones((1, 3), backend=AB)).sum().backward(), model)
    SgdConfig().init().step(0.1, model, grads)
    assert len(grads) == 0
