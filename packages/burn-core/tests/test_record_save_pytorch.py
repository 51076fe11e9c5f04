"""Back to PyTorch: `pytorch_state_dict`, `save_pytorch` and `save_pytorch_safetensors`.

The must-show: a burn model saved for PyTorch loads into the equivalent ``torch.nn`` model with
``load_state_dict(strict=True)`` (from ``torch.load(path, weights_only=True)`` and from
``safetensors.torch.load_file``) and computes the same outputs (float32, within 1e-5), for
Linear, Conv1d/2d, BatchNorm2d after training steps, LayerNorm, Embedding, a 2-layer
bidirectional LSTM and GRU, a small CNN trained one step and a small GPT-style decoder. Saving
then loading with `load_pytorch` gives back the same params, bit for bit.

Tests that compare with PyTorch need torch (the ``autodiff-ndarray`` tox env has it); the
round trips, the file layout and the errors run without it.
"""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from _torch_reference import cnn, needs_torch, tensor, torch, torch_cnn

import burn
from burn import nn
from burn.module.param import Param
from burn.record import (
    RecordError,
    load_pytorch,
    load_pytorch_safetensors,
    pytorch_adapters,
    pytorch_state_dict,
    pytorch_writer,
    save_pytorch,
    save_pytorch_safetensors,
)
from burn.record import pytorch as pytorch_module
from burn.record.pytorch_pickle import open_checkpoint

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

try:
    from safetensors.torch import load_file as load_safetensors
except ImportError:  # pragma: no cover - safetensors is optional
    load_safetensors = None

TOL = 1e-5


@pytest.fixture(scope="module")
def dev():
    return nd.NdArray().default_device()  # float32, as the models people export


def perturb(module, seed=0):
    """Every float param moved off its initial value (norms' ones and zeros included), so that a
    param saved under the wrong key or layout changes the outputs; variances stay positive."""
    rng = np.random.default_rng(seed)

    def move(path: str, param: Param) -> Param:
        value = param.val()
        array = value.to_numpy()
        if array.dtype.kind != "f":
            return param
        noise = rng.standard_normal(array.shape).astype(array.dtype) * 0.3
        new = np.abs(array + noise) + 0.1 if path.endswith("running_var") else array + noise
        return param.with_value(burn.Tensor.from_data(new, device=value.device))

    return module.map(move)


def same_params(a, b) -> None:
    """`a` and `b` hold the same params at the same paths, bit for bit, in the same dtypes."""
    pa, pb = dict(a.named_params()), dict(b.named_params())
    assert list(pa) == list(pb)
    for path, param in pa.items():
        x, y = param.val().to_numpy(), pb[path].val().to_numpy()
        assert x.dtype == y.dtype, path
        np.testing.assert_array_equal(x, y, err_msg=path)


def into_torch(burn_model, torch_factory, tmp_path, name):
    """`burn_model` saved both ways, each file loaded with strict=True into a fresh torch model
    (in eval mode); the two torch models are returned."""
    pt = save_pytorch(burn_model, tmp_path / f"{name}.pt")
    state = torch.load(pt, weights_only=True)
    assert isinstance(state, dict) and type(state).__name__ == "OrderedDict"
    from_pt = torch_factory()
    result = from_pt.load_state_dict(state, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    models = [from_pt.eval()]
    if load_safetensors is not None:
        st = save_pytorch_safetensors(burn_model, tmp_path / f"{name}.safetensors")
        from_st = torch_factory()
        from_st.load_state_dict(load_safetensors(str(st)), strict=True)
        models.append(from_st.eval())
    return models


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=TOL, atol=TOL)


def check_outputs(models, torch_inputs, burn_output, pick=lambda out: out):
    for model in models:
        with torch.no_grad():
            want = pick(model(*torch_inputs))
        close(burn_output, want.numpy())


