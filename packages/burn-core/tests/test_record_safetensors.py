"""The hand-written safetensors reader against the ``safetensors`` library as the reference:
every dtype the library writes loads here, and any file the library accepts (bit flips and
truncations of valid files included) loads here with the same tensors, while a file it refuses
raises nothing but `RecordError` here. Also: a PyTorch state dict loaded into the real
`burn.nn` layers computes what PyTorch computes."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from burn import record
from burn.record import ModuleRecord, RecordError

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")

RNG = np.random.default_rng(0)
ARRAYS = {
    "f64": RNG.standard_normal((2, 3)),
    "f32": RNG.standard_normal(4).astype(np.float32),
    "f16": RNG.standard_normal((3, 1)).astype(np.float16),
    "bf16": RNG.standard_normal(3).astype(ml_dtypes.bfloat16),
    "i64": RNG.integers(-(2**40), 2**40, size=3),
    "i32": RNG.integers(-9, 9, size=(2, 2)).astype(np.int32),
    "i16": np.array([-3, 7], dtype=np.int16),
    "i8": np.array([-128, 0, 127], dtype=np.int8),
    "u8": np.array([0, 255], dtype=np.uint8),
    "bool": np.array([True, False, True]),
    "scalar": np.array(2.5, dtype=np.float32),
    "empty": np.zeros((0, 4), dtype=np.float32),
}
VALID = safetensors_numpy.save(ARRAYS, metadata={"format": "np"})


def _ours(data: bytes) -> dict[str, np.ndarray]:
    rec = record.SafetensorsFileRecorder().load(data)
    assert isinstance(rec, ModuleRecord)
    return {key: np.asarray(param.tensor.array) for key, param in rec.items()}


def _assert_same(ours: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> None:
    assert sorted(ours) == sorted(reference)
    for key, expected in reference.items():
        assert ours[key].dtype == expected.dtype, key
        assert ours[key].shape == expected.shape, key
        np.testing.assert_array_equal(ours[key], expected, err_msg=key)


def test_every_dtype_the_library_writes_loads_here() -> None:
    _assert_same(_ours(VALID), ARRAYS)


def _agree(data: bytes) -> None:
    """The library accepts `data` -> we load the same tensors; it refuses -> only RecordError here."""
    try:
        reference = safetensors_numpy.load(data)
    except Exception:  # noqa: BLE001 - the library's refusal, whatever its type
        reference = None
    try:
        ours = _ours(data)
    except RecordError as err:
        assert reference is None, f"the library accepts what we refuse: {err}"
        return
    if reference is not None:
        _assert_same(ours, reference)


FUZZ = settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(st.lists(st.integers(0, len(VALID) * 8 - 1), min_size=1, max_size=3))
def test_bit_flips_agree_with_the_library(bits: list[int]) -> None:
    data = bytearray(VALID)
    for bit in bits:
        data[bit // 8] ^= 1 << (bit % 8)
    _agree(bytes(data))


@FUZZ
@given(st.integers(0, len(VALID) - 1))
def test_truncations_agree_with_the_library(cut: int) -> None:
    _agree(VALID[:cut])


def test_library_written_files_with_our_extension_load_as_foreign_records(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "weights.safetensors"
    safetensors_numpy.save_file(ARRAYS, str(path))
    meta, rec = record.SafetensorsFileRecorder().load_with_metadata(tmp_path / "weights")
    assert meta is None  # no burn metadata: a foreign file
    _assert_same({k: np.asarray(p.tensor.array) for k, p in rec.items()}, ARRAYS)


def test_pytorch_state_dict_into_burn_nn_layers(tmp_path) -> None:  # noqa: ANN001
    torch = pytest.importorskip("torch", reason="torch is not installed")
    nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
    from safetensors.torch import save_file

    from burn import Module, Tensor, nn

    torch.manual_seed(0)
    reference = torch.nn.ModuleDict(
        {"fc": torch.nn.Linear(4, 6), "bn": torch.nn.BatchNorm1d(6), "ln": torch.nn.LayerNorm(6)}
    )
    with torch.no_grad():
        for _ in range(3):  # move the running stats off their defaults
            reference["bn"](reference["fc"](torch.randn(16, 4) * 2 + 1))
        reference["ln"].weight.mul_(1.5)
        reference["ln"].bias.add_(0.25)
    reference.eval()
    save_file(
        {"encoder." + k: v.contiguous() for k, v in reference.state_dict().items()},
        str(tmp_path / "m.safetensors"),
    )

    class Net(Module):
        fc: nn.Linear
        bn: nn.BatchNorm
        ln: nn.LayerNorm

    B = nd.NdArray()  # noqa: N806
    device = B.default_device()
    net = Net(
        nn.LinearConfig(4, 6).init(device),
        nn.BatchNormConfig(6).init(device),
        nn.LayerNormConfig(6).init(device),
    )
    loaded = record.load_pytorch_safetensors(tmp_path / "m.safetensors", net, key_remap=[(r"^encoder\.", "")])
    np.testing.assert_array_equal(
        loaded.fc.weight.val().to_numpy(), reference["fc"].weight.detach().numpy().T
    )
    np.testing.assert_array_equal(loaded.bn.gamma.val().to_numpy(), reference["bn"].weight.detach().numpy())
    np.testing.assert_array_equal(loaded.bn.running_var.val().to_numpy(), reference["bn"].running_var.numpy())
    np.testing.assert_array_equal(loaded.ln.beta.val().to_numpy(), reference["ln"].bias.detach().numpy())
    assert [str(p.id) for _, p in loaded.named_params()] == [str(p.id) for _, p in net.named_params()]

    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    with torch.no_grad():
        expected = reference["ln"](reference["bn"](reference["fc"](torch.from_numpy(x)))).numpy()
    h = loaded.fc(Tensor.from_data(x, backend=B))
    h = loaded.bn(h.reshape((5, 6, 1))).reshape((5, 6))  # burn's BatchNorm takes [batch, channels, ...]
    np.testing.assert_allclose(loaded.ln(h).to_numpy(), expected, rtol=1e-4, atol=1e-5)
