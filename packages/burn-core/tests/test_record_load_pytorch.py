"""`burn.record.load_pytorch`: ``torch.save`` checkpoints (zip and legacy) read without torch and
without running code from them.

Tests that make their files with ``torch.save`` need torch; the others write checkpoints by hand
(a zip of a hand-assembled pickle and raw storages, `write_pt`), so the refusal of hostile
pickles and the fuzzing run without torch. Models built in torch are compared with their burn
twins in float64 (within 1e-6).
"""

from __future__ import annotations

import pickle
import random
import re
import struct
import subprocess
import sys
import types
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _torch_reference import cnn, needs_torch, tensor, torch, torch_cnn

import burn
from burn import nn
from burn.record import RecordError, load_pytorch
from burn.record.pytorch_pickle import Checkpoint, TorchTensor, open_checkpoint

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

TOL = 1e-6


@pytest.fixture(scope="module")
def dev():
    return nd.NdArray(float_dtype="float64").default_device()


@pytest.fixture(scope="module")
def dev32():
    return nd.NdArray().default_device()


def close(actual, expected, tol=TOL):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol)


# -- a torch-free writer of torch.save files --------------------------------------------------------
class Global:
    """A global the pickle names (pushed, not called)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name


class Call:
    """``module.name(*args)`` in the pickle (GLOBAL + args + REDUCE)."""

    def __init__(self, module: str, name: str, *args: Any) -> None:
        self.target, self.args = Global(module, name), args


class Raw:
    """Opcodes written as they are."""

    def __init__(self, code: bytes) -> None:
        self.code = code


class Pid:
    """A persistent id (BINPERSID)."""

    def __init__(self, value: tuple) -> None:
        self.value = value


_STORAGE_NAMES = {
    "float64": "DoubleStorage",
    "float32": "FloatStorage",
    "float16": "HalfStorage",
    "int64": "LongStorage",
    "int32": "IntStorage",
    "int16": "ShortStorage",
    "int8": "CharStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
}


def tensor_call(key: str, dtype: str, numel: int, shape, stride=None, offset=0) -> Call:
    """PyTorch's pickle of a tensor: ``_rebuild_tensor_v2(storage pid, offset, size, stride, ...)``."""
    if stride is None:
        stride, step = [], 1
        for d in reversed(shape):
            stride.insert(0, step)
            step *= d
    storage = Pid(("storage", Global("torch", _STORAGE_NAMES[dtype]), key, "cpu", numel))
    hooks = Call("collections", "OrderedDict")
    return Call(
        "torch._utils", "_rebuild_tensor_v2", storage, offset, tuple(shape), tuple(stride), False, hooks
    )


