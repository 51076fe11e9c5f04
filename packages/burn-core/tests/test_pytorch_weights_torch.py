"""Stock PyTorch state dicts (``nn.TransformerEncoder``/``Decoder``, ``nn.MultiheadAttention``,
``nn.LSTM``/``GRU``/``RNN`` with ``num_layers`` and ``bidirectional``) saved as safetensors load
into burn's layers through `load_pytorch_safetensors` and its layer adapters, and compute what
PyTorch computes (float64, within 1e-10), gradients included for the recurrent layers; the
PyTorch-weights guide holds the table the adapters render.

The norms of every PyTorch layer are moved off their default (ones, zeros) first: a norm mapped to
the wrong PyTorch norm then changes the result, so a silently wrong pre-norm mapping fails here.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

import burn
from burn import nn
from burn.record import RecordError, load_pytorch_safetensors
from burn.record.pytorch_adapters import BEGIN, END, render_table, take, torch_sources, write_table

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
TOL = 1e-10
GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "pytorch-weights.md"


@pytest.fixture(scope="module")
def dev():
    return nd.NdArray(float_dtype="float64").default_device()


@pytest.fixture(scope="module")
def ad_dev():
    ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    return ad.Autodiff(nd.NdArray(float_dtype="float64")).default_device()


def tensor(dev, array, **kw):
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=TOL, atol=TOL)


def save_state(model, path):
    """``model.state_dict()`` as a safetensors file: with ``safetensors.torch.save_file`` when
    installed, else written by hand in the same format (little-endian header length, JSON header,
    raw tensors)."""
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    try:
        from safetensors.torch import save_file
    except ImportError:
        codes = {torch.float64: "F64", torch.float32: "F32", torch.int64: "I64"}
        header, blobs, offset = {}, [], 0
        for key, value in state.items():
            blob = value.numpy().tobytes()
            header[key] = {
                "dtype": codes[value.dtype],
                "shape": list(value.shape),
                "data_offsets": [offset, offset + len(blob)],
            }
            blobs.append(blob)
            offset += len(blob)
        head = json.dumps(header).encode()
        Path(path).write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))
    else:
        save_file(state, str(path))
    return path


def perturb(model, seed=0):
    """Every param of `model` drawn afresh (norms included), so that no mapping error hides."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.5)
    return model


# -- the must-show: a stock TransformerEncoder and a 2-layer bidirectional LSTM ------------------
@needs_torch
@pytest.mark.parametrize("norm_first", [False, True])
def test_stock_transformer_encoder_loads_and_matches(dev, tmp_path, norm_first) -> None:
    d, heads, ff = 8, 2, 16
    layer = torch.nn.TransformerEncoderLayer(
        d, heads, ff, batch_first=True, norm_first=norm_first, dtype=torch.float64
    )  # stock: relu, dropout 0.1, layer_norm_eps 1e-5
    ref = perturb(torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)).eval()
    path = save_state(ref, tmp_path / "encoder.safetensors")

    cfg = nn.TransformerEncoderConfig(d, ff, heads, 2, norm_first=norm_first, activation="relu")
    enc = load_pytorch_safetensors(path, cfg.init(dev))

    x = np.random.default_rng(1).standard_normal((3, 5, d))
    pad = np.array([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    with torch.no_grad():
        want = ref(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(pad))
    got = enc(nn.TransformerEncoderInput(tensor(dev, x), mask_pad=tensor(dev, pad)))
    # PyTorch zeroes padded positions' outputs only on its nested-tensor fast path (off here).
    close(got.to_numpy(), want.numpy())
    # The pre-norm mapping is not the obvious one: burn's norm_2 is PyTorch's norm1 there.
    first = "norm_2" if norm_first else "norm_1"
    close(getattr(enc.layers[1], first).gamma.val().to_numpy(), ref.layers[1].norm1.weight.detach().numpy())
    if norm_first:  # the obvious mapping loads without an error and computes something else
        obvious = {"TransformerEncoderLayer": {"norm_1": "norm1", "norm_2": "norm2"}}
        wrong = load_pytorch_safetensors(path, cfg.init(dev), layer_fields=obvious)
        got = wrong(nn.TransformerEncoderInput(tensor(dev, x), mask_pad=tensor(dev, pad))).to_numpy()
        assert np.abs(got - want.numpy()).max() > 1e-3


@needs_torch
def test_stock_bidirectional_two_layer_lstm_loads_and_matches(dev, tmp_path) -> None:
    ref = perturb(
        torch.nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=True, dtype=torch.float64)
    )
    path = save_state(ref.eval(), tmp_path / "lstm.safetensors")
    lstm = load_pytorch_safetensors(path, nn.StackedLstmConfig(4, 5, 2, bidirectional=True).init(dev))

    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 6, 4))
    h0, c0 = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 5))
    with torch.no_grad():
        want, (h_n, c_n) = ref(torch.from_numpy(x))
        want0, (h_n0, c_n0) = ref(torch.from_numpy(x), (torch.from_numpy(h0), torch.from_numpy(c0)))
    out, state = lstm(tensor(dev, x))
    close(out.to_numpy(), want.numpy())
    close(state.hidden.to_numpy(), h_n.numpy())
    close(state.cell.to_numpy(), c_n.numpy())
    out, state = lstm(tensor(dev, x), nn.LstmState(tensor(dev, c0), tensor(dev, h0)))
    close(out.to_numpy(), want0.numpy())
    close(state.hidden.to_numpy(), h_n0.numpy())
    close(state.cell.to_numpy(), c_n0.numpy())