def round_trips(burn_model, fresh, tmp_path, name) -> None:
    """save_pytorch -> load_pytorch and save_pytorch_safetensors -> load_pytorch_safetensors give
    back the same params into a freshly built module."""
    same_params(burn_model, load_pytorch(save_pytorch(burn_model, tmp_path / f"{name}-rt.pt"), fresh()))
    path = save_pytorch_safetensors(burn_model, tmp_path / f"{name}-rt.safetensors")
    same_params(burn_model, load_pytorch_safetensors(path, fresh()))


# -- single layers ----------------------------------------------------------------------------------
@needs_torch
def test_linear_loads_strictly_into_torch_and_matches(dev, tmp_path):
    model = perturb(nn.LinearConfig(4, 3).init(dev))
    state = pytorch_state_dict(model)
    assert list(state) == ["weight", "bias"] and state["weight"].shape == (3, 4)  # [out, in]
    models = into_torch(model, lambda: torch.nn.Linear(4, 3), tmp_path, "linear")
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    check_outputs(models, [torch.from_numpy(x)], model(tensor(dev, x)).to_numpy())
    round_trips(model, lambda: nn.LinearConfig(4, 3).init(dev), tmp_path, "linear")


@needs_torch
def test_conv1d_and_conv2d_load_strictly_into_torch_and_match(dev, tmp_path):
    conv1 = perturb(nn.Conv1dConfig(2, 4, 3, stride=2, padding=1).init(dev))
    models = into_torch(conv1, lambda: torch.nn.Conv1d(2, 4, 3, stride=2, padding=1), tmp_path, "c1")
    x = np.random.default_rng(2).standard_normal((3, 2, 9)).astype(np.float32)
    check_outputs(models, [torch.from_numpy(x)], conv1(tensor(dev, x)).to_numpy())

    conv2 = perturb(nn.Conv2dConfig((4, 6), (3, 2), padding=(1, 0), groups=2).init(dev))
    models = into_torch(
        conv2, lambda: torch.nn.Conv2d(4, 6, (3, 2), padding=(1, 0), groups=2), tmp_path, "c2"
    )
    x = np.random.default_rng(3).standard_normal((2, 4, 5, 6)).astype(np.float32)
    check_outputs(models, [torch.from_numpy(x)], conv2(tensor(dev, x)).to_numpy())
    round_trips(
        conv2, lambda: nn.Conv2dConfig((4, 6), (3, 2), padding=(1, 0), groups=2).init(dev), tmp_path, "c2"
    )


@needs_torch
def test_batchnorm2d_after_training_steps_loads_strictly_and_matches(dev, tmp_path):
    bn = perturb(nn.BatchNormConfig(3).init(dev)).train()
    rng = np.random.default_rng(4)
    for _ in range(3):  # training forwards move the running statistics
        bn(tensor(dev, rng.standard_normal((4, 3, 5, 5)).astype(np.float32) * 2 + 1))
    bn = bn.eval()
    assert not np.allclose(bn.running_mean.val().to_numpy(), 0)
    state = pytorch_state_dict(bn)
    assert list(state) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert state["num_batches_tracked"].dtype == np.int64 and state["num_batches_tracked"].shape == ()

    models = into_torch(bn, lambda: torch.nn.BatchNorm2d(3), tmp_path, "bn")
    for model in models:
        close(model.running_var.numpy(), bn.running_var.val().to_numpy())
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    check_outputs(models, [torch.from_numpy(x)], bn(tensor(dev, x)).to_numpy())
    round_trips(bn, lambda: nn.BatchNormConfig(3).init(dev), tmp_path, "bn")


@needs_torch
def test_layernorm_and_embedding_load_strictly_into_torch_and_match(dev, tmp_path):
    norm = perturb(nn.LayerNormConfig(6).init(dev))
    assert list(pytorch_state_dict(norm)) == ["weight", "bias"]  # gamma, beta
    models = into_torch(norm, lambda: torch.nn.LayerNorm(6), tmp_path, "ln")
    x = np.random.default_rng(5).standard_normal((2, 3, 6)).astype(np.float32)
    check_outputs(models, [torch.from_numpy(x)], norm(tensor(dev, x)).to_numpy())

    emb = perturb(nn.EmbeddingConfig(10, 4).init(dev))
    models = into_torch(emb, lambda: torch.nn.Embedding(10, 4), tmp_path, "emb")
    ids = np.array([[1, 9, 0], [3, 3, 7]], dtype=np.int64)
    got = emb(burn.Tensor.from_data(ids, device=dev)).to_numpy()
    check_outputs(models, [torch.from_numpy(ids)], got)
    round_trips(emb, lambda: nn.EmbeddingConfig(10, 4).init(dev), tmp_path, "emb")


