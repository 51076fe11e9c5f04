"""burn.quantization on modules: `quantize(model, scheme)` for each named scheme, the quantized
layers' outputs against the float model and a NumPy emulation, QAT's straight-through gradient,
the schemes' validation, and records: the file sizes (int8 ~4x smaller, int4 per block <= 0.3x)
and bit-identical loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

import burn  # noqa: E402
from burn import Tensor, nn  # noqa: E402
from burn.module import Module  # noqa: E402
from burn.quantization import (  # noqa: E402
    QuantizedConv,
    QuantizedEmbedding,
    QuantizedLinear,
    QuantScheme,
    fake_quantize,
    quantize,
)
from burn.record import RecordError  # noqa: E402


class Net(Module):
    emb: nn.Embedding
    layers: list[nn.Linear]

    def forward(self, tokens: Tensor) -> Tensor:
        h = self.emb(tokens)
        for layer in self.layers:
            h = layer(h)
        return h


def net(backend: Any, d: int = 64) -> Net:
    device = backend.default_device()
    return Net(
        nn.EmbeddingConfig(100, d).init(device), [nn.LinearConfig(d, d).init(device) for _ in range(3)]
    )


def tokens(backend: Any) -> Tensor:
    return Tensor.from_data(np.array([[1, 5, 99], [0, 42, 7]]), backend=backend)


@pytest.mark.parametrize("name", ["ndarray", "autodiff(ndarray)"])
@pytest.mark.parametrize(("scheme", "error"), [("int8", 0.02), ("int8-weight", 0.02), ("int4-weight", 0.3)])
def test_quantized_model_is_close_to_float(name: str, scheme: str, error: float) -> None:
    backend = burn.backend(name)
    model = net(backend)
    qmodel = quantize(model, scheme)
    assert isinstance(qmodel.emb, QuantizedEmbedding)
    assert all(isinstance(layer, QuantizedLinear) for layer in qmodel.layers)
    assert isinstance(model.layers[0], nn.Linear)  # the float model is left as it was
    ref = model(tokens(backend)).to_numpy()
    got = qmodel(tokens(backend)).to_numpy()
    rel = np.abs(got - ref).max() / np.abs(ref).max()
    assert rel < error, f"{scheme}: relative error {rel}"


@pytest.mark.parametrize(
    ("config", "shape"),
    [
        (lambda: nn.Conv2dConfig((3, 8), (3, 3), padding=(1, 1)), (2, 3, 9, 9)),
        (lambda: nn.Conv1dConfig(4, 6, 5, stride=2), (2, 4, 20)),
        (lambda: nn.ConvTranspose2dConfig((4, 2), (3, 3), stride=(2, 2)), (1, 4, 5, 5)),
    ],
    ids=["conv2d", "conv1d", "conv_transpose2d"],
)
@pytest.mark.parametrize(("scheme", "error"), [("int8", 0.02), ("int4-weight", 0.3)])
def test_quantized_convolutions_are_close_to_float(
    config: Any, shape: Any, scheme: str, error: float
) -> None:
    backend = burn.backend("ndarray")
    conv = config().init(backend.default_device())
    q = quantize(conv, scheme)
    assert isinstance(q, QuantizedConv) and q.shape == conv.weight.shape
    x = Tensor.from_data(np.random.default_rng(6).standard_normal(shape).astype(np.float32), backend=backend)
    ref, got = conv(x).to_numpy(), q(x).to_numpy()
    assert got.shape == ref.shape
    assert np.abs(got - ref).max() / np.abs(ref).max() < error


def test_int8_linear_matches_numpy_emulation() -> None:
    """The dynamic int8 Linear is the integer product of NumPy's quantized operands, scaled."""
    backend = burn.backend("ndarray")
    layer = nn.LinearConfig(48, 16).init(backend.default_device())
    q = quantize(layer, "int8")
    x = np.random.default_rng(1).standard_normal((5, 48)).astype(np.float32)
    got = q(Tensor.from_data(x, backend=backend)).to_numpy()
    w = layer.weight.val().to_numpy().T  # [out, in]
    w_scale = (np.abs(w).max(axis=1) / np.float32(127)).astype(np.float32)
    wq = np.clip(np.rint(w / w_scale[:, None]), -127, 127)
    np.testing.assert_array_equal(q.values.val().to_numpy(), wq.astype(np.int8))
    x_scale = (np.abs(x).max(axis=1, keepdims=True) / np.float32(127)).astype(np.float32)
    xq = np.clip(np.rint(x / x_scale), -127, 127)
    expected = (xq.astype(np.int64) @ wq.T.astype(np.int64)) * x_scale * w_scale + layer.bias.val().to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_quantized_inference_under_autodiff_has_no_graph() -> None:
    backend = burn.backend("autodiff(ndarray)")
    q = quantize(nn.LinearConfig(8, 4).init(backend.default_device()), "int8")
    x = Tensor.ones((2, 8), backend=backend).require_grad()
    y = q(x)
    assert not y.is_require_grad()  # declared grad=False: no graph through integer kernels