def emit(obj: Any, out: bytearray) -> None:
    """Protocol-2 pickle opcodes for `obj` (no memo: every value is written where it is used)."""
    if obj is None:
        out += b"N"
    elif obj is True or obj is False:
        out += b"\x88" if obj else b"\x89"
    elif isinstance(obj, int):
        if -(2**31) <= obj < 2**31:
            out += b"J" + struct.pack("<i", obj)
        else:
            raw = obj.to_bytes((obj.bit_length() + 8) // 8, "little", signed=True)
            out += b"\x8a" + bytes([len(raw)]) + raw
    elif isinstance(obj, float):
        out += b"G" + struct.pack(">d", obj)
    elif isinstance(obj, str):
        raw = obj.encode()
        out += b"X" + struct.pack("<I", len(raw)) + raw
    elif isinstance(obj, tuple):
        out += b"("
        for item in obj:
            emit(item, out)
        out += b"t"
    elif isinstance(obj, list):
        out += b"]("
        for item in obj:
            emit(item, out)
        out += b"e"
    elif isinstance(obj, dict):
        out += b"}("
        for k, v in obj.items():
            emit(k, out)
            emit(v, out)
        out += b"u"
    elif isinstance(obj, Global):
        out += f"c{obj.module}\n{obj.name}\n".encode()
    elif isinstance(obj, Call):
        emit(obj.target, out)
        emit(tuple(obj.args), out)
        out += b"R"
    elif isinstance(obj, Pid):
        emit(obj.value, out)
        out += b"Q"
    elif isinstance(obj, Raw):
        out += obj.code
    else:  # pragma: no cover - test helper misuse
        raise TypeError(type(obj))


def dumps(obj: Any) -> bytes:
    out = bytearray(b"\x80\x02")
    emit(obj, out)
    return bytes(out + b".")


def write_pt(
    path: Path, pkl: bytes, storages: dict[str, bytes], *, prefix: str = "archive", **extra: bytes
) -> Path:
    """A zip checkpoint laid out as torch.save lays it out (stored, not compressed)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{prefix}/data.pkl", pkl)
        z.writestr(f"{prefix}/byteorder", extra.pop("byteorder", b"little"))
        for key, raw in storages.items():
            z.writestr(f"{prefix}/data/{key}", raw)
        z.writestr(f"{prefix}/version", b"3\n")
        for name, raw in extra.items():
            z.writestr(f"{prefix}/{name}", raw)
    return path


def state_pt(path: Path, arrays: dict[str, np.ndarray], wrap=None) -> Path:
    """A checkpoint of the state dict `arrays` (``wrap(state)`` picks what is saved around it)."""
    state, storages = {}, {}
    for i, (name, array) in enumerate(arrays.items()):
        array = np.ascontiguousarray(array)
        state[name] = tensor_call(str(i), array.dtype.name, array.size, array.shape)
        storages[str(i)] = array.astype(array.dtype.newbyteorder("<")).tobytes()
    return write_pt(path, dumps(wrap(state) if wrap else state), storages)


def linear_arrays(seed=0, d_in=3, d_out=2) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"weight": rng.standard_normal((d_out, d_in)), "bias": rng.standard_normal(d_out)}


# -- models built in torch load and compute the same (float64) ---------------------------------------
def perturb(model, seed=0):
    """Every param and buffer drawn afresh (norms and running stats included)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.5)
        for name, b in model.named_buffers():
            if "running_var" in name:
                b.copy_(torch.rand(b.shape, generator=gen, dtype=b.dtype) + 0.5)
            elif "running_mean" in name:
                b.copy_(torch.randn(b.shape, generator=gen, dtype=b.dtype))
    return model.eval()


class BurnMlp(burn.Module):
    fc1: nn.Linear
    norm: nn.LayerNorm
    fc2: nn.Linear

    def forward(self, x):
        return self.fc2(self.norm(burn.activation.relu(self.fc1(x))))


@needs_torch
def test_mlp_state_dict_loads_and_matches_torch(dev, tmp_path):
    class TorchMlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(4, 8, dtype=torch.float64)
            self.norm = torch.nn.LayerNorm(8, dtype=torch.float64)
            self.fc2 = torch.nn.Linear(8, 3, dtype=torch.float64)

        def forward(self, x):
            return self.fc2(self.norm(torch.relu(self.fc1(x))))

    ref = perturb(TorchMlp())
    torch.save(ref.state_dict(), tmp_path / "mlp.pt")
    model = load_pytorch(
        tmp_path / "mlp.pt",
        BurnMlp(
            nn.LinearConfig(4, 8).init(dev), nn.LayerNormConfig(8).init(dev), nn.LinearConfig(8, 3).init(dev)
        ),
    )
    x = np.random.default_rng(1).standard_normal((5, 4))
    with torch.no_grad():
        want = ref(torch.from_numpy(x)).numpy()
    close(model(tensor(dev, x)).to_numpy(), want)
    assert model.fc1.weight.val().dtype == burn.float64


@needs_torch
def test_cnn_with_batchnorm_loads_and_matches_torch(dev, tmp_path):
    ref = perturb(torch_cnn(torch.float64))
    torch.save(ref.state_dict(), tmp_path / "cnn.pth")
    model = load_pytorch(tmp_path / "cnn.pth", cnn(dev))
    x = np.random.default_rng(2).standard_normal((3, 2, 6, 6))
    with torch.no_grad():
        want = ref(torch.from_numpy(x)).numpy()
    close(model(tensor(dev, x)).to_numpy(), want)
    close(model.bn.running_var.val().to_numpy(), ref.bn.running_var.numpy())


