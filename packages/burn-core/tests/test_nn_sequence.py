"""burn.nn sequence layers (Lstm, Gru, MultiHeadAttention, Transformer encoder/decoder, position
encodings) against NumPy references, and against PyTorch on the same weights where importable.

Copying weights to PyTorch: every burn Linear weight ``[in, out]`` is transposed; torch's fused
``weight_ih`` stacks the gates in its own order (LSTM ``i, f, g, o``; GRU ``r, z, n``) and its
attention ``in_proj_weight`` stacks query, key, value. Pre-norm layers: burn's encoder uses
``norm_2`` before attention and ``norm_1`` before the feed-forward (Burn's field names), torch's
``norm1`` and ``norm2``; the decoder maps burn ``norm_3, norm_1, norm_2`` to torch ``norm1..3``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import burn
from burn import nn

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
RNG = np.random.default_rng(99)


@pytest.fixture(scope="module")
def dev():
    return nd.NdArray(float_dtype="float64").default_device()


def tensor(dev, array, **kw):
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)


def randomized(module, scale=0.5):
    def fn(path, p):
        return p.with_value(burn.Tensor.from_data(RNG.standard_normal(p.shape) * scale, device=p.device))

    return module.map(fn)


def params(module):
    return {path: p.val().to_numpy() for path, p in module.named_params()}


def close(actual, expected, tol=1e-9):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol)


def tt(a):
    return torch.from_numpy(np.array(a))  # a writable copy


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def gelu(x):
    return x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))) / 2


def gate(p, name, x, h):
    pre = f"{name}.input_transform", f"{name}.hidden_transform"
    return x @ p[pre[0] + ".weight"] + p[pre[0] + ".bias"] + h @ p[pre[1] + ".weight"] + p[pre[1] + ".bias"]


# -- recurrent ------------------------------------------------------------------------------------
def np_lstm(p, x, h, c):
    outs = []
    for t in range(x.shape[1]):
        xt = x[:, t]
        i, f, o = (sigmoid(gate(p, f"{g}_gate", xt, h)) for g in ("input", "forget", "output"))
        c = f * c + i * np.tanh(gate(p, "cell_gate", xt, h))
        h = o * np.tanh(c)
        outs.append(h)
    return np.stack(outs, 1), c, h


def np_gru(p, x, h, reset_after):
    outs = []
    for t in range(x.shape[1]):
        xt = x[:, t]
        z = sigmoid(gate(p, "update_gate", xt, h))
        r = sigmoid(gate(p, "reset_gate", xt, h))
        xn = xt @ p["new_gate.input_transform.weight"] + p["new_gate.input_transform.bias"]
        hw, hb = p["new_gate.hidden_transform.weight"], p["new_gate.hidden_transform.bias"]
        n = np.tanh(xn + (r * (h @ hw + hb) if reset_after else (r * h) @ hw + hb))
        h = (1 - z) * n + z * h
        outs.append(h)
    return np.stack(outs, 1)


def test_lstm_matches_numpy_and_returns_final_state(dev) -> None:
    lstm = randomized(nn.LstmConfig(3, 4).init(dev))
    p = params(lstm)
    assert "forget_gate.hidden_transform.weight" in p and p["forget_gate.hidden_transform.weight"].shape == (
        4,
        4,
    )
    x = RNG.standard_normal((2, 5, 3))
    out, state = lstm(tensor(dev, x))
    want, c, h = np_lstm(p, x, np.zeros((2, 4)), np.zeros((2, 4)))
    close(out.to_numpy(), want)
    close(state.cell.to_numpy(), c)
    close(state.hidden.to_numpy(), h)
    h0, c0 = RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))
    out, _ = lstm(tensor(dev, x), nn.LstmState(tensor(dev, c0), tensor(dev, h0)))
    close(out.to_numpy(), np_lstm(p, x, h0, c0)[0])


def test_lstm_in_float32_trains_as_in_float64() -> None:
    """The float32 LSTM (burn-ndarray's compiled cell) against the float64 one (the contract's
    composition) on the same weights: outputs and every gradient, through autodiff."""
    ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    B64, B32 = ad.Autodiff(nd.NdArray(float_dtype="float64")), ad.Autodiff(nd.NdArray())
    lstm64 = randomized(nn.LstmConfig(3, 6).init(B64.default_device()))
    x = RNG.standard_normal((4, 7, 3))
    results = []
    def to_float32(path: str, p: Any) -> Any:
        return p.with_value(burn.Tensor.from_data(p.val().to_numpy().astype(np.float32), backend=B32))

    lstm32 = lstm64.map(to_float32)
    for B, lstm, dtype in ((B64, lstm64, np.float64), (B32, lstm32, np.float32)):
        out, state = lstm(burn.Tensor.from_data(x.astype(dtype), backend=B))
        grads = (out.sum() + (state.cell * state.cell).sum()).backward()
        named = lstm.named_params()
        results.append((out.to_numpy(), {path: p.val().grad(grads).to_numpy() for path, p in named}))
    (out64, g64), (out32, g32) = results
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, out64, rtol=1e-5, atol=1e-6)
    assert g32.keys() == g64.keys() and len(g64) == 16
    for path in g64:
        np.testing.assert_allclose(g32[path], g64[path], rtol=1e-4, atol=1e-5, err_msg=path)


def test_functional_lstm_cell_checks_its_inputs(dev) -> None:
    from burn.tensor import module as F

    gates, cell = tensor(dev, np.zeros((2, 8))), tensor(dev, np.ones((2, 2)))
    close(F.lstm_cell(gates, cell).to_numpy(), [[0.5 * math.tanh(0.5)] * 2 + [0.5] * 2] * 2)
    with pytest.raises(burn.ShapeError, match=r"lstm_cell: gates must be \[B, 4H\] .* \(2, 8\) and \(2, 3\)"):
        F.lstm_cell(gates, tensor(dev, np.ones((2, 3))))
    with pytest.raises(burn.ShapeError, match=r"got \(2, 6\) and \(2, 2\)"):
        F.lstm_cell(tensor(dev, np.zeros((2, 6))), cell)
    with pytest.raises(burn.DTypeError, match=r"cell \(float32\) must have the dtype of gates \(float64\)"):
        F.lstm_cell(gates, cell.cast(burn.float32))
    with pytest.raises(burn.KindError, match="lstm_cell"):
        F.lstm_cell(tensor(dev, np.zeros((2, 8), np.int64), kind=burn.Int), cell)
    with pytest.raises(burn.KindError, match="lstm_cell: cell must be a Float tensor"):
        F.lstm_cell(gates, tensor(dev, np.ones((2, 2), np.int64), kind=burn.Int))


def test_functional_gru_cell_computes_and_checks_its_inputs(dev) -> None:
    from burn.tensor import module as F

    zeros, hidden = tensor(dev, np.zeros((2, 6))), tensor(dev, np.ones((2, 2)))
    close(F.gru_cell(zeros, zeros, hidden).to_numpy(), [[0.5] * 2] * 2)  # z = 0.5, n = 0
    shapes = r"gru_cell: gates_x and gates_h must be \[B, 3H\] .* \(2, 6\), \(2, 6\) and \(2, 3\)"
    with pytest.raises(burn.ShapeError, match=shapes):
        F.gru_cell(zeros, zeros, tensor(dev, np.ones((2, 3))))
    dtypes = r"hidden \(float32\) must have the dtype of gates_x \(float64\)"
    with pytest.raises(burn.DTypeError, match=dtypes):
        F.gru_cell(zeros, zeros, hidden.cast(burn.float32))
    with pytest.raises(burn.KindError, match="gru_cell: gates_h must be a Float tensor"):
        F.gru_cell(zeros, tensor(dev, np.zeros((2, 6), np.int64), kind=burn.Int), hidden)


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_matches_numpy(dev, reset_after) -> None:
    gru = randomized(nn.GruConfig(3, 4, reset_after=reset_after).init(dev))
    p = params(gru)
    x = RNG.standard_normal((2, 5, 3))
    close(gru(tensor(dev, x)).to_numpy(), np_gru(p, x, np.zeros((2, 4)), reset_after))
    h0 = RNG.standard_normal((2, 4))
    close(gru(tensor(dev, x), tensor(dev, h0)).to_numpy(), np_gru(p, x, h0, reset_after))


def test_recurrent_layers_check_shapes(dev) -> None:
    with pytest.raises(burn.ShapeError, match=r"Lstm: expected a batch-first input \[B, T, 3\]"):
        nn.LstmConfig(3, 4).init(dev)(tensor(dev, np.ones((2, 5, 4))))
    with pytest.raises(burn.ShapeError, match="initial hidden state"):
        nn.GruConfig(3, 4).init(dev)(tensor(dev, np.ones((2, 5, 3))), tensor(dev, np.ones((3, 4))))


def _torch_gates(p, names, kind):
    w = torch.cat([tt(p[f"{n}.{kind}_transform.weight"].T) for n in names])
    b = torch.cat([tt(p[f"{n}.{kind}_transform.bias"]) for n in names])
    return w, b


@needs_torch
def test_lstm_and_gru_match_torch(dev) -> None:
    x = RNG.standard_normal((3, 6, 4))
    lstm = randomized(nn.LstmConfig(4, 5).init(dev))
    p = params(lstm)
    ref = torch.nn.LSTM(4, 5, batch_first=True).double()
    names = ("input_gate", "forget_gate", "cell_gate", "output_gate")  # torch's i, f, g, o
    with torch.no_grad():
        ref.weight_ih_l0[:], ref.bias_ih_l0[:] = _torch_gates(p, names, "input")
        ref.weight_hh_l0[:], ref.bias_hh_l0[:] = _torch_gates(p, names, "hidden")
        want, (h, c) = ref(tt(x))
    out, state = lstm(tensor(dev, x))
    close(out.to_numpy(), want.numpy())
    close(state.hidden.to_numpy(), h[0].numpy())
    close(state.cell.to_numpy(), c[0].numpy())

    gru = randomized(nn.GruConfig(4, 5).init(dev))
    p = params(gru)
    ref = torch.nn.GRU(4, 5, batch_first=True).double()
    names = ("reset_gate", "update_gate", "new_gate")  # torch's r, z, n
    with torch.no_grad():
        ref.weight_ih_l0[:], ref.bias_ih_l0[:] = _torch_gates(p, names, "input")
        ref.weight_hh_l0[:], ref.bias_hh_l0[:] = _torch_gates(p, names, "hidden")
        want, _ = ref(tt(x))
    close(gru(tensor(dev, x)).to_numpy(), want.numpy())


# -- attention ------------------------------------------------------------------------------------
def np_mha(p, q_in, kv_in, heads, mask_pad=None, mask_attn=None, min_float=-1e4, prefix=""):
    def proj(name, x):
        return x @ p[f"{prefix}{name}.weight"] + p[f"{prefix}{name}.bias"]

    b, t, d = q_in.shape
    s = kv_in.shape[1]
    dk = d // heads

    def split(x, n):
        return x.reshape(b, n, heads, dk).transpose(0, 2, 1, 3)

    q, k, v = split(proj("query", q_in), t), split(proj("key", kv_in), s), split(proj("value", kv_in), s)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dk)
    if mask_pad is not None:
        scores = np.where(mask_pad[:, None, None, :], min_float, scores)
    if mask_attn is not None:
        scores = np.where(mask_attn[:, None] if mask_attn.ndim == 3 else mask_attn, min_float, scores)
    weights = softmax(scores)
    context = (weights @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
    return weights, proj("output", context)


def test_mha_self_attention_with_masks_matches_numpy(dev) -> None:
    mha = randomized(nn.MultiHeadAttentionConfig(8, 2, dropout=0.0).init(dev))
    p = params(mha)
    x = RNG.standard_normal((2, 4, 8))
    pad = np.array([[False, False, False, True], [False, False, True, True]])
    causal = nn.generate_autoregressive_mask(2, 4, dev)
    assert causal.to_numpy()[0].tolist() == np.triu(np.ones((4, 4), bool), 1).tolist()
    inp = nn.MhaInput.self_attn(tensor(dev, x)).with_mask_pad(tensor(dev, pad)).with_mask_attn(causal)
    out = mha(inp)
    weights, context = np_mha(p, x, x, 2, pad, causal.to_numpy())
    close(out.weights.to_numpy(), weights)
    close(out.context.to_numpy(), context)
    assert np.all(out.weights.to_numpy()[1, :, :, 2:][:, 2:] == 0)  # padded keys get no weight


def test_mha_cross_attention_and_2d_mask(dev) -> None:
    mha = randomized(nn.MultiHeadAttentionConfig(6, 3, dropout=0.0).init(dev))
    p = params(mha)
    q, kv = RNG.standard_normal((2, 3, 6)), RNG.standard_normal((2, 5, 6))
    mask = RNG.random((3, 5)) < 0.3
    out = mha(nn.MhaInput(tensor(dev, q), tensor(dev, kv), tensor(dev, kv), mask_attn=tensor(dev, mask)))
    weights, context = np_mha(p, q, kv, 3, mask_attn=mask)
    assert out.weights.shape == (2, 3, 3, 5)
    close(out.context.to_numpy(), context)
    with pytest.raises(burn.ShapeError, match="mask_pad must be a Bool tensor of shape"):
        mha(nn.MhaInput(tensor(dev, q), tensor(dev, kv), mask_pad=tensor(dev, np.zeros((2, 3), bool))))


def test_quiet_softmax_lets_rows_attend_to_nothing(dev) -> None:
    x = np.array([[-30.0, -40.0, -35.0], [1.0, 2.0, 3.0], [800.0, 799.0, 0.0]])
    got = nn.quiet_softmax(tensor(dev, x), 1).to_numpy()
    m = np.maximum(x.max(-1, keepdims=True), 0)
    close(got, np.exp(x - m) / (np.exp(-m) + np.exp(x - m).sum(-1, keepdims=True)))
    assert got[0].sum() < 1e-12 and np.all(np.isfinite(got))
    mha = randomized(nn.MultiHeadAttentionConfig(4, 2, dropout=0.0, quiet_softmax=True).init(dev))
    w = mha(nn.MhaInput.self_attn(tensor(dev, RNG.standard_normal((1, 3, 4))))).weights.to_numpy()
    assert np.all(w.sum(-1) < 1)


def test_padding_mask_helper(dev) -> None:
    out = nn.generate_padding_mask(0, [[5, 6, 7], [8]], device=dev)
    assert out.tensor.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert out.mask.tolist() == [[False, False, False], [False, True, True]]
    assert nn.generate_padding_mask(9, [[1, 2, 3, 4]], max_seq_length=2, device=dev).tensor.tolist() == [
        [1, 2]
    ]


def _load_torch_mha(ref, p, prefix):
    ref.in_proj_weight[:] = torch.cat([tt(p[f"{prefix}{n}.weight"].T) for n in ("query", "key", "value")])
    ref.in_proj_bias[:] = torch.cat([tt(p[f"{prefix}{n}.bias"]) for n in ("query", "key", "value")])
    ref.out_proj.weight[:] = tt(p[f"{prefix}output.weight"].T)
    ref.out_proj.bias[:] = tt(p[f"{prefix}output.bias"])


@needs_torch
def test_mha_matches_torch(dev) -> None:
    mha = randomized(nn.MultiHeadAttentionConfig(8, 4, dropout=0.0).init(dev))
    p = params(mha)
    ref = torch.nn.MultiheadAttention(8, 4, batch_first=True, dtype=torch.float64)
    q, kv = RNG.standard_normal((2, 3, 8)), RNG.standard_normal((2, 5, 8))
    pad = np.array([[False] * 4 + [True], [False] * 5])
    causal = np.triu(np.ones((3, 5), bool), 1)
    with torch.no_grad():
        _load_torch_mha(ref, p, "")
        ctx, w = ref(
            tt(q), tt(kv), tt(kv), key_padding_mask=tt(pad), attn_mask=tt(causal), average_attn_weights=False
        )
    out = mha(
        nn.MhaInput(tensor(dev, q), tensor(dev, kv), tensor(dev, kv), tensor(dev, pad), tensor(dev, causal))
    )
    close(out.context.to_numpy(), ctx.numpy())
    close(out.weights.to_numpy(), w.numpy())


# -- transformer ----------------------------------------------------------------------------------
def np_encoder_layer(p, pre, x, heads, mask_pad=None, mask_attn=None, norm_first=False):
    def ln(name, y):
        g, b = p[f"{pre}{name}.gamma"], p[f"{pre}{name}.beta"]
        return (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + 1e-5) * g + b

    def ff(y):
        h = gelu(y @ p[f"{pre}pwff.linear_inner.weight"] + p[f"{pre}pwff.linear_inner.bias"])
        return h @ p[f"{pre}pwff.linear_outer.weight"] + p[f"{pre}pwff.linear_outer.bias"]

    def attn(y):
        return np_mha(p, y, y, heads, mask_pad, mask_attn, prefix=f"{pre}mha.")[1]

    if norm_first:
        x = x + attn(ln("norm_2", x))
        return x + ff(ln("norm_1", x))
    x = ln("norm_1", x + attn(x))
    return ln("norm_2", x + ff(x))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_matches_numpy(dev, norm_first) -> None:
    cfg = nn.TransformerEncoderConfig(8, 16, 2, 2, dropout=0.0, norm_first=norm_first)
    enc = randomized(cfg.init(dev))
    p = params(enc)
    x = RNG.standard_normal((2, 4, 8))
    pad = np.array([[False, False, False, True], [False] * 4])
    want = x
    for i in range(2):
        want = np_encoder_layer(p, f"layers.{i}.", want, 2, mask_pad=pad, norm_first=norm_first)
    got = enc(nn.TransformerEncoderInput(tensor(dev, x), mask_pad=tensor(dev, pad)))
    close(got.to_numpy(), want)


def _load_torch_linear(lin, p, name):
    lin.weight[:] = tt(p[f"{name}.weight"].T)
    lin.bias[:] = tt(p[f"{name}.bias"])


def _load_torch_norm(norm, p, name):
    norm.weight[:] = tt(p[f"{name}.gamma"])
    norm.bias[:] = tt(p[f"{name}.beta"])


@needs_torch
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_and_decoder_match_torch(dev, norm_first) -> None:
    d, ff, heads = 8, 12, 2
    enc = randomized(
        nn.TransformerEncoderConfig(d, ff, heads, 1, dropout=0.0, norm_first=norm_first).init(dev)
    )
    dec = randomized(
        nn.TransformerDecoderConfig(d, ff, heads, 1, dropout=0.0, norm_first=norm_first).init(dev)
    )
    pe, pd = params(enc), params(dec)
    t_enc = torch.nn.TransformerEncoderLayer(
        d,
        heads,
        ff,
        dropout=0.0,
        activation="gelu",
        batch_first=True,
        norm_first=norm_first,
        dtype=torch.float64,
    ).eval()
    t_dec = torch.nn.TransformerDecoderLayer(
        d,
        heads,
        ff,
        dropout=0.0,
        activation="gelu",
        batch_first=True,
        norm_first=norm_first,
        dtype=torch.float64,
    ).eval()
    enc_norms = ("norm_2", "norm_1") if norm_first else ("norm_1", "norm_2")
    dec_norms = ("norm_3", "norm_1", "norm_2") if norm_first else ("norm_1", "norm_2", "norm_3")
    with torch.no_grad():
        _load_torch_mha(t_enc.self_attn, pe, "layers.0.mha.")
        _load_torch_linear(t_enc.linear1, pe, "layers.0.pwff.linear_inner")
        _load_torch_linear(t_enc.linear2, pe, "layers.0.pwff.linear_outer")
        for torch_norm, ours in zip((t_enc.norm1, t_enc.norm2), enc_norms, strict=True):
            _load_torch_norm(torch_norm, pe, f"layers.0.{ours}")
        _load_torch_mha(t_dec.self_attn, pd, "layers.0.self_attn.")
        _load_torch_mha(t_dec.multihead_attn, pd, "layers.0.cross_attn.")
        _load_torch_linear(t_dec.linear1, pd, "layers.0.pwff.linear_inner")
        _load_torch_linear(t_dec.linear2, pd, "layers.0.pwff.linear_outer")
        for torch_norm, ours in zip((t_dec.norm1, t_dec.norm2, t_dec.norm3), dec_norms, strict=True):
            _load_torch_norm(torch_norm, pd, f"layers.0.{ours}")

        src, tgt = RNG.standard_normal((2, 5, d)), RNG.standard_normal((2, 4, d))
        src_pad = np.array([[False] * 4 + [True], [False] * 5])
        causal = np.triu(np.ones((4, 4), bool), 1)
        memory = t_enc(tt(src), src_key_padding_mask=tt(src_pad))
        want = t_dec(tt(tgt), memory, tgt_mask=tt(causal), memory_key_padding_mask=tt(src_pad))

    got_memory = enc(nn.TransformerEncoderInput(tensor(dev, src), mask_pad=tensor(dev, src_pad)))
    close(got_memory.to_numpy(), memory.numpy())
    inp = nn.TransformerDecoderInput(
        tensor(dev, tgt),
        got_memory,
        target_mask_attn=tensor(dev, causal),
        memory_mask_pad=tensor(dev, src_pad),
    )
    close(dec(inp).to_numpy(), want.numpy())


@pytest.mark.parametrize("norm_first", [False, True])
def test_autoregressive_decoding_cache_gives_the_full_causal_forward(dev, norm_first) -> None:
    d, steps = 8, 5
    dec = randomized(nn.TransformerDecoderConfig(d, 12, 2, 2, dropout=0.0, norm_first=norm_first).init(dev))
    enc = randomized(nn.TransformerEncoderConfig(d, 12, 2, 2, dropout=0.0, norm_first=norm_first).init(dev))
    target, memory = RNG.standard_normal((2, steps, d)), RNG.standard_normal((2, 3, d))
    memory_pad = np.array([[False, False, True], [False] * 3])
    causal = np.triu(np.ones((steps, steps), bool), 1)
    full = nn.TransformerDecoderInput(
        tensor(dev, target),
        tensor(dev, memory),
        target_mask_attn=tensor(dev, causal),
        memory_mask_pad=tensor(dev, memory_pad),
    )
    want = dec(full).to_numpy()
    want_enc = enc(nn.TransformerEncoderInput(tensor(dev, target), mask_attn=tensor(dev, causal))).to_numpy()
    cache, enc_cache = dec.new_autoregressive_cache(), enc.new_autoregressive_cache()
    for t in (1, 2, 4, 5):  # one position at a time, and two at once (2 -> 4)
        inp = nn.TransformerDecoderInput(
            tensor(dev, target[:, :t]), tensor(dev, memory), memory_mask_pad=tensor(dev, memory_pad)
        )
        got = dec.forward_autoregressive_inference(inp, cache)
        assert got.shape == (2, t, d) and len(cache) == t
        close(got.to_numpy(), want[:, :t])
        close(
            enc.forward_autoregressive_inference(tensor(dev, target[:, :t]), enc_cache).to_numpy(),
            want_enc[:, :t],
        )
    assert len(cache.self_attn[0]) == steps and len(cache.cross_attn[0]) == 3  # memory projected once
    with pytest.raises(ValueError, match="has seen 5"):
        dec.forward_autoregressive_inference(inp, cache)
    cache.reset()
    close(dec.forward_autoregressive_inference(inp, cache).to_numpy(), want)  # all positions at once


def test_mha_bias_flags_and_transformer_activation(dev) -> None:
    mha = nn.MultiHeadAttentionConfig(8, 2, key_bias=False, output_bias=False).init(dev)
    assert [p for p, _ in mha.named_params()] == [
        "query.weight",
        "query.bias",
        "key.weight",
        "value.weight",
        "value.bias",
        "output.weight",
    ]
    enc = randomized(nn.TransformerEncoderConfig(8, 16, 2, 1, dropout=0.0, activation="relu").init(dev))
    assert enc.layers[0].pwff.activation == "relu"
    p = params(enc)
    x = RNG.standard_normal((2, 3, 8))
    h = np.maximum(x @ p["layers.0.pwff.linear_inner.weight"] + p["layers.0.pwff.linear_inner.bias"], 0)
    ff = h @ p["layers.0.pwff.linear_outer.weight"] + p["layers.0.pwff.linear_outer.bias"]
    close(enc.layers[0].pwff(tensor(dev, x)).to_numpy(), ff)
    with pytest.raises(ValueError, match="unknown activation 'swish'"):
        nn.TransformerEncoderConfig(8, 16, 2, 1, activation="swish")
    assert (
        nn.TransformerDecoderConfig(8, 16, 2, 1, layer_norm_eps=1e-3).init(dev).layers[0].norm_3.epsilon
        == 1e-3
    )


def test_transformer_param_paths_follow_burn(dev) -> None:
    dec = nn.TransformerDecoderConfig(8, 16, 2, 2).init(dev)
    paths = [path for path, _ in dec.named_params()]
    assert paths[:4] == [
        "layers.0.cross_attn.query.weight",
        "layers.0.cross_attn.query.bias",
        "layers.0.cross_attn.key.weight",
        "layers.0.cross_attn.key.bias",
    ]
    assert "layers.1.norm_3.gamma" in paths and "layers.1.pwff.linear_outer.bias" in paths
    assert paths == [path for path, _ in nn.TransformerDecoderConfig(8, 16, 2, 2).init(dev).named_params()]


# -- position encodings ---------------------------------------------------------------------------
def test_sinusoidal_positional_encoding(dev) -> None:
    pe = nn.PositionalEncodingConfig(6, max_sequence_size=10).init()
    x = RNG.standard_normal((2, 4, 6))
    pos = np.arange(4)[:, None]
    i = np.arange(3)[None]
    table = np.empty((4, 6))
    table[:, 0::2] = np.sin(pos / 10000 ** (2 * i / 6))
    table[:, 1::2] = np.cos(pos / 10000 ** (2 * i / 6))
    close(pe(tensor(dev, x)).to_numpy(), x + table)
    with pytest.raises(burn.ShapeError, match="T <= 10"):
        pe(tensor(dev, np.zeros((1, 11, 6))))
    with pytest.raises(ValueError, match="even"):
        nn.PositionalEncodingConfig(5).init()


def test_rotary_encoding_rotates_feature_pairs(dev) -> None:
    rope = nn.RotaryEncodingConfig(10, 4).init()
    x = np.array(
        [[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], [[9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]]
    )
    got = rope(tensor(dev, x[None])).to_numpy()[0]
    # Burn's own test values for this input (positions 0 and 1, theta 10000).
    close(got[0, 1], [-2.3473, 7.4492, 6.9197, 8.0696], tol=1e-4)
    close(got[1, 1], [-4.7567, 18.5034, 14.8393, 16.1492], tol=1e-4)

    rope = nn.RotaryEncodingConfig(7, 8).init()
    x = RNG.standard_normal((2, 3, 5, 8))  # [B, heads, T, D]
    got = rope.forward(tensor(dev, x), start=2).to_numpy()
    z = x[..., 0::2] + 1j * x[..., 1::2]
    angle = np.arange(2, 7)[:, None] * 10000.0 ** (-np.arange(0, 8, 2) / 8)
    z = z * np.exp(1j * angle)
    want = np.stack([z.real, z.imag], -1).reshape(x.shape)
    close(got, want)
    with pytest.raises(burn.ShapeError, match="max_sequence_length"):
        rope.forward(tensor(dev, x), start=3)
