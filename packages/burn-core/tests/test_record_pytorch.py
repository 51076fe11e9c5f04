"""safetensors interchange: our files read by the safetensors library, and PyTorch state dicts
loaded into burn modules (Linear transposed, norm names mapped, keys remapped by regex)."""

from __future__ import annotations

import numpy as np
import pytest
from test_record_support import backend, ids, make_net, values

import burn
from burn import record
from burn.module import Module, Param
from burn.record import RecordError, load_pytorch_safetensors

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")


# -- burn layers as the nn package names them (written here: tests must not depend on burn.nn) --
class Linear(Module):
    weight: Param  # [d_in, d_out]
    bias: Param

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x @ _np(self.weight) + _np(self.bias)


class BatchNorm1d(Module):
    gamma: Param
    beta: Param
    running_mean: Param
    running_var: Param
    epsilon: float = 1e-5

    def forward(self, x: np.ndarray) -> np.ndarray:
        return (x - _np(self.running_mean)) / np.sqrt(_np(self.running_var) + self.epsilon) * _np(
            self.gamma
        ) + _np(self.beta)


class LayerNorm(Module):
    gamma: Param
    beta: Param
    epsilon: float = 1e-5

    def forward(self, x: np.ndarray) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.epsilon) * _np(self.gamma) + _np(self.beta)


class Mlp(Module):
    fc1: Linear
    bn: BatchNorm1d
    ln: LayerNorm
    fc2: Linear

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.fc2(self.ln(np.maximum(self.bn(self.fc1(x)), 0.0)))


def _np(param: Param) -> np.ndarray:
    return np.asarray(param.val().to_numpy(), dtype=np.float64)


def _lazy_mlp(B, calls):  # noqa: N803
    device = B.default_device()

    def lazy(*shape):
        def init(dev, _grad):
            calls.append(shape)
            return burn.Tensor.zeros(shape, device=dev)

        return Param.uninitialized(init, shape, device)

    return Mlp(
        Linear(lazy(4, 8), lazy(8)),
        BatchNorm1d(lazy(8), lazy(8), lazy(8), lazy(8)),
        LayerNorm(lazy(8), lazy(8)),
        Linear(lazy(8, 3), lazy(3)),
    )


@pytest.fixture(scope="module")
def torch_model():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    torch.manual_seed(0)

    class TorchMlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(4, 8)
            self.bn = torch.nn.BatchNorm1d(8)
            self.ln = torch.nn.LayerNorm(8)
            self.fc2 = torch.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(self.ln(torch.relu(self.bn(self.fc1(x)))))

    model = TorchMlp()
    with torch.no_grad():  # move the running stats and norm affine params off their defaults
        for _ in range(3):
            model(torch.randn(16, 4) * 3 + 1)
        model.ln.weight.mul_(1.5)
        model.ln.bias.add_(0.25)
        model.bn.weight.mul_(0.5)
    model.eval()
    return torch, model


def _save_torch(torch_model, path, prefix="", dtype=None):
    torch, model = torch_model
    from safetensors.torch import save_file

    state = {
        prefix + k: (v.to(dtype) if dtype is not None and v.is_floating_point() else v).contiguous()
        for k, v in model.state_dict().items()
    }
    save_file(state, str(path))
    return state


def test_pytorch_state_dict_loads_and_computes_the_same(torch_model, tmp_path):
    torch, model = torch_model
    _save_torch(torch_model, tmp_path / "mlp.safetensors")
    B = backend("ndarray")  # noqa: N806
    calls: list = []
    burn_model = load_pytorch_safetensors(tmp_path / "mlp.safetensors", _lazy_mlp(B, calls))
    assert calls == []
    np.testing.assert_array_equal(_np(burn_model.fc1.weight), model.fc1.weight.detach().numpy().T)
    np.testing.assert_array_equal(_np(burn_model.bn.gamma), model.bn.weight.detach().numpy())
    np.testing.assert_array_equal(_np(burn_model.bn.running_var), model.bn.running_var.numpy())
    assert burn_model.fc1.weight.val().to_data().array.flags.c_contiguous
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(burn_model.forward(x.astype(np.float64)), expected, rtol=1e-4, atol=1e-5)


