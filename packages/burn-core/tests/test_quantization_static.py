"""Static post-training quantization: the observers' ranges and int8 parameters, `calibrate`
turning a model's Linear and Conv2d layers into statically quantized ones, their outputs against
the float model and across backends, records that load the calibrated parameters bit for bit, and
a trained digits CNN quantized statically and dynamically within 1 % of its float accuracy."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

import burn  # noqa: E402
from burn import Tensor, nn  # noqa: E402
from burn.module import Module  # noqa: E402
from burn.quantization import (  # noqa: E402
    MinMaxObserver,
    MovingAverageObserver,
    PercentileObserver,
    QuantizedConv,
    QuantizedLinear,
    StaticQuantizedConv2d,
    StaticQuantizedLinear,
    calibrate,
    quantize,
)
from burn.tensor import activation  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def nd() -> Any:
    return burn.backend("ndarray")


def t(values: Any) -> Tensor:
    return Tensor.from_data(np.asarray(values, np.float32), backend=nd())


# -- observers ---------------------------------------------------------------------------------------
def test_minmax_observer_per_tensor_and_per_channel() -> None:
    a = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], np.float32)
    b = np.array([[-4.0, 0.0, 0.0], [0.0, 5.0, 0.0]], np.float32)
    whole, per_col = MinMaxObserver(), MinMaxObserver(axis=1)
    for x in (a, b):
        whole.update(t(x))
        per_col.update(t(x))
    assert [r.tolist() for r in whole.range()] == [[-4.0], [5.0]]
    both = np.concatenate([a, b])
    np.testing.assert_array_equal(per_col.range()[0], both.min(axis=0))
    np.testing.assert_array_equal(per_col.range()[1], both.max(axis=0))
    assert whole.batches == 2


def test_moving_average_observer_follows_its_formula() -> None:
    obs = MovingAverageObserver(momentum=0.25)
    obs.update(t([0.0, 4.0]))
    obs.update(t([-8.0, 0.0]))
    lo, hi = obs.range()
    assert lo[0] == pytest.approx(0.75 * 0.0 + 0.25 * -8.0) and hi[0] == pytest.approx(0.75 * 4.0)


def test_percentile_observer_averages_batch_percentiles() -> None:
    gen = np.random.default_rng(0)
    batches = [gen.standard_normal((64, 8)).astype(np.float32) for _ in range(3)]
    obs = PercentileObserver(99.0)
    per_channel = PercentileObserver(90.0, axis=1)
    for x in batches:
        obs.update(t(x))
        per_channel.update(t(x))
    lo, hi = obs.range()
    assert hi[0] == pytest.approx(np.mean([np.percentile(x, 99.0) for x in batches]))
    assert lo[0] == pytest.approx(np.mean([np.percentile(x, 1.0) for x in batches]))
    expected = np.mean([np.percentile(x.astype(np.float64), 90.0, axis=0) for x in batches], axis=0)
    np.testing.assert_allclose(per_channel.range()[1], expected, rtol=1e-12)
    # an outlier moves the min-max range all the way, the percentile range hardly
    outlier = batches[0].copy()
    outlier[0, 0] = 1e3
    mm, pc = MinMaxObserver(), PercentileObserver(99.0)
    mm.update(t(outlier))
    pc.update(t(outlier))
    assert mm.range()[1][0] == 1e3 and pc.range()[1][0] < 5.0


def test_qparams_symmetric_and_affine() -> None:
    obs = MinMaxObserver()
    obs.update(t([-1.0, 3.0]))
    scale, zp = obs.qparams(symmetric=True)
    assert scale.dtype == np.float32 and scale[0] == np.float32(3.0) / np.float32(127) and zp[0] == 0
    scale, zp = obs.qparams()
    assert scale[0] == np.float32(4.0) / np.float32(254)
    # lo lands on -127 and 0 on the zero point, exactly representable
    assert zp[0] == -127 + round(1.0 / float(scale[0]))
    relu = MinMaxObserver()
    relu.update(t([0.0, 2.0, 0.5]))
    assert relu.qparams()[1][0] == -127  # a ReLU output: 0 at the bottom of the grid
    zeros = MinMaxObserver()
    zeros.update(t([0.0, 0.0]))
    # all zeros: scale 1, so every value quantizes to the zero point (0 at the grid's bottom, or 0)
    assert zeros.qparams()[0].tolist() == [1.0] and zeros.qparams()[1].tolist() == [-127]
    assert zeros.qparams(symmetric=True)[1].tolist() == [0]


def test_observers_refuse_bad_input() -> None:
    with pytest.raises(ValueError, match="no batch was observed"):
        MinMaxObserver().range()
    with pytest.raises(ValueError, match="NaN or infinite"):
        MinMaxObserver().update(t([1.0, np.inf]))
    with pytest.raises(ValueError, match="channel axis 3 is out of range"):
        MinMaxObserver(axis=3).update(t([[1.0]]))
    with pytest.raises(ValueError, match="momentum"):
        MovingAverageObserver(momentum=0.0)
    with pytest.raises(ValueError, match="percentile"):
        PercentileObserver(30.0)
    per_col = MinMaxObserver(axis=1)
    per_col.update(t([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="3 channels on axis 1, earlier batches had 2"):
        per_col.update(t([[1.0, 2.0, 3.0]]))


# -- calibrate -----------------------------------------------------------------------------------
class Small(Module):
    """conv -> ReLU -> depthwise conv -> ReLU -> linear, plus a head no batch reaches."""

    conv: nn.Conv2d
    depthwise: nn.Conv2d
    out: nn.Linear
    unused: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        h = activation.relu(self.conv(x))
        h = activation.relu(self.depthwise(h))
        return self.out(h.reshape((h.shape[0], -1)))


def small(backend: Any) -> Small:
    device = backend.default_device()
    backend.seed(0)
    return Small(
        nn.Conv2dConfig((3, 8), (3, 3), padding="same").init(device),
        nn.Conv2dConfig((8, 8), (3, 3), stride=(2, 2), groups=8).init(device),
        nn.LinearConfig(8 * 3 * 3, 5).init(device),
        nn.LinearConfig(5, 5).init(device),
    )


def batches(backend: Any, count: int = 4) -> list[Tensor]:
    gen = np.random.default_rng(1)
    return [Tensor.from_data(gen.standard_normal((6, 3, 8, 8)).astype(np.float32), backend=backend)
            for _ in range(count)]  # fmt: skip


@pytest.mark.parametrize("observer_kind", ["minmax", "moving-average", "percentile"])
@pytest.mark.parametrize("symmetric", [False, True], ids=["affine", "symmetric"])
def test_calibrated_model_is_close_to_float(observer_kind: str, symmetric: bool) -> None:
    B = nd()
    model = small(B)
    data = batches(B)
    qmodel = calibrate(model, data, observer_kind=observer_kind, symmetric=symmetric)
    assert isinstance(qmodel.conv, StaticQuantizedConv2d) and isinstance(
        qmodel.depthwise, StaticQuantizedConv2d
    )
    assert isinstance(qmodel.out, StaticQuantizedLinear)
    assert isinstance(qmodel.unused, QuantizedLinear)  # never reached: weights only
    assert isinstance(model.conv, nn.Conv2d)  # the float model is unchanged
    zp = int(qmodel.conv.input_zero_point.val().item())
    assert (zp == 0) if symmetric else (zp != 0)
    for x in data[:2]:
        ref = model(x).to_numpy()
        got = qmodel(x).to_numpy()
        assert np.abs(got - ref).max() < 0.05 * np.abs(ref).max()


def test_calibrated_params_are_the_observers() -> None:
    B = nd()
    model = small(B)
    data = batches(B)
    qmodel = calibrate(model, data)
    obs = MinMaxObserver()
    for x in data:
        obs.update(x)
    scale, zp = obs.qparams()
    assert qmodel.conv.input_scale.val().to_numpy().tolist() == scale.tolist()
    assert int(qmodel.conv.input_zero_point.val().item()) == int(zp[0])


def test_ndarray_kernels_match_the_dequantizing_default() -> None:
    """ndarray's integer kernels against the contract's default (dequantize + float conv, run on
    a backend without the override: fusion(ndarray) keeps ndarray's, so call the default)."""
    from burn.backend.ops.quantization import QuantizationOps

    B = nd()
    qmodel = calibrate(small(B), batches(B))
    x = batches(B, 1)[0].to_numpy()
    for layer in (qmodel.conv, qmodel.depthwise):
        args = [
            p.val().to_numpy()
            for p in (layer.values, layer.scales, layer.input_scale, layer.input_zero_point)
        ]
        args[1] = args[1].reshape(-1)
        bias = layer.bias.val().to_numpy()
        pad = layer.padding if isinstance(layer.padding[0], int) else (1, 1)
        default = QuantizationOps.static_quantized_conv2d(
            B, x, *args, bias, layer.stride, pad, layer.dilation, layer.groups
        )
        kernel = B.static_quantized_conv2d(x, *args, bias, layer.stride, pad, layer.dilation, layer.groups)
        np.testing.assert_allclose(kernel, default, rtol=1e-5, atol=1e-5 * np.abs(default).max())
        x = np.maximum(kernel, 0)


@pytest.mark.parametrize("name", ["autodiff(ndarray)", "opencl"])
def test_a_calibrated_model_runs_on_other_backends(name: str, tmp_path: Path) -> None:
    """A record calibrated on ndarray loads into the same model calibrated on another backend and
    gives ndarray's outputs there (opencl: through the dequantizing defaults)."""
    try:
        other = burn.backend(name)
    except Exception as exc:  # noqa: BLE001 - an unavailable backend (no OpenCL device) skips
        pytest.skip(f"{name}: {exc}")
    B = nd()
    qmodel = calibrate(small(B), batches(B))
    path = qmodel.save_file(tmp_path / "static")
    there = calibrate(small(other), batches(other, 1)).load_file(path, None, other.default_device())
    x = batches(B, 1)[0]
    got = there(Tensor.from_data(x.to_numpy(), backend=other)).to_numpy()
    np.testing.assert_allclose(got, qmodel(x).to_numpy(), rtol=1e-4, atol=1e-4)


def test_static_inference_under_autodiff_has_no_graph_and_uses_the_kernels() -> None:
    """Autodiff forwards the static ops to ndarray's integer kernels: no graph, ndarray's bits."""
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    ad = burn.backend("autodiff(ndarray)")
    qmodel = calibrate(small(ad), batches(ad))
    x = batches(ad, 1)[0].require_grad()
    y = qmodel(x)
    assert not y.is_require_grad()
    plain = calibrate(small(nd()), batches(nd()))
    np.testing.assert_array_equal(y.to_numpy(), plain(batches(nd(), 1)[0]).to_numpy())


def test_calibrated_records_load_bit_identical(tmp_path: Path) -> None:
    B = nd()
    model = small(B)
    qmodel = calibrate(model, batches(B))
    path = qmodel.save_file(tmp_path / "static")
    fresh = calibrate(small(B), batches(B, 1)[:1], observer_kind="percentile").load_file(path)
    for (name, a), (_, b) in zip(qmodel.named_params(), fresh.named_params(), strict=True):
        assert a.val().dtype == b.val().dtype, name
        np.testing.assert_array_equal(a.val().to_numpy(), b.val().to_numpy(), err_msg=name)
    assert qmodel.conv.values.val().dtype.name.lower() in ("int8", "i8")
    x = batches(B, 1)[0]
    np.testing.assert_array_equal(fresh(x).to_numpy(), qmodel(x).to_numpy())
    float_size = model.save_file(tmp_path / "float").stat().st_size
    assert path.stat().st_size < float_size  # int8 weights (the names weigh much in a model this small)


def test_calibrate_refuses_bad_requests() -> None:
    B = nd()
    model = small(B)
    with pytest.raises(ValueError, match="activations='static'"):
        calibrate(model, batches(B), "int8")
    with pytest.raises(ValueError, match="no batch was given"):
        calibrate(model, [])
    with pytest.raises(ValueError, match="use burn.quantization.calibrate"):
        quantize(model, "int8-static")
    with pytest.raises(ValueError, match="per tensor"):
        calibrate(model, batches(B), observer_kind=MinMaxObserver(axis=1))
    with pytest.raises(ValueError, match="unknown observer"):
        calibrate(model, batches(B), observer_kind="histogram")


def test_calibrate_takes_loader_batches_and_keeps_other_convs_weight_only() -> None:
    B = nd()
    device = B.default_device()
    conv1d = nn.Conv1dConfig(2, 4, 3).init(device)
    x = Tensor.from_data(np.ones((2, 2, 5), np.float32), backend=B)
    q = calibrate(conv1d, [(x, None)])
    assert isinstance(q, QuantizedConv)
    np.testing.assert_allclose(q(x).to_numpy(), conv1d(x).to_numpy(), atol=0.05)


# -- accuracy on a trained model -----------------------------------------------------------------
def _digits() -> Any:
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (the digits data)")
    path = EXAMPLES / "digits.py"
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    spec = importlib.util.spec_from_file_location("digits_example_static", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_trained_digits_cnn_quantized_within_one_percent(tmp_path: Path) -> None:
    """The digits CNN trained for 2 epochs (two convs and a Linear), quantized statically
    (calibrated on 512 training images) and dynamically: test accuracy within 1 % of float32."""
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed (training)")
    digits = _digits()
    digits.train(tmp_path, model="cnn", epochs=2, progress="none", plot=False)
    model = digits.reload(tmp_path)
    data = digits.load_digits(0)
    float_accuracy = digits.accuracy(model, data.x_test, data.y_test)
    assert float_accuracy > 0.85  # trained: the comparison means something
    B = nd()
    sample = [Tensor.from_data(data.x_train[i : i + 128], backend=B) for i in range(0, 512, 128)]
    static = calibrate(model, sample)
    assert isinstance(static.conv1, StaticQuantizedConv2d) and isinstance(static.out, StaticQuantizedLinear)
    for qmodel in (static, quantize(model, "int8")):
        accuracy = digits.accuracy(qmodel, data.x_test, data.y_test)
        assert abs(accuracy - float_accuracy) <= 0.01, (type(qmodel.conv1).__name__, accuracy, float_accuracy)
    # the example's flag: --quantize int8-static calibrates, saves and reports the same way
    assert digits.parse_args(["--quantize", "int8-static"]).quantize == "int8-static"
    reported = digits.report_quantized(model, "int8-static", tmp_path, data, float_accuracy)
    assert abs(reported - float_accuracy) <= 0.01
    assert (tmp_path / f"{digits.MODEL_FILE}-int8-static.mpk").exists()