# -- more stock layers ----------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("bias", [True, False])
def test_stock_multihead_attention_loads_and_matches(dev, tmp_path, bias) -> None:
    ref = perturb(torch.nn.MultiheadAttention(8, 4, bias=bias, batch_first=True, dtype=torch.float64))
    path = save_state(ref, tmp_path / "mha.safetensors")
    flags = dict(query_bias=bias, key_bias=bias, value_bias=bias, output_bias=bias)
    mha = load_pytorch_safetensors(path, nn.MultiHeadAttentionConfig(8, 4, dropout=0.0, **flags).init(dev))
    assert (mha.query.bias is None) == (not bias)

    rng = np.random.default_rng(3)
    q, kv = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    pad = np.array([[False] * 4 + [True], [False] * 5])
    with torch.no_grad():
        ctx, w = ref(
            torch.from_numpy(q),
            torch.from_numpy(kv),
            torch.from_numpy(kv),
            key_padding_mask=torch.from_numpy(pad),
            average_attn_weights=False,
        )
    out = mha(nn.MhaInput(tensor(dev, q), tensor(dev, kv), tensor(dev, kv), mask_pad=tensor(dev, pad)))
    close(out.context.to_numpy(), ctx.numpy())
    close(out.weights.to_numpy(), w.numpy())


@needs_torch
@pytest.mark.parametrize("norm_first", [False, True])
def test_stock_transformer_decoder_loads_and_matches(dev, tmp_path, norm_first) -> None:
    d, heads, ff = 8, 2, 12
    layer = torch.nn.TransformerDecoderLayer(
        d,
        heads,
        ff,
        activation="gelu",
        layer_norm_eps=1e-2,
        batch_first=True,
        norm_first=norm_first,
        dtype=torch.float64,
    )
    ref = perturb(torch.nn.TransformerDecoder(layer, 2)).eval()
    path = save_state(ref, tmp_path / "decoder.safetensors")
    dec = load_pytorch_safetensors(
        path,
        nn.TransformerDecoderConfig(d, ff, heads, 2, norm_first=norm_first, layer_norm_eps=1e-2).init(dev),
    )
    rng = np.random.default_rng(4)
    tgt, memory = rng.standard_normal((2, 4, d)), rng.standard_normal((2, 6, d))
    causal = np.triu(np.ones((4, 4), bool), 1)
    with torch.no_grad():
        want = ref(torch.from_numpy(tgt), torch.from_numpy(memory), tgt_mask=torch.from_numpy(causal))
    inp = nn.TransformerDecoderInput(
        tensor(dev, tgt), tensor(dev, memory), target_mask_attn=tensor(dev, causal)
    )
    close(dec(inp).to_numpy(), want.numpy())


def _grads_match(ref, module, x_np, ad_dev, run_burn) -> None:
    """Gradients of a random weighting of the outputs, burn vs PyTorch, param by param (each
    PyTorch gradient cut and transposed by the same adapter rules as its weight)."""
    weights = np.random.default_rng(7).standard_normal
    x_t = torch.from_numpy(x_np).requires_grad_(True)
    out_t = ref(x_t)[0]
    w = weights(tuple(out_t.shape))
    (out_t * torch.from_numpy(w)).sum().backward()

    x_b = tensor(ad_dev, x_np).require_grad()
    out_b = run_burn(module, x_b)
    grads = (out_b * tensor(ad_dev, w)).sum().backward()
    close(x_b.grad(grads).to_numpy(), x_t.grad.numpy())
    torch_grads = {k: p.grad for k, p in ref.named_parameters()}
    sources = torch_sources(module)
    for path, param in module.named_params():
        src = sources[path]

        class _Data:  # what `take` reads: the file's TensorData has `.array`
            array = torch_grads[src.key].numpy()

        close(param.val().grad(grads).to_numpy(), take(_Data, src, path))