@needs_torch
def test_lstm_and_transformer_encoder_load_through_the_adapters(dev, tmp_path):
    lstm_ref = perturb(
        torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True, dtype=torch.float64)
    )
    torch.save(lstm_ref.state_dict(), tmp_path / "lstm.pt")
    lstm = load_pytorch(tmp_path / "lstm.pt", nn.StackedLstmConfig(3, 4, 2, bidirectional=True).init(dev))
    x = np.random.default_rng(3).standard_normal((2, 5, 3))
    with torch.no_grad():
        want, (h_n, c_n) = lstm_ref(torch.from_numpy(x))
    out, state = lstm(tensor(dev, x))
    close(out.to_numpy(), want.numpy())
    close(state.cell.to_numpy(), c_n.numpy())

    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True, dtype=torch.float64)
    enc_ref = perturb(torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False))
    torch.save(enc_ref.state_dict(), tmp_path / "encoder.pt")
    cfg = nn.TransformerEncoderConfig(8, 16, 2, 2, norm_first=True, activation="relu")
    enc = load_pytorch(tmp_path / "encoder.pt", cfg.init(dev))
    x = np.random.default_rng(4).standard_normal((2, 5, 8))
    with torch.no_grad():
        want = enc_ref(torch.from_numpy(x)).numpy()
    close(enc(tensor(dev, x)).to_numpy(), want)


@needs_torch
def test_legacy_format_loads_like_the_zip_format(dev, tmp_path):
    ref = perturb(torch.nn.Linear(3, 2, dtype=torch.float64))
    torch.save(ref.state_dict(), tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with open_checkpoint(tmp_path / "legacy.pt") as ckpt:
        assert ckpt.format == "legacy"
    model = load_pytorch(tmp_path / "legacy.pt", nn.LinearConfig(3, 2).init(dev))
    close(model.weight.val().to_numpy(), ref.weight.detach().numpy().T, 0)
    close(model.bias.val().to_numpy(), ref.bias.detach().numpy(), 0)


@needs_torch
@pytest.mark.parametrize("legacy", [False, True])
def test_dtypes_and_views_are_read_exactly(tmp_path, legacy):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 7
    saved = {
        "f16": torch.randn(3, 5).half(),
        "bf16": torch.randn(2, 7).bfloat16(),
        "f64": torch.randn(4, dtype=torch.float64),
        "i64": torch.arange(-3, 9),
        "i32": torch.arange(5, dtype=torch.int32),
        "u8": torch.arange(250, 256, dtype=torch.uint8),
        "bool": torch.tensor([[True, False], [False, True]]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        # views of one storage: an offset slice, a transpose, a strided column, a broadcast
        "base": base,
        "rows": base[1:3],
        "t": base.t(),
        "col": base[:, 4],
        "expand": base[2:3, :2].expand(3, 2),
        "param": torch.nn.Parameter(torch.ones(2)),
    }
    path = tmp_path / "dtypes.pt"
    torch.save(saved, path, _use_new_zipfile_serialization=not legacy)
    with open_checkpoint(path) as ckpt:
        state = ckpt.state_dict()
        assert set(state) == set(saved)
        for key, value in saved.items():
            got = state[key].read()
            want = value.detach()
            if want.dtype == torch.bfloat16:
                assert got.dtype == burn.bfloat16
                want, got_array = want.float().numpy(), got.array.astype(np.float32)
            else:
                want, got_array = want.numpy(), got.array
                assert got_array.dtype == want.dtype
            assert got_array.shape == want.shape and got.array.flags.c_contiguous
            np.testing.assert_array_equal(got_array, want, err_msg=key)
        # views share one storage record: each reads only its own span of it
        assert state["rows"].storage.key == state["base"].storage.key == state["t"].storage.key


@needs_torch
def test_half_and_bfloat16_checkpoints_convert_to_the_module_dtype(dev32, tmp_path):
    ref = perturb(torch.nn.Linear(3, 2))
    for dtype in (torch.float16, torch.bfloat16):
        torch.save({k: v.to(dtype) for k, v in ref.state_dict().items()}, tmp_path / "half.pt")
        model = load_pytorch(tmp_path / "half.pt", nn.LinearConfig(3, 2).init(dev32))
        assert model.weight.val().dtype == burn.float32
        np.testing.assert_array_equal(
            model.weight.val().to_numpy(), ref.weight.detach().to(dtype).float().numpy().T
        )


# -- nested checkpoints: selecting the state dict ------------------------------------------------------
@needs_torch
def test_nested_checkpoint_state_dict_is_selected(dev, tmp_path):
    ref = perturb(torch.nn.Linear(3, 2, dtype=torch.float64))
    other = perturb(torch.nn.Linear(3, 2, dtype=torch.float64), seed=5)
    # What torch.optim.Adam(...).state_dict() holds (without importing torch.optim: slow to start).
    optimizer = {
        "state": {
            i: {"step": torch.tensor(1.0), "exp_avg": torch.zeros_like(p)}
            for i, p in enumerate(ref.parameters())
        },
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1]}],
    }
    torch.save({"model": ref.state_dict(), "optimizer": optimizer, "epoch": 3}, tmp_path / "ckpt.pt")

    # The one state dict at the top level is found; key= names it too.
    for key in (None, "model", ["model"]):
        model = load_pytorch(tmp_path / "ckpt.pt", nn.LinearConfig(3, 2).init(dev), key=key)
        close(model.weight.val().to_numpy(), ref.weight.detach().numpy().T, 0)
    with pytest.raises(
        RecordError, match=r"ckpt\.pt: no key 'net' in the checkpoint: 'model' \(a state dict of 2"
    ):
        load_pytorch(tmp_path / "ckpt.pt", nn.LinearConfig(3, 2).init(dev), key="net")
    with pytest.raises(
        RecordError, match=r"key 'optimizer' holds a dict .*not a state dict|'state' \(a dict"
    ):
        load_pytorch(tmp_path / "ckpt.pt", nn.LinearConfig(3, 2).init(dev), key="optimizer")

    # Two state dicts: ambiguous, the error lists the top-level keys; key= picks, also nested.
    torch.save(
        {"model": ref.state_dict(), "ema": {"inner": other.state_dict()}, "best": other.state_dict()},
        tmp_path / "two.pt",
    )
    with pytest.raises(
        RecordError, match=r"several state dicts: pass key= one of 'model' .*'ema' \(a dict.*'best'"
    ):
        load_pytorch(tmp_path / "two.pt", nn.LinearConfig(3, 2).init(dev))
    model = load_pytorch(tmp_path / "two.pt", nn.LinearConfig(3, 2).init(dev), key=("ema", "inner"))
    close(model.weight.val().to_numpy(), other.weight.detach().numpy().T, 0)