def test_fake_quantize_passes_the_gradient_straight_through() -> None:
    backend = burn.backend("autodiff(ndarray)")
    data = np.random.default_rng(2).standard_normal((4, 32)).astype(np.float32)
    x = Tensor.from_data(data, backend=backend).require_grad()
    y = fake_quantize(x, "int4-weight")
    expected = quantize(Tensor.from_data(data, backend=backend), "int4-weight").dequantize().to_numpy()
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=0, atol=1e-6)
    grads = (y * y).sum().backward()
    np.testing.assert_allclose(x.grad(grads).to_numpy(), 2 * y.to_numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: QuantScheme("int2"), "value must be one of"),  # type: ignore[arg-type]
        (lambda: QuantScheme("uint4", mode="symmetric"), "uint4 has no symmetric range"),
        (lambda: QuantScheme("int8", "block", block_size=7), "block_size must be an even number"),
        (lambda: QuantScheme("int4", activations="dynamic"), "dynamic activation quantization"),
        (lambda: QuantScheme.parse("int3"), "unknown quantization scheme 'int3'"),
    ],
)
def test_bad_schemes_are_refused(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_tensors_are_refused() -> None:
    backend = burn.backend("ndarray")
    with pytest.raises(ValueError, match="NaN or infinite"):
        quantize(Tensor.from_data([1.0, float("nan")], backend=backend), "int8-weight")
    with pytest.raises(TypeError, match="expected a Module or a Float Tensor"):
        quantize([1.0], "int8")  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "scheme", ["int4-weight", QuantScheme("int4", "channel"), QuantScheme("int8", "block")]
)
def test_a_last_dim_of_partial_blocks_is_padded(scheme: Any) -> None:
    """40 values: a block of 32 and one of 8 (padded with zeros, which change no scale); 4-bit
    per channel: an odd dim padded to a pair."""
    backend = burn.backend("ndarray")
    data = (
        np.random.default_rng(5)
        .standard_normal((3, 41 if scheme != "int4-weight" else 40))
        .astype(np.float32)
    )
    q = quantize(Tensor.from_data(data, backend=backend), scheme)
    assert q.shape == data.shape
    got = q.dequantize().to_numpy()
    assert got.shape == data.shape
    parsed = QuantScheme.parse(scheme)
    if parsed.level == "block":  # the partial block's scale is its own values' max / qmax
        tail = data[:, 32:]
        expected_scale = np.abs(tail).max(axis=1) / parsed.range()[1]
        np.testing.assert_allclose(q.scales.to_numpy()[:, 1, 0], expected_scale, rtol=1e-6)
    step = np.abs(data).max() / parsed.range()[1]
    assert np.all(np.abs(got - data) <= step / 2 + 1e-6)


def test_zeros_quantize_to_exact_zeros() -> None:
    backend = burn.backend("ndarray")
    for scheme in ("int8", "int4-weight", QuantScheme("uint4", "channel", "affine")):
        q = quantize(Tensor.zeros((4, 64), backend=backend), scheme)
        assert np.array_equal(q.dequantize().to_numpy(), np.zeros((4, 64), np.float32))


@pytest.mark.parametrize(("scheme", "ratio"), [("int8", 0.27), ("int4-weight", 0.3)])
def test_quantized_records_are_small_and_load_bit_identical(
    tmp_path: Path, scheme: str, ratio: float
) -> None:
    backend = burn.backend("ndarray")
    model = net(backend, d=256)
    float_size = model.save_file(tmp_path / "float").stat().st_size
    qmodel = quantize(model, scheme)
    path = qmodel.save_file(tmp_path / scheme)
    assert path.stat().st_size <= ratio * float_size, (path.stat().st_size, float_size)
    loaded = quantize(net(backend, d=256), scheme).load_file(path)
    for (name, a), (_, b) in zip(qmodel.named_params(), loaded.named_params(), strict=True):
        assert a.val().dtype is b.val().dtype, name
        assert np.array_equal(a.val().to_numpy(), b.val().to_numpy()), name
        assert a.id == b.id
    np.testing.assert_array_equal(loaded(tokens(backend)).to_numpy(), qmodel(tokens(backend)).to_numpy())


def test_loading_a_quantized_record_into_a_float_model_names_the_fix(tmp_path: Path) -> None:
    backend = burn.backend("ndarray")
    path = quantize(net(backend), "int8").save_file(tmp_path / "q")
    with pytest.raises(RecordError, match="load it into burn.quantization.quantize"):
        net(backend).load_file(path)


@pytest.mark.parametrize("name", ["opencl", "fusion(opencl)", "autodiff(opencl)"])
def test_quantized_model_runs_on_other_backends_through_the_defaults(name: str) -> None:
    """Backends without integer kernels run the contract's default quantization ops."""
    from burn.errors import BackendNotFoundError, BackendUnavailableError

    try:
        backend = burn.backend(name)
    except (BackendNotFoundError, BackendUnavailableError) as exc:
        pytest.skip(f"{name}: {exc}")
    model = net(backend)
    ref = model(tokens(backend)).to_numpy()
    for scheme, error in (("int8", 0.02), ("int4-weight", 0.3)):
        got = quantize(model, scheme)(tokens(backend)).to_numpy()
        assert np.abs(got - ref).max() / np.abs(ref).max() < error, scheme