@needs_torch
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_stacked_recurrent_layers_match_torch_forward_and_gradients(
    dev, ad_dev, tmp_path, kind, bidirectional
):
    d_in, hidden, layers = 3, 4, 2
    common = dict(num_layers=layers, bidirectional=bidirectional, batch_first=True, dtype=torch.float64)
    if kind == "lstm":
        ref = torch.nn.LSTM(d_in, hidden, **common)
        cfg = nn.StackedLstmConfig(d_in, hidden, layers, bidirectional=bidirectional)
    elif kind == "gru":
        ref = torch.nn.GRU(d_in, hidden, **common)
        cfg = nn.StackedGruConfig(d_in, hidden, layers, bidirectional=bidirectional)
    else:
        act = kind.split("_")[1]
        ref = torch.nn.RNN(d_in, hidden, nonlinearity=act, **common)
        cfg = nn.StackedRnnConfig(d_in, hidden, layers, nonlinearity=act, bidirectional=bidirectional)
    perturb(ref, seed=11)
    path = save_state(ref, tmp_path / f"{kind}.safetensors")
    x = np.random.default_rng(8).standard_normal((2, 5, d_in))

    module = load_pytorch_safetensors(path, cfg.init(dev))
    with torch.no_grad():
        want, h_n = ref(torch.from_numpy(x))
    out, state = module(tensor(dev, x))
    close(out.to_numpy(), want.numpy())
    if kind == "lstm":
        close(state.hidden.to_numpy(), h_n[0].numpy())
        close(state.cell.to_numpy(), h_n[1].numpy())
    else:
        close(state.to_numpy(), h_n.numpy())

    trained = load_pytorch_safetensors(path, cfg.init(ad_dev))
    _grads_match(ref, trained, x, ad_dev, lambda m, xb: m(xb)[0])


@needs_torch
def test_time_major_layers_match_torch_batch_first_false(dev, tmp_path) -> None:
    ref = perturb(torch.nn.GRU(3, 4, num_layers=2, dtype=torch.float64))  # PyTorch's default [T, B, D]
    path = save_state(ref, tmp_path / "gru.safetensors")
    gru = load_pytorch_safetensors(path, nn.StackedGruConfig(3, 4, 2, batch_first=False).init(dev))
    x = np.random.default_rng(9).standard_normal((5, 2, 3))
    with torch.no_grad():
        want, h_n = ref(torch.from_numpy(x))
    out, h = gru(tensor(dev, x))
    close(out.to_numpy(), want.numpy())
    close(h.to_numpy(), h_n.numpy())


@needs_torch
def test_single_layers_load_from_one_level_state_dicts(dev, tmp_path) -> None:
    x = np.random.default_rng(10).standard_normal((2, 4, 3))
    ref = perturb(torch.nn.LSTM(3, 4, batch_first=True, dtype=torch.float64))
    lstm = load_pytorch_safetensors(
        save_state(ref, tmp_path / "a.safetensors"), nn.LstmConfig(3, 4).init(dev)
    )
    with torch.no_grad():
        want, _ = ref(torch.from_numpy(x))
    close(lstm(tensor(dev, x))[0].to_numpy(), want.numpy())

    ref = perturb(torch.nn.GRU(3, 4, batch_first=True, bidirectional=True, dtype=torch.float64))
    bigru = load_pytorch_safetensors(
        save_state(ref, tmp_path / "b.safetensors"), nn.BiGruConfig(3, 4).init(dev)
    )
    with torch.no_grad():
        want, _ = ref(torch.from_numpy(x))
    close(bigru(tensor(dev, x)).to_numpy(), want.numpy())

    with pytest.raises(RecordError, match=r"Gru at .* has no PyTorch counterpart.*reset_after=True"):
        load_pytorch_safetensors(
            tmp_path / "b.safetensors", nn.BiGruConfig(3, 4, reset_after=False).init(dev)
        )


@needs_torch
def test_a_relu_state_dict_needs_the_relu_activation(dev, tmp_path) -> None:
    """The activation is not in a state dict: loading a stock (ReLU) layer into burn's default
    (GELU) encoder loads, but computes something else. The docs say to pass activation="relu"."""
    ref = perturb(torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dtype=torch.float64)).eval()
    path = save_state(torch.nn.ModuleDict({"layers": torch.nn.ModuleList([ref])}), tmp_path / "l.safetensors")
    x = np.random.default_rng(12).standard_normal((1, 3, 8))
    with torch.no_grad():
        want = ref(torch.from_numpy(x)).numpy()
    for activation, same in (("relu", True), ("gelu", False)):
        enc = load_pytorch_safetensors(
            path, nn.TransformerEncoderConfig(8, 16, 2, 1, activation=activation).init(dev)
        )
        got = enc(tensor(dev, x)).to_numpy()
        assert np.allclose(got, want, rtol=TOL, atol=TOL) == same


# -- the guide's table is the code's --------------------------------------------------------------
def test_guide_table_is_generated_from_the_adapters() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    assert text[start:stop].strip() == render_table().strip(), (
        "docs/guides/pytorch-weights.md is out of date: run "
        "python -m burn.record.pytorch_table docs/guides/pytorch-weights.md"
    )
    assert write_table(GUIDE, check=True)
    rows = {
        tuple(cell.strip() for cell in line.strip("|").split("|")) for line in render_table().splitlines()
    }
    assert (
        "TransformerEncoderLayer",
        "TransformerEncoderLayer",
        "`norm_2`",
        "`norm1`",
        "none",
        "`norm_first=True`",
    ) in rows
    gate = "`cell_gate.input_transform.weight`", "`weight_ih_l{layer}{dir}`", "rows block 3 of 4; transposed"
    assert ("Lstm", "LSTM (one level, one direction)", *gate, "always") in rows
