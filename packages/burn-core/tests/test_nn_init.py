"""burn.nn initializers: formulas, fans of each layer, JSON configs, and lazy initialization (a
model built with ``Config.init`` and loaded from a record never runs an initializer)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from burn import nn
from burn.errors import ConfigError
from burn.module import Module, config
from burn.nn import Initializer
from burn.nn.init import conv_fans

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")


@pytest.fixture(scope="module")
def B():  # noqa: N802 - a backend, named like the docs name it
    return nd.NdArray(float_dtype="float64")


@pytest.fixture(scope="module")
def dev(B):  # noqa: N803
    return B.default_device()


@pytest.fixture
def calls(monkeypatch):
    """Every `Initializer.init_with` call, as (variant, shape, fan_in, fan_out)."""
    seen: list[tuple[str, tuple[int, ...], int | None, int | None]] = []
    original = Initializer.init_with

    def spy(self, shape, device, fan_in=None, fan_out=None):
        seen.append((type(self).__name__, tuple(shape), fan_in, fan_out))
        return original(self, shape, device, fan_in, fan_out)

    monkeypatch.setattr(Initializer, "init_with", spy)
    return seen


# -- formulas -------------------------------------------------------------------------------------
def test_kaiming_and_xavier_follow_their_formulas(B, dev) -> None:  # noqa: N803
    B.seed(3)
    shape, fan_in, fan_out = (300, 200), 50, 80
    cases = [
        (Initializer.KaimingUniform(gain=2.0), 2.0 / math.sqrt(fan_in), "uniform"),
        (Initializer.KaimingUniform(gain=1.0, fan_out_only=True), 1.0 / math.sqrt(fan_out), "uniform"),
        (Initializer.KaimingNormal(gain=1.5), 1.5 / math.sqrt(fan_in), "normal"),
        (Initializer.XavierUniform(gain=1.0), math.sqrt(2.0 / (fan_in + fan_out)), "uniform"),
        (Initializer.XavierNormal(gain=0.5), 0.5 * math.sqrt(2.0 / (fan_in + fan_out)), "normal"),
    ]
    for init, std, kind in cases:
        w = init.init_with(shape, dev, fan_in, fan_out).to_numpy()
        assert abs(w.std() / std - 1) < 0.02, init
        assert abs(w.mean()) < 0.02 * std * 10
        if kind == "uniform":  # bound sqrt(3) * std, reached closely with 60k draws
            bound = math.sqrt(3) * std
            assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound


def test_simple_variants(dev) -> None:
    assert (Initializer.Constant(2.5).init((2, 3), dev).to_numpy() == 2.5).all()
    assert (Initializer.Zeros().init((4,), dev).to_numpy() == 0).all()
    assert (Initializer.Ones().init((4,), dev).to_numpy() == 1).all()
    u = Initializer.Uniform(-0.1, 0.3).init((5000,), dev).to_numpy()
    assert u.min() >= -0.1 and u.max() < 0.3 and abs(u.mean() - 0.1) < 0.01
    n = Initializer.Normal(mean=1.0, std=0.5).init((20000,), dev).to_numpy()
    assert abs(n.mean() - 1.0) < 0.02 and abs(n.std() - 0.5) < 0.02


def test_missing_fans_are_reported_when_the_layer_is_built(dev) -> None:
    with pytest.raises(ValueError, match="KaimingUniform initialization needs fan_in"):
        Initializer.KaimingUniform().init((3, 3), dev)
    with pytest.raises(ValueError, match="XavierNormal initialization needs fan_out"):
        Initializer.XavierNormal().init_param((3, 3), dev, fan_in=3)
    with pytest.raises(ValueError, match="min"):
        Initializer.Uniform(1.0, 0.0)
    with pytest.raises(TypeError, match="gain must be a number"):
        Initializer.KaimingNormal(gain="big")


def test_seeded_initialization_is_reproducible(B, dev) -> None:  # noqa: N803
    def weights():
        B.seed(11)
        return nn.LinearConfig(4, 3).init(dev).weight.val().to_numpy()

    np.testing.assert_array_equal(weights(), weights())


# -- fans of the layers ---------------------------------------------------------------------------
def _materialize(module):
    for _, p in module.named_params():
        p.val()


def test_layers_pass_the_right_fans(dev, calls) -> None:
    _materialize(nn.LinearConfig(7, 5).init(dev))
    assert calls == [("KaimingUniform", (7, 5), 7, 5), ("KaimingUniform", (5,), 7, 5)]
    calls.clear()
    _materialize(nn.Conv2dConfig((4, 6), (3, 5), groups=2, bias=False).init(dev))
    assert calls == [("KaimingUniform", (6, 2, 3, 5), 2 * 15, 3 * 15)]
    calls.clear()
    _materialize(nn.Conv1dConfig(3, 8, 4, bias=False).init(dev))
    assert calls == [("KaimingUniform", (8, 3, 4), 12, 32)]
    calls.clear()
    # A transposed convolution's fan-in counts its output channels (as Burn's).
    _materialize(nn.ConvTranspose2dConfig((4, 6), (3, 3), groups=2, bias=False).init(dev))
    assert calls == [("KaimingUniform", (4, 3, 3, 3), 27, 18)]
    assert conv_fans(6, 4, (3, 3), 2) == (27, 18)
    calls.clear()
    _materialize(nn.EmbeddingConfig(10, 4).init(dev))
    assert calls == [("Normal", (10, 4), 10, 4)]
    calls.clear()
    _materialize(nn.LstmConfig(3, 5, bias=False).init(dev))
    assert sorted(set(calls)) == [("XavierNormal", (3, 5), 3, 5), ("XavierNormal", (5, 5), 5, 5)]


def test_default_linear_bound_matches_pytorch(dev) -> None:
    # KaimingUniform(gain=1/sqrt(3)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), PyTorch's default.
    w = nn.Conv2dConfig((8, 64), (3, 3)).init(dev).weight.val().to_numpy()
    bound = 1 / math.sqrt(8 * 9)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound


# -- configs (JSON) -------------------------------------------------------------------------------
ALL_VARIANTS = [
    Initializer.Constant(0.5),
    Initializer.Ones(),
    Initializer.Zeros(),
    Initializer.Uniform(-1.0, 2.0),
    Initializer.Normal(0.0, 0.02),
    Initializer.KaimingUniform(0.3, True),
    Initializer.KaimingNormal(2.0),
    Initializer.XavierUniform(1.0),
    Initializer.XavierNormal(0.7),
]


@pytest.mark.parametrize("init", ALL_VARIANTS, ids=lambda i: type(i).__name__)
def test_initializers_round_trip_through_layer_configs(init) -> None:
    cfg = nn.LinearConfig(3, 2, initializer=init)
    back = nn.LinearConfig.from_json(cfg.to_json())
    assert back == cfg and type(back.initializer) is type(init)


def test_initializer_json_is_burns_serde_shape() -> None:
    data = json.loads(nn.LinearConfig(3, 2).to_json())
    assert data["initializer"] == {"KaimingUniform": {"gain": 1 / math.sqrt(3), "fan_out_only": False}}
    assert (
        json.loads(nn.LinearConfig(3, 2, initializer=Initializer.Zeros()).to_json())["initializer"] == "Zeros"
    )
    assert nn.LinearConfig.from_dict(
        {"d_input": 1, "d_output": 1, "initializer": {"Ones": None}}
    ).initializer == (Initializer.Ones())


@pytest.mark.parametrize(
    "bad, message",
    [
        ("Glorot", "unknown initializer 'Glorot'"),
        ({"Uniform": {"min": 0.0}}, "Uniform"),
        ({"Normal": {"mean": 0.0, "std": 1.0, "scale": 2}}, "no field"),
        ({"Constant": {"value": "x"}}, "value must be a number"),
        (3, "expected an initializer"),
    ],
)
def test_bad_initializer_json_raises_config_error(bad, message) -> None:
    with pytest.raises(ConfigError, match=message):
        nn.LinearConfig.from_dict({"d_input": 1, "d_output": 1, "initializer": bad})


def test_every_layer_config_round_trips_through_json() -> None:
    configs = [
        nn.Conv2dConfig((3, 8), (3, 3), padding="same"),
        nn.Conv2dConfig((3, 8), (3, 3), padding=(1, 2)),
        nn.Conv1dConfig(2, 4, 3, padding=1),
        nn.ConvTranspose2dConfig((2, 3), (2, 2), stride=(2, 2)),
        nn.MaxPool2dConfig((2, 2), strides=(2, 2)),
        nn.AvgPool1dConfig(3),
        nn.AdaptiveAvgPool2dConfig((1, 1)),
        nn.BatchNormConfig(4),
        nn.LayerNormConfig(8),
        nn.GroupNormConfig(2, 4),
        nn.RmsNormConfig(8),
        nn.DropoutConfig(0.2),
        nn.EmbeddingConfig(10, 4),
        nn.LstmConfig(3, 4),
        nn.GruConfig(3, 4, reset_after=False),
        nn.MultiHeadAttentionConfig(8, 2, quiet_softmax=True),
        nn.TransformerEncoderConfig(8, 16, 2, 2, norm_first=True),
        nn.TransformerDecoderConfig(8, 16, 2, 1),
        nn.PositionalEncodingConfig(8),
        nn.RotaryEncodingConfig(16, 8),
        nn.PReluConfig(3),
        nn.SwiGluConfig(4, 5),
        nn.LeakyReluConfig(0.1),
        nn.HardSigmoidConfig(),
        nn.CrossEntropyLossConfig(pad_tokens=[0], weights=[1.0, 2.0], smoothing=0.1),
        nn.BinaryCrossEntropyLossConfig(logits=True),
        nn.HuberLossConfig(0.5),
        nn.KLDivLossConfig(True),
    ]
    for cfg in configs:
        assert type(cfg).from_json(cfg.to_json()) == cfg, cfg
    with pytest.raises(ConfigError, match="padding"):
        nn.Conv2dConfig.from_dict({"channels": [1, 1], "kernel_size": [3, 3], "padding": "full"})


# -- lazy initialization --------------------------------------------------------------------------
class Net(Module):
    embed: nn.Embedding
    encoder: nn.TransformerEncoder
    blocks: list
    heads: dict
    norm: nn.BatchNorm


@config
class NetConfig:
    vocab: int = 11
    d_model: int = 8

    def init(self, device) -> Net:
        d = self.d_model
        return Net(
            embed=nn.EmbeddingConfig(self.vocab, d).init(device),
            encoder=nn.TransformerEncoderConfig(d, 16, 2, 2).init(device),
            blocks=[nn.LstmConfig(d, d).init(device), nn.Conv1dConfig(d, d, 3).init(device)],
            heads={"cls": nn.LinearConfig(d, 3).init(device), "gate": nn.SwiGluConfig(d, d).init(device)},
            norm=nn.BatchNormConfig(d).init(device),
        )


def test_config_init_runs_no_initializer_until_a_param_is_used(dev, calls) -> None:
    net = NetConfig().init(dev)
    assert calls == []
    assert net.num_params() > 0 and "encoder.layers.1.mha.output.weight" in dict(net.named_params())
    net.heads["cls"].weight.val()
    net.heads["cls"].weight.val()
    assert calls == [("KaimingUniform", (8, 3), 8, 3)]  # once, on first use


def test_loading_a_record_into_a_fresh_model_never_initializes(dev, calls, tmp_path) -> None:
    source = NetConfig().init(dev)
    record = source.into_record()
    calls.clear()

    loaded = NetConfig().init(dev).load_record(record)
    via_file = NetConfig().init(dev).load_file(source.save_file(tmp_path / "net"), device=dev)
    assert calls == []
    # The default recorder saves at full precision (float32): the file round trip is approximate.
    for model, tol in ((loaded, 0.0), (via_file, 1e-6)):
        for (path, p), (_, q) in zip(model.named_params(), source.named_params(), strict=True):
            assert p.id == q.id, path
            np.testing.assert_allclose(p.val().to_numpy(), q.val().to_numpy(), rtol=tol, atol=tol)
    assert calls == []  # reading the loaded params ran nothing either