def test_checkpoint_without_a_state_dict_is_refused(dev, tmp_path):
    path = state_pt(tmp_path / "list.pt", linear_arrays(), wrap=lambda s: [s])
    with pytest.raises(
        RecordError, match=r"list\.pt: the checkpoint holds a list of 1 items, not a state dict"
    ):
        load_pytorch(path, nn.LinearConfig(3, 2).init(dev))
    path = state_pt(tmp_path / "mixed.pt", linear_arrays(), wrap=lambda s: {**s, "step": 4})
    with pytest.raises(
        RecordError, match=r"no state dict of tensors at its top level: pass key= one of 'weight' "
    ):
        load_pytorch(path, nn.LinearConfig(3, 2).init(dev))
    with pytest.raises(RecordError, match=r"key 'x' holds values that are not tensors: 'step' \(a int\)"):
        load_pytorch(
            state_pt(tmp_path / "m2.pt", linear_arrays(), wrap=lambda s: {"x": {**s, "step": 4}}),
            nn.LinearConfig(3, 2).init(dev),
            key="x",
        )


# -- the same mapping as the safetensors path ---------------------------------------------------------
def test_options_are_those_of_the_safetensors_loader(dev, tmp_path):
    arrays = linear_arrays()
    path = state_pt(
        tmp_path / "prefixed.pt", {f"encoder.{k}": v for k, v in arrays.items()} | {"extra": np.ones(2)}
    )
    with pytest.raises(RecordError, match=r"missing keys.*PyTorch keys looked up: weight <- weight"):
        load_pytorch(path, nn.LinearConfig(3, 2).init(dev))
    with pytest.raises(RecordError, match=r"prefixed\.pt: .*unexpected keys.*extra"):
        load_pytorch(path, nn.LinearConfig(3, 2).init(dev), key_remap=[(r"^encoder\.", "")])
    model = load_pytorch(path, nn.LinearConfig(3, 2).init(dev), key_remap=[(r"^encoder\.", "")], strict=False)
    close(model.weight.val().to_numpy(), arrays["weight"].T, 0)
    remap = [(r"^encoder\.", "")]
    plain = load_pytorch(
        path,
        nn.LinearConfig(2, 3).init(dev),
        key_remap=remap,
        strict=False,
        allow_partial=True,
        transpose_linear=False,
    )
    close(plain.weight.val().to_numpy(), arrays["weight"], 0)  # not transposed: [2, 3] as in the file
    with pytest.raises(
        RecordError,
        match=r"prefixed\.pt: .*mismatches: weight: record shape \[3, 2\] vs module shape \[2, 3\]",
    ):
        load_pytorch(path, nn.LinearConfig(2, 3).init(dev), key_remap=remap, strict=False)
    renamed = load_pytorch(
        path,
        BurnMlp(
            nn.LinearConfig(3, 2).init(dev), nn.LayerNormConfig(2).init(dev), nn.LinearConfig(2, 2).init(dev)
        ),
        key_remap=[(r"^encoder\.", "fc1.")],
        layer_fields={"LayerNorm": {"gamma": "scale"}},
        strict=False,
        allow_partial=True,
    )
    close(renamed.fc1.weight.val().to_numpy(), arrays["weight"].T, 0)