@needs_torch
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_bidirectional_two_layer_recurrent_layers_load_strictly_and_match(dev, tmp_path, kind):
    if kind == "lstm":
        config = nn.StackedLstmConfig(3, 5, 2, bidirectional=True)
        factory = lambda: torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=True)  # noqa: E731
    else:
        config = nn.StackedGruConfig(3, 5, 2, bidirectional=True)
        factory = lambda: torch.nn.GRU(3, 5, num_layers=2, bidirectional=True, batch_first=True)  # noqa: E731
    model = perturb(config.init(dev), seed=6)
    state = pytorch_state_dict(model)
    assert {"weight_ih_l0", "weight_hh_l0_reverse", "bias_ih_l1", "bias_hh_l1_reverse"} <= set(state)
    gates = 4 if kind == "lstm" else 3
    assert state["weight_ih_l1"].shape == (gates * 5, 10)  # gates packed, [G*H, 2H] above level 0

    models = into_torch(model, factory, tmp_path, kind)
    x = np.random.default_rng(7).standard_normal((2, 6, 3)).astype(np.float32)
    out, _ = model(tensor(dev, x))
    check_outputs(models, [torch.from_numpy(x)], out.to_numpy(), pick=lambda result: result[0])
    round_trips(model, config.init, tmp_path, kind)


@needs_torch
def test_prelu_slopes_go_to_torch_weight_and_back(dev, tmp_path):
    prelu = perturb(nn.PReluConfig(num_parameters=3).init(dev))
    assert list(pytorch_state_dict(prelu)) == ["weight"]  # burn's alpha
    models = into_torch(prelu, lambda: torch.nn.PReLU(3), tmp_path, "prelu")
    x = np.random.default_rng(12).standard_normal((2, 3, 4)).astype(np.float32)
    check_outputs(models, [torch.from_numpy(x)], prelu(tensor(dev, x)).to_numpy())
    round_trips(prelu, lambda: nn.PReluConfig(num_parameters=3).init(dev), tmp_path, "prelu")


# -- small models ---------------------------------------------------------------------------------
@needs_torch
def test_a_cnn_trained_one_step_loads_strictly_into_torch_and_matches(dev, tmp_path):
    ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    from burn import optim

    ad_dev = ad.Autodiff(nd.NdArray()).default_device()
    model = cnn(ad_dev)
    optimizer = optim.AdamConfig().init()
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 2, 6, 6)).astype(np.float32)
    y = rng.standard_normal((4, 5)).astype(np.float32)
    before = model.bn.gamma.val().to_numpy().copy()
    grads = nn.MseLoss()(model(tensor(ad_dev, x)), tensor(ad_dev, y)).backward()
    model = optimizer.step(0.05, model, optim.GradientsParams.from_module(grads, model))
    assert not np.allclose(model.bn.gamma.val().to_numpy(), before)  # the step changed the params
    assert not np.allclose(model.bn.running_mean.val().to_numpy(), 0)  # and the statistics

    valid = model.valid()
    inner = valid.fc.weight.device  # the autodiff backend's inner ndarray backend
    models = into_torch(valid, torch_cnn, tmp_path, "cnn")
    x = rng.standard_normal((3, 2, 6, 6)).astype(np.float32)
    check_outputs(models, [torch.from_numpy(x)], valid(tensor(inner, x)).to_numpy())
    round_trips(valid, lambda: cnn(inner), tmp_path, "cnn")