def test_key_remap_and_bfloat16(torch_model, tmp_path):
    torch, _ = torch_model
    state = _save_torch(
        torch_model, tmp_path / "mlp.safetensors", prefix="model.encoder.", dtype=torch.bfloat16
    )
    B = backend("ndarray")  # noqa: N806
    with pytest.raises(
        RecordError, match=r"missing keys.*fc1\.weight.*PyTorch keys looked up: fc1\.weight <- fc1\.weight"
    ):
        load_pytorch_safetensors(tmp_path / "mlp.safetensors", _lazy_mlp(B, []))
    loaded = load_pytorch_safetensors(
        tmp_path / "mlp.safetensors", _lazy_mlp(B, []), key_remap=[(r"^model\.encoder\.", "")]
    )
    assert loaded.fc2.weight.val().dtype == burn.float32  # converted from the file's bfloat16
    np.testing.assert_array_equal(
        _np(loaded.fc2.weight), state["model.encoder.fc2.weight"].float().numpy().T.astype(np.float64)
    )


def test_unexpected_pytorch_keys_are_reported(torch_model, tmp_path):
    _save_torch(torch_model, tmp_path / "mlp.safetensors")

    class Small(Module):
        fc1: Linear

    B = backend("ndarray")  # noqa: N806
    small = Small(
        Linear(
            Param.from_tensor(burn.Tensor.zeros((4, 8), backend=B)),
            Param.from_tensor(burn.Tensor.zeros((8,), backend=B)),
        )
    )
    with pytest.raises(RecordError, match=r"mlp\.safetensors: .*unexpected keys.*fc2\.weight"):
        load_pytorch_safetensors(tmp_path / "mlp.safetensors", small)
    loaded = load_pytorch_safetensors(tmp_path / "mlp.safetensors", small, strict=False)
    assert loaded.fc1.weight.id == small.fc1.weight.id  # PyTorch files carry no ids: ours stay


def test_our_safetensors_files_are_standard(tmp_path):
    B = backend("ndarray")  # noqa: N806
    net = make_net(B)
    path = net.save_file(tmp_path / "net", record.SafetensorsFileRecorder(record.HalfPrecisionSettings()))
    tensors = safetensors_numpy.load_file(str(path))
    assert set(tensors) == {p for p, _ in net.named_params()}
    np.testing.assert_array_equal(
        tensors["layers.0.weight"], net.layers[0].weight.val().to_numpy().astype(np.float16)
    )
    assert tensors["stats.mask"].dtype == np.bool_ and tensors["stats.counts"].dtype == np.int16
    from safetensors import safe_open

    with safe_open(str(path), "np") as f:
        meta = f.metadata()
    assert meta["burn.format"] == "burn-record" and meta["burn.settings"] == "HalfPrecisionSettings"
    assert str(net.layers[0].weight.id) in meta["burn.tree"]


def test_foreign_safetensors_load_as_module_records(tmp_path):
    B = backend("ndarray")  # noqa: N806
    net = make_net(B)
    arrays = {path: np.array(v) for path, v in values(net).items()}
    safetensors_numpy.save_file(arrays, str(tmp_path / "plain.safetensors"), metadata={"format": "np"})
    recorder = record.SafetensorsFileRecorder()
    meta, rec = recorder.load_with_metadata(tmp_path / "plain")
    assert meta is None and all(p.id is None for p in rec.values())
    target = make_net(B, seed=3)
    loaded = target.load_file(tmp_path / "plain", recorder)
    assert ids(loaded) == ids(target)
    np.testing.assert_array_equal(values(loaded)["layers.1.weight"], arrays["layers.1.weight"])