def test_tensors_are_read_one_at_a_time_and_only_when_loaded(dev, tmp_path, monkeypatch):
    arrays = {**linear_arrays(), "unused.big": np.zeros((64, 64))}
    path = state_pt(tmp_path / "lazy.pt", arrays)
    reads: list[int] = []
    original = Checkpoint._read_bytes

    def counting(self, storage, begin, end):
        reads.append(end - begin)
        return original(self, storage, begin, end)

    monkeypatch.setattr(Checkpoint, "_read_bytes", counting)
    with open_checkpoint(path) as ckpt:
        state = ckpt.state_dict()
        assert reads == [] and isinstance(state["weight"], TorchTensor)
    calls: list = []

    def lazy_linear():
        module = nn.LinearConfig(3, 2).init(dev)
        return module.map(
            lambda path, p: burn.module.Param.uninitialized(lambda d, g: calls.append(path), p.shape, dev)
        )

    model = load_pytorch(path, lazy_linear(), strict=False)
    assert calls == []  # no initializer ran
    assert sorted(reads) == [2 * 8, 6 * 8]  # the unexpected 32 KiB tensor was never read
    close(model.bias.val().to_numpy(), arrays["bias"], 0)


def test_loading_never_imports_torch(tmp_path):
    path = state_pt(tmp_path / "w.pt", linear_arrays())
    code = (
        "import sys, burn\nfrom burn import nn\nfrom burn.record import load_pytorch\n"
        "dev = burn.backend('ndarray').default_device()\n"
        f"m = load_pytorch({str(path)!r}, nn.LinearConfig(3, 2).init(dev))\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\nprint(m.weight.shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "(3, 2)" in done.stdout


# -- hostile pickles: refused before anything runs ----------------------------------------------------
def _payloads(module: str, name: str, arg: str) -> dict[str, bytes]:
    """The opcodes of ``module.name(arg)``, spelled with each opcode that names a global."""
    raw_arg = arg.encode()
    text = b"X" + struct.pack("<I", len(raw_arg)) + raw_arg
    glob = f"c{module}\n{name}\n".encode()

    def short(s: str) -> bytes:
        return b"\x8c" + bytes([len(s)]) + s.encode()

    return {
        "GLOBAL": glob + b"(" + text + b"tR",
        "GLOBAL_memo": glob + b"q\x000h\x00(" + text + b"tR",  # BINPUT, POP, BINGET, then REDUCE
        "STACK_GLOBAL": short(module) + short(name) + b"\x93(" + text + b"tR",
        "INST": b"(" + text + f"i{module}\n{name}\n".encode(),
        "OBJ": b"(" + glob + text + b"o",
    }


HOSTILE = [
    ("posix", "system"),
    ("os", "system"),
    ("builtins", "eval"),
    ("builtins", "exec"),
    ("__builtin__", "eval"),
    ("subprocess", "getoutput"),
]


def _command(marker: Path, name: str) -> str:
    if name in ("eval", "exec"):
        return f"__import__('pathlib').Path({str(marker)!r}).write_text('pwned')"
    return f"touch {marker}"


@pytest.mark.skipif(sys.platform == "win32", reason="the payloads use a POSIX shell")
def test_the_hostile_payloads_are_real(tmp_path):
    """What the refusal protects from: plain pickle runs each payload (the marker appears)."""
    for module, name in HOSTILE:
        for opcode in _payloads(module, name, ""):
            marker = tmp_path / f"{module}-{name}-{opcode}"
            body = _payloads(module, name, _command(marker, name))[opcode]
            pickle.loads(b"\x80\x02" + body + b".")  # noqa: S301 - the point of this test
            assert marker.exists(), (module, name, opcode)


@pytest.mark.skipif(sys.platform == "win32", reason="the payloads use a POSIX shell")
@pytest.mark.parametrize(("module", "name"), HOSTILE)
def test_hostile_globals_are_refused_and_never_run(dev, tmp_path, module, name):
    marker = tmp_path / "pwned"
    weight = linear_arrays()["weight"]
    for opcode, body in _payloads(module, name, _command(marker, name)).items():
        alone = b"\x80\x02" + body + b"."
        # after a real tensor, as the value of a state dict key
        inside = dumps({"weight": tensor_call("0", "float64", 6, (2, 3)), "bias": Raw(body)})
        for where, pkl in (("alone", alone), ("in a state dict", inside)):
            path = write_pt(tmp_path / f"{opcode}.pt", pkl, {"0": weight.tobytes()})
            with pytest.raises(
                RecordError, match=rf"{opcode}\.pt: the pickle names the global {module}\.{name}.*refused"
            ):
                load_pytorch(path, nn.LinearConfig(3, 2).init(dev))
            assert not marker.exists(), (opcode, where)


class Custom:
    """A Python object saved in a checkpoint (its class is pickled by name)."""


@needs_torch
def test_a_pickled_whole_model_is_refused_with_advice(dev, tmp_path):
    torch.save(torch.nn.Sequential(torch.nn.Linear(3, 2)), tmp_path / "whole.pt")
    with pytest.raises(RecordError, match=r"global torch\.nn\.modules\.container\.Sequential.*refused"):
        load_pytorch(tmp_path / "whole.pt", nn.LinearConfig(3, 2).init(dev))

    torch.save({"weight": torch.zeros(2, 3), "bias": torch.zeros(2), "meta": Custom()}, tmp_path / "obj.pt")
    with pytest.raises(
        RecordError, match=r"\.Custom, which a tensor checkpoint does not need.*model\.state_dict\(\)"
    ):
        load_pytorch(tmp_path / "obj.pt", nn.LinearConfig(3, 2).init(dev))


def test_other_torch_rebuilds_and_dtypes_are_refused(dev, tmp_path):
    sparse = dumps({"w": Call("torch._utils", "_rebuild_sparse_tensor", 1)})
    with pytest.raises(RecordError, match=r"global torch\._utils\._rebuild_sparse_tensor"):
        load_pytorch(write_pt(tmp_path / "s.pt", sparse, {}), nn.LinearConfig(3, 2).init(dev))
    # Quantized tensors are read (test_record_pytorch_quantized.py); a malformed call is not.
    qtensor = dumps({"w": Call("torch._utils", "_rebuild_qtensor", 1)})
    with pytest.raises(RecordError, match=r"q.pt: corrupt pickle"):
        load_pytorch(write_pt(tmp_path / "q.pt", qtensor, {}), nn.LinearConfig(3, 2).init(dev))
    complex_storage = Pid(("storage", Global("torch", "ComplexFloatStorage"), "0", "cpu", 1))
    pkl = dumps(
        {"w": Call("torch._utils", "_rebuild_tensor_v2", complex_storage, 0, (1,), (1,), False, None)}
    )
    with pytest.raises(RecordError, match=r"torch\.ComplexFloatStorage are not supported"):
        load_pytorch(write_pt(tmp_path / "c.pt", pkl, {"0": bytes(8)}), nn.LinearConfig(3, 2).init(dev))


# -- malformed files -----------------------------------------------------------------------------------
def test_malformed_checkpoints_raise_record_errors_naming_the_file(dev, tmp_path):
    arrays = linear_arrays()
    good = state_pt(tmp_path / "good.pt", arrays)
    module = nn.LinearConfig(3, 2).init(dev)
    cases: dict[str, tuple[bytes | Path, str]] = {}
    cases["missing"] = (tmp_path / "nope.pt", "no such file")
    raw = good.read_bytes()
    cases["truncated"] = (raw[: len(raw) // 2], "corrupt zip archive")
    cases["text"] = (b"hello, world\n" * 10, "not a file torch.save writes")
    cases["safetensors"] = (
        struct.pack("<Q", 2) + b"{}",
        "for .safetensors files use load_pytorch_safetensors",
    )
    with zipfile.ZipFile(good) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}

    def rezip(name, drop=(), replace=None):
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as z:
            for member, data in members.items():
                if member not in drop:
                    z.writestr(member, (replace or {}).get(member, data))
        return path

    cases["no storage"] = (rezip("a.pt", drop=["archive/data/1"]), r"missing record archive/data/1")
    cases["short storage"] = (
        rezip("b.pt", replace={"archive/data/0": bytes(40)}),
        r"storage record data/0 holds 40 bytes, the pickle says 48",
    )
    cases["bad pickle"] = (rezip("c.pt", replace={"archive/data.pkl": b"\x80\x02}(X\x01"}), "corrupt pickle")
    cases["no pickle"] = (rezip("d.pt", drop=["archive/data.pkl"]), r"no <name>/data\.pkl record")
    cases["byteorder"] = (
        rezip("e.pt", replace={"archive/byteorder": b"middle"}),
        "byteorder record says 'middle'",
    )
    big_view = dumps(
        {"weight": tensor_call("0", "float64", 6, (2, 30)), "bias": tensor_call("1", "float64", 2, (2,))}
    )
    cases["view"] = (
        rezip("f.pt", replace={"archive/data.pkl": big_view}),
        r"tensor of shape \[2, 30\], stride \[30, 1\] at offset 0 needs 480 bytes of storage '0', "
        r"which has 48",
    )
    flipped = bytearray(raw)
    start = raw.index(arrays["weight"].tobytes())
    flipped[start + 3] ^= 0xFF
    cases["crc"] = (bytes(flipped), "storage record data/0 fails its CRC check")
    for name, (content, message) in cases.items():
        if isinstance(content, bytes):
            path = tmp_path / f"{name.replace(' ', '_')}.pt"
            path.write_bytes(content)
        else:
            path = content
        with pytest.raises(RecordError, match=message) as info:
            load_pytorch(path, module)
        assert str(path) in str(info.value), name


def test_big_endian_and_compressed_records_are_read(dev, tmp_path):
    arrays = linear_arrays()
    state = {k: tensor_call(str(i), "float64", v.size, v.shape) for i, (k, v) in enumerate(arrays.items())}
    storages = {str(i): v.astype(">f8").tobytes() for i, v in enumerate(arrays.values())}
    path = write_pt(tmp_path / "big.pt", dumps(state), storages, byteorder=b"big")
    model = load_pytorch(path, nn.LinearConfig(3, 2).init(dev))
    close(model.weight.val().to_numpy(), arrays["weight"].T, 0)

    with (
        zipfile.ZipFile(state_pt(tmp_path / "s.pt", arrays)) as src,
        zipfile.ZipFile(tmp_path / "deflated.pt", "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    model = load_pytorch(tmp_path / "deflated.pt", nn.LinearConfig(3, 2).init(dev))
    close(model.weight.val().to_numpy(), arrays["weight"].T, 0)


@pytest.mark.parametrize(
    ("bomb", "message"),
    [
        # LONG_BINPUT: the C unpickler would grow (and zero-fill) its memo table to this index
        (
            b"\x80\x02}r\xff\xff\xff\x7f.",
            r"memo index 2147483647 at byte 8: 2147483648 memo entries, over the limit of 1048576",
        ),
        # BYTEARRAY8 / BINBYTES8 / BINUNICODE8: lengths it would allocate before reading them
        (
            b"\x80\x05\x96" + struct.pack("<Q", 1 << 40) + b".",
            r"corrupt pickle: .*bytearray8, but only \d+ remain",
        ),
        (
            b"\x80\x04\x8e" + struct.pack("<Q", 1 << 40) + b".",
            r"corrupt pickle: .*bytes8, but only \d+ remain",
        ),
        (
            b"\x80\x04\x8d" + struct.pack("<Q", 1 << 40) + b".",
            r"corrupt pickle: .*unicodestring8, but only \d+ remain",
        ),
    ],
    ids=["memo", "bytearray8", "binbytes8", "binunicode8"],
)
@pytest.mark.parametrize("legacy", [False, True])
def test_sizes_inside_a_pickle_are_checked_before_anything_is_allocated(dev, tmp_path, bomb, message, legacy):
    if legacy:
        path = tmp_path / "bomb.pt"
        path.write_bytes(dumps(0x1950A86A20F9469CFC6C) + dumps(1001) + dumps({}) + bomb + bytes(64))
    else:
        path = write_pt(tmp_path / "bomb.pt", bomb, {})
    with pytest.raises(
        RecordError, match=r"bomb\.pt: (archive/data\.pkl: |the pickle at byte \d+: )?" + message
    ):
        load_pytorch(path, nn.LinearConfig(3, 2).init(dev))


# -- fuzz: truncations and byte flips raise RecordError and nothing else --------------------------------
def _legacy_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The legacy layout: magic, protocol, system info, the object, the storage keys, storages."""
    state = {k: tensor_call(str(i), "float64", v.size, v.shape) for i, (k, v) in enumerate(arrays.items())}
    out = (
        dumps(0x1950A86A20F9469CFC6C) + dumps(1001) + dumps({"protocol_version": 1001, "little_endian": True})
    )
    out += dumps(state) + dumps([str(i) for i in range(len(arrays))])
    for v in arrays.values():
        out += struct.pack("<q", v.size) + v.astype("<f8").tobytes()
    return out


def test_legacy_layout_written_by_hand_loads(dev, tmp_path):
    arrays = linear_arrays()
    path = tmp_path / "legacy.pt"
    path.write_bytes(_legacy_bytes(arrays))
    model = load_pytorch(path, nn.LinearConfig(3, 2).init(dev))
    close(model.weight.val().to_numpy(), arrays["weight"].T, 0)


def test_fuzzed_checkpoints_raise_only_record_errors(dev, tmp_path):
    arrays = {**linear_arrays(seed=3), "flags": np.array([True, False]), "steps": np.arange(3)}
    zip_raw = state_pt(tmp_path / "seed.pt", arrays).read_bytes()
    seeds = {"zip": zip_raw, "legacy": _legacy_bytes(linear_arrays(seed=3))}
    module = nn.LinearConfig(3, 2).init(dev)
    rng = random.Random(17)
    path = tmp_path / "fuzz.pt"
    outcomes: dict[str, int] = {"loaded": 0, "record_error": 0}
    cases = 0
    for raw in seeds.values():
        pkl_at = raw.find(b"\x80\x02")
        for case in range(700):
            data = bytearray(raw)
            if case % 4 == 0:  # truncation
                data = data[: rng.randrange(len(raw))]
            else:  # 1-4 byte flips, half of them inside the pickle
                for _ in range(rng.randint(1, 4)):
                    lo = pkl_at if case % 2 else 0
                    pos = rng.randrange(lo, min(len(raw), lo + 800) if case % 2 else len(raw))
                    data[pos] ^= 1 << rng.randrange(8)
            path.write_bytes(bytes(data))
            cases += 1
            try:
                with open_checkpoint(path) as ckpt:
                    obj = ckpt.obj
                    if isinstance(obj, dict):
                        for value in obj.values():
                            if isinstance(value, TorchTensor):
                                value.read()
                load_pytorch(path, module, strict=False)
                outcomes["loaded"] += 1
            except RecordError as err:
                assert str(path) in str(err), err
                assert not err.internal
                outcomes["record_error"] += 1
    assert cases >= 1000
    assert outcomes["record_error"] > cases // 2  # the mutations were not all harmless


# -- the guide's examples ----------------------------------------------------------------------------
GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "import-models.md"


@needs_torch
def test_guide_pytorch_examples_run(tmp_path, monkeypatch):
    """The PyTorch section's code blocks need torch, which the docs test environments do not
    have: they are marked skipped there and run here, in order, in one namespace."""
    if not GUIDE.is_file():
        pytest.skip(f"no guide at {GUIDE} (an installed burn-core)")
    section = GUIDE.read_text(encoding="utf-8").split("## PyTorch checkpoints", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"<!-- skip: (.*?) -->\s*```python\n(.*?)^```", section, re.S | re.M)
    assert len(blocks) == 3
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType("_pytorch_guide")  # a real module: the page defines classes
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for reason, code in blocks:
        assert "test_record_load_pytorch.py" in reason
        exec(compile(code, str(GUIDE), "exec"), module.__dict__)  # noqa: S102 - this repository's own docs
    assert module.__dict__["weight"].shape == (3, 64)