class Gpt(burn.Module):
    """A GPT-style decoder: token and position embeddings, pre-norm causal self-attention blocks,
    a final norm and a head; the field names are those of `TorchGpt` below."""

    tok: nn.Embedding
    pos: nn.Embedding
    blocks: nn.TransformerEncoder
    norm: nn.LayerNorm
    head: nn.Linear

    def forward(self, ids):
        batch, length = ids.shape
        positions = burn.Tensor.arange(0, length, device=ids.device).reshape((1, length)).repeat_dim(0, batch)
        x = self.tok(ids) + self.pos(positions)
        causal = np.broadcast_to(np.triu(np.ones((length, length), bool), 1), (batch, length, length))
        mask = burn.Tensor.from_data(np.ascontiguousarray(causal), device=ids.device)
        x = self.blocks(nn.TransformerEncoderInput(x, mask_attn=mask))
        return self.head(self.norm(x))


VOCAB, CONTEXT, D, HEADS, FF, LAYERS = 11, 8, 16, 2, 32, 2


def gpt(device) -> Gpt:
    blocks = nn.TransformerEncoderConfig(
        D, FF, HEADS, LAYERS, dropout=0.0, norm_first=True, activation="gelu"
    )
    return Gpt(
        nn.EmbeddingConfig(VOCAB, D).init(device),
        nn.EmbeddingConfig(CONTEXT, D).init(device),
        blocks.init(device),
        nn.LayerNormConfig(D).init(device),
        nn.LinearConfig(D, VOCAB).init(device),
    )


def torch_gpt():
    class TorchGpt(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = torch.nn.Embedding(VOCAB, D)
            self.pos = torch.nn.Embedding(CONTEXT, D)
            layer = torch.nn.TransformerEncoderLayer(
                D, HEADS, FF, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
            )
            self.blocks = torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.norm = torch.nn.LayerNorm(D)
            self.head = torch.nn.Linear(D, VOCAB)

        def forward(self, ids):
            length = ids.shape[1]
            x = self.tok(ids) + self.pos(torch.arange(length))
            causal = torch.triu(torch.ones(length, length, dtype=torch.bool), 1)
            return self.head(self.norm(self.blocks(x, mask=causal)))

    return TorchGpt()


@needs_torch
def test_a_gpt_style_decoder_loads_strictly_into_torch_and_matches(dev, tmp_path):
    model = perturb(gpt(dev), seed=9)
    state = pytorch_state_dict(model)
    assert state["blocks.layers.0.self_attn.in_proj_weight"].shape == (3 * D, D)
    assert "blocks.layers.1.self_attn.out_proj.weight" in state and "blocks.layers.1.linear2.bias" in state
    models = into_torch(model, torch_gpt, tmp_path, "gpt")
    ids = np.random.default_rng(10).integers(0, VOCAB, (3, CONTEXT)).astype(np.int64)
    got = model(burn.Tensor.from_data(ids, device=dev)).to_numpy()
    check_outputs(models, [torch.from_numpy(ids)], got)
    round_trips(model, lambda: gpt(dev), tmp_path, "gpt")


# -- the file itself ------------------------------------------------------------------------------
DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "int64": np.int64,
    "bool": np.bool_,
}


def dtype_state():
    rng = np.random.default_rng(11)
    state = {name: rng.standard_normal((3, 2)).astype(dtype) for name, dtype in DTYPES.items()}
    state["int64"] = np.array([[-(1 << 40), 3], [0, 7], [1, -2]], np.int64)
    state["bool"] = np.array([[True, False], [False, True], [True, True]])
    state["scalar"] = np.array(5, np.int64)
    state["empty"] = np.zeros((0, 4), np.float32)
    return state


def write(tmp_path, state, name="dtypes.pt"):
    path = tmp_path / name
    with open(path, "wb") as f:
        pytorch_writer.write_checkpoint(f, state)
    return path


def test_every_dtype_round_trips_through_our_reader(tmp_path):
    state = dtype_state()
    with open_checkpoint(write(tmp_path, state)) as ckpt:
        back = {key: value.read().array for key, value in ckpt.state_dict().items()}
    assert list(back) == list(state)
    for key, value in state.items():
        assert back[key].dtype == value.dtype and back[key].shape == value.shape, key
        np.testing.assert_array_equal(back[key], value)


