"""`load_pytorch` of PyTorch's quantized models (`burn.record.pytorch_quantized`): dynamic and
static `torch.ao.quantization` Linears, per tensor and per channel, qint8 and quint8, read into
burn's quantized layers with the same integers and scales, and giving PyTorch's outputs."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from _torch_reference import needs_torch, torch

import burn
from burn import nn
from burn.quantization import QuantScheme, quantize
from burn.record import RecordError, load_pytorch
from burn.record.pytorch_pickle import TorchQuantizedTensor, open_checkpoint

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
B = nd.NdArray()


class Mlp(burn.Module):
    fc1: nn.Linear
    fc2: nn.Linear

    def forward(self, x: burn.Tensor) -> burn.Tensor:
        return self.fc2(burn.activation.relu(self.fc1(x)))


def _torch_mlp() -> Any:
    torch.manual_seed(0)
    seq = torch.nn.Sequential()
    seq.add_module("fc1", torch.nn.Linear(64, 32))
    seq.add_module("relu", torch.nn.ReLU())
    seq.add_module("fc2", torch.nn.Linear(32, 8))
    return seq


def _burn_mlp(scheme: QuantScheme) -> Mlp:
    device = B.default_device()
    model = Mlp(nn.LinearConfig(64, 32).init(device), nn.LinearConfig(32, 8).init(device))
    return quantize(model, scheme)


@needs_torch
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
def test_dynamic_int8_model_loads_with_torchs_integers(tmp_path: Any, per_channel: bool) -> None:
    ref = _torch_mlp()
    qconfig = (
        torch.ao.quantization.per_channel_dynamic_qconfig
        if per_channel
        else torch.ao.quantization.default_dynamic_qconfig
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tq = torch.ao.quantization.quantize_dynamic(ref, {torch.nn.Linear: qconfig}, dtype=torch.qint8)
        torch.save(tq.state_dict(), tmp_path / "dyn.pt")
    level = "channel" if per_channel else "tensor"
    model = load_pytorch(tmp_path / "dyn.pt", _burn_mlp(QuantScheme("int8", level, activations="dynamic")))
    for name in ("fc1", "fc2"):
        tw = getattr(tq, name).weight()
        layer = getattr(model, name)
        np.testing.assert_array_equal(layer.values.val().to_numpy(), tw.int_repr().numpy())
        scales = tw.q_per_channel_scales().numpy() if per_channel else np.array([tw.q_scale()])
        np.testing.assert_array_equal(layer.scales.val().to_numpy().reshape(-1), scales.astype(np.float32))
        assert layer.zero_points is None
    x = np.random.default_rng(1).standard_normal((5, 64)).astype(np.float32)
    got = model(burn.Tensor.from_data(x, backend=B)).to_numpy()
    with torch.no_grad():
        expected = tq(torch.from_numpy(x)).numpy()
    # Both quantize each input row at run time (PyTorch: affine uint8 with its reduced range,
    # burn: symmetric int8), two layers deep: the outputs differ by a few activation steps.
    assert np.abs(got - expected).max() < 0.05 * np.abs(expected).max()


@needs_torch
def test_quint8_tensor_loads_shifted_to_int8(tmp_path: Any) -> None:
    """A quint8 tensor (zero point 128 or another) keeps ``(q - zp) * scale`` in int8."""
    w = torch.randn(4, 6)
    q = torch.quantize_per_tensor(w, 0.02, 130, torch.quint8)
    torch.save({"emb.weight": q, "emb.other": torch.ones(2)}, tmp_path / "q.pt")
    with open_checkpoint(tmp_path / "q.pt") as ckpt:
        entry = ckpt.state_dict()["emb.weight"]
        assert isinstance(entry, TorchQuantizedTensor) and entry.qscheme == "per_tensor_affine"
    from burn.record.pytorch_quantized import expand_quantized

    with open_checkpoint(tmp_path / "q.pt") as ckpt:
        params = expand_quantized(ckpt.state_dict())
    values = params["emb.values"].array
    zp = params["emb.zero_points"].array
    scales = params["emb.scales"].array
    assert values.dtype == np.int8 and zp.tolist() == [2] and set(params) == {
        "emb.values", "emb.scales", "emb.zero_points", "emb.other"
    }
    np.testing.assert_allclose((values.astype(np.float32) - zp) * scales, q.dequantize().numpy(), rtol=1e-6)


@needs_torch
def test_static_quantized_linear_weights_load(tmp_path: Any) -> None:
    """A static `convert`ed model: the weights (per channel) load, the activation
    quantization's scale and zero points of the layers are dropped, the stubs' are skipped."""

    class Static(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.quant = torch.ao.quantization.QuantStub()
            self.fc1, self.relu, self.fc2 = _torch_mlp()
            self.dequant = torch.ao.quantization.DeQuantStub()

        def forward(self, x: Any) -> Any:
            return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Static().eval()
        ref.qconfig = torch.ao.quantization.get_default_qconfig("fbgemm")
        prepared = torch.ao.quantization.prepare(ref)
        prepared(torch.randn(32, 64))  # calibration
        tq = torch.ao.quantization.convert(prepared)
        torch.save(tq.state_dict(), tmp_path / "static.pt")
    model = load_pytorch(
        tmp_path / "static.pt",
        _burn_mlp(QuantScheme("int8", "channel", activations="dynamic")),
        skip_keys=[r"^quant\.", r"num_batches_tracked"],
    )
    for name in ("fc1", "fc2"):
        tw = getattr(tq, name).weight()
        np.testing.assert_array_equal(getattr(model, name).values.val().to_numpy(), tw.int_repr().numpy())
    x = np.random.default_rng(2).standard_normal((3, 64)).astype(np.float32)
    got = model(burn.Tensor.from_data(x, backend=B)).to_numpy()
    with torch.no_grad():
        expected = tq(torch.from_numpy(x)).numpy()
    # PyTorch also rounds the activations to its calibrated uint8 grids between the layers.
    assert np.abs(got - expected).max() < 0.05 * np.abs(expected).max()


@needs_torch
def test_a_scheme_that_does_not_match_names_the_param(tmp_path: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tq = torch.ao.quantization.quantize_dynamic(_torch_mlp(), {torch.nn.Linear}, dtype=torch.qint8)
        torch.save(tq.state_dict(), tmp_path / "dyn.pt")
    with pytest.raises(RecordError, match="fc1.scales"):  # per tensor in the file, per channel here
        load_pytorch(tmp_path / "dyn.pt", _burn_mlp(QuantScheme("int8", "channel", activations="dynamic")))


@needs_torch
def test_qint32_tensors_are_refused_by_name(tmp_path: Any) -> None:
    q = torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.qint32)
    torch.save({"layer.weight": q}, tmp_path / "q32.pt")
    with pytest.raises(RecordError, match=r"q32.pt: layer.weight: .*int32 values"):
        load_pytorch(tmp_path / "q32.pt", _burn_mlp(QuantScheme("int8", "tensor")))