@needs_torch
@pytest.mark.parametrize("mmap", [False, True])
def test_every_dtype_reads_with_torch_load_weights_only(tmp_path, mmap):
    state = dtype_state()
    back = torch.load(write(tmp_path, state), weights_only=True, mmap=mmap)
    assert list(back) == list(state)
    names = {**DTYPES, "scalar": np.int64, "empty": np.float32}
    for key, value in state.items():
        got = back[key]
        assert str(got.dtype) == f"torch.{np.dtype(names[key]).name}", key
        assert tuple(got.shape) == value.shape and got.is_contiguous()
        as_numpy = got.float().numpy() if key == "bfloat16" else got.numpy()
        np.testing.assert_array_equal(as_numpy, value.astype(np.float32) if key == "bfloat16" else value)


def test_the_archive_has_torch_layout_and_aligned_records(tmp_path):
    path = write(tmp_path, dtype_state())
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert names[0] == "archive/data.pkl" and names[-1] == "archive/version"
        assert zf.read("archive/byteorder") == b"little" and zf.read("archive/version") == b"3\n"
        for info in zf.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if info.filename.startswith("archive/data/"):
                with zf.open(info) as member:
                    member.read(0)
                # the data start: the local header, its name and its extra field
                raw = path.read_bytes()[info.header_offset :]
                start = info.header_offset + 30 + int.from_bytes(raw[26:28], "little")
                start += int.from_bytes(raw[28:30], "little")
                assert start % pytorch_writer.ALIGN == 0, info.filename
    # the same state dict always gives the same bytes (fixed timestamps, no random names)
    assert path.read_bytes() == write(tmp_path, dtype_state(), "again.pt").read_bytes()


def test_saving_never_imports_torch(tmp_path):
    code = (
        "import sys, burn\nfrom burn import nn\n"
        "from burn.record import save_pytorch, save_pytorch_safetensors\n"
        "dev = burn.backend('ndarray').default_device()\n"
        f"save_pytorch(nn.LinearConfig(3, 2).init(dev), {str(tmp_path / 'w.pt')!r})\n"
        f"save_pytorch_safetensors(nn.LinearConfig(3, 2).init(dev), {str(tmp_path / 'w.safetensors')!r})\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\nprint('saved')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "saved" in done.stdout


def test_float_dtype_and_key_remap(dev, tmp_path):
    model = perturb(nn.BatchNormConfig(2).init(dev))
    state = pytorch_state_dict(model, float_dtype="bfloat16", key_remap=[(r"^", "features.1.")])
    assert list(state) == [
        "features.1.weight",
        "features.1.bias",
        "features.1.running_mean",
        "features.1.running_var",
        "features.1.num_batches_tracked",
    ]
    assert state["features.1.weight"].dtype == ml_dtypes.bfloat16
    assert state["features.1.num_batches_tracked"].dtype == np.int64  # ints are kept
    path = save_pytorch(
        model, tmp_path / "bf16.pt", float_dtype="bfloat16", key_remap=[(r"^", "features.1.")]
    )
    back = load_pytorch(path, nn.BatchNormConfig(2).init(dev), key_remap=[(r"^features\.1\.", "")])
    want = model.gamma.val().to_numpy().astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(back.gamma.val().to_numpy(), want)


def test_the_safetensors_file_holds_pytorch_names_and_format_metadata(dev, tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")
    from safetensors import safe_open

    model = perturb(nn.MultiHeadAttentionConfig(8, 2).init(dev))
    path = save_pytorch_safetensors(model, tmp_path / "mha.safetensors")
    loaded = safetensors_numpy.load_file(str(path))
    expected = pytorch_state_dict(model)
    assert (
        sorted(loaded)
        == sorted(expected)
        == ["in_proj_bias", "in_proj_weight", "out_proj.bias", "out_proj.weight"]
    )
    for key, value in expected.items():
        np.testing.assert_array_equal(loaded[key], value)
    with safe_open(str(path), "np") as f:
        assert f.metadata() == {"format": "pt"}


def test_the_inverse_of_every_adapter_rule(dev):
    """Each param of the layers with packed or renamed tensors comes back where `take` finds it."""
    modules = [
        nn.MultiHeadAttentionConfig(8, 2).init(dev),
        nn.TransformerDecoderConfig(8, 16, 2, 2, norm_first=True).init(dev),
        nn.StackedRnnConfig(3, 4, 2, bidirectional=True).init(dev),
        nn.BiGruConfig(3, 4).init(dev),
        nn.GroupNormConfig(2, 4).init(dev),
        nn.RmsNormConfig(4).init(dev),
    ]
    for module in modules:
        state = pytorch_state_dict(module)
        sources = pytorch_adapters.torch_sources(module)
        for path, param in module.named_params():
            source = sources[path]

            class Data:  # what `take` reads
                array = state[source.key]

            np.testing.assert_array_equal(
                pytorch_adapters.take(Data, source, path), param.val().to_numpy(), err_msg=path
            )


def test_doc_examples_run():
    for module in (pytorch_writer, pytorch_module, pytorch_adapters):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__


# -- errors ---------------------------------------------------------------------------------------
def test_layers_without_a_pytorch_counterpart_are_refused(dev, tmp_path):
    with pytest.raises(RecordError, match=r"Gru at .* has no PyTorch counterpart.*reset_after=True"):
        pytorch_state_dict(nn.GruConfig(3, 4, reset_after=False).init(dev))
    partial = nn.MultiHeadAttentionConfig(8, 2, key_bias=False).init(dev)
    with pytest.raises(RecordError, match=r"in_proj_bias.*3 row blocks.*query\.bias, value\.bias.*1 missing"):
        save_pytorch(partial, tmp_path / "mha.pt")
    assert not list(tmp_path.iterdir())  # nothing was left behind
    with pytest.raises(RecordError, match=r"two PyTorch keys map to 'w' after key_remap"):
        pytorch_state_dict(nn.LinearConfig(2, 2).init(dev), key_remap=[(r"^.*$", "w")])


def test_an_unwritable_path_is_a_clear_error(dev, tmp_path):
    model = nn.LinearConfig(2, 2).init(dev)
    missing = tmp_path / "no-such-dir" / "m.pt"
    for save in (save_pytorch, save_pytorch_safetensors):
        with pytest.raises(RecordError, match=r"no-such-dir/m\.pt: cannot write: No such file or directory"):
            save(model, missing)
    if os.name == "posix" and os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        (locked / "m.pt").write_bytes(b"old")
        locked.chmod(0o500)
        try:
            with pytest.raises(RecordError, match=r"m\.pt: cannot write: Permission denied"):
                save_pytorch(model, locked / "m.pt")
            assert (locked / "m.pt").read_bytes() == b"old"
        finally:
            locked.chmod(0o700)


@pytest.mark.parametrize("save", [save_pytorch, save_pytorch_safetensors])
def test_a_failed_save_leaves_the_existing_file_untouched(dev, tmp_path, monkeypatch, save):
    model = perturb(nn.LinearConfig(64, 64).init(dev))
    path = save(model, tmp_path / "model.bin")
    old = path.read_bytes()
    calls = []

    def disk_full(*args, **kwargs):
        if calls:  # the first tensor is written, the second fails: a partial temp file exists
            raise OSError(28, "No space left on device")
        calls.append(1)
        return real(*args, **kwargs)

    if save is save_pytorch:
        real = pytorch_writer.saved_array
        monkeypatch.setattr(pytorch_writer, "saved_array", disk_full)
    else:
        from burn.record import _tree

        real = _tree.TensorRef.array
        monkeypatch.setattr(_tree.TensorRef, "array", lambda self: disk_full(self))
    with pytest.raises(RecordError, match=r"model\.bin: cannot write: No space left on device"):
        save(perturb(model, seed=1), path)
    assert path.read_bytes() == old
    assert [p.name for p in Path(tmp_path).iterdir()] == ["model.bin"]  # no temp file left
