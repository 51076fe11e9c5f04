"""burn.compile.step: a whole training step (forward, backward, optimizer update) compiled on
autodiff(capture(x)) equals the eager step bitwise over consecutive steps, with the optimizer's
state advancing and the learning rate changing between calls without a retrace."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import burn
from burn import nn, optim
from burn.capture.compiler import CompileWarning
from burn.errors import BackendNotFoundError
from burn.module import Module
from burn.tensor import Tensor

BACKEND = os.environ.get("BURN_COMPILE_TEST_BACKEND", "ndarray")
try:
    AD = burn.backend(f"autodiff({BACKEND})")
except BackendNotFoundError as e:  # a tox env without that backend (core; ndarray has no autodiff)
    pytest.skip(str(e), allow_module_level=True)
DEV = AD.default_device()
RNG = np.random.default_rng(11)


class Mlp(Module):
    fc1: nn.Linear
    fc2: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(burn.activation.relu(self.fc1(x)))


def _x(*shape: int) -> Tensor:
    return Tensor.from_data(RNG.normal(size=shape).astype(np.float32), DEV)


def _np(t: Tensor) -> np.ndarray:
    return t.to_data().to_numpy()

def _ready(model: Any) -> Any:
    """`model` with its lazy params initialized: a compiled function's first call with
    uninitialized params runs eagerly (a warmup, see test_compile_learner.py), and these tests
    count traces from the first call."""
    model.visit(lambda _path, p: p.val())
    return model



def _same(got: np.ndarray, want: np.ndarray, err_msg: str = "") -> None:
    """Bitwise on ndarray (the same kernels run); other backends' fused kernels may round apart."""
    if BACKEND == "ndarray":
        np.testing.assert_array_equal(got, want, err_msg=err_msg)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=err_msg)


def _mse(m: Module, x: Tensor, y: Tensor) -> Tensor:
    return (m(x) - y).square().mean()


def _eager_step(
    loss_fn: Callable[..., Tensor], opt: Any, lr: float, model: Any, *batch: Any
) -> tuple[Tensor, Any]:
    loss = loss_fn(model, *batch)
    grads = optim.GradientsParams.from_grads(loss.backward(), model)
    return loss, opt.step(lr, model, grads)


OPTIMIZERS = {
    "sgd_momentum": lambda: optim.SgdConfig(momentum=optim.MomentumConfig(0.9)).init(),
    "adam": lambda: optim.AdamConfig().init(),
    # the decoupled decay's factor 1 - lr * wd, a scalar input like the lr
    "adamw": lambda: optim.AdamWConfig(weight_decay=0.05).init(),
    # AMSGrad's running maximum and the coupled weight decay: the eager step's ops around or
    # instead of the fused op
    "adam_amsgrad": lambda: optim.AdamConfig(amsgrad=True).init(),
    "adam_coupled_decay": lambda: optim.AdamConfig(weight_decay=optim.WeightDecayConfig(0.01)).init(),
    "adamw_amsgrad": lambda: optim.AdamWConfig(weight_decay=0.05, amsgrad=True).init(),
    # the ops of the eager step, their host values (decayed lr, bias corrections) scalar inputs
    "sgd": lambda: optim.SgdConfig().init(),
    "sgd_decay": lambda: optim.SgdConfig(weight_decay=optim.WeightDecayConfig(0.01)).init(),
    "sgd_nesterov": lambda: optim.SgdConfig(
        momentum=optim.MomentumConfig(0.9, 0.0, nesterov=True), weight_decay=optim.WeightDecayConfig(0.01)
    ).init(),
    "rmsprop": lambda: optim.RmsPropConfig().init(),
    "rmsprop_centered": lambda: optim.RmsPropConfig(
        centered=True, weight_decay=optim.WeightDecayConfig(0.01)
    ).init(),
    "adagrad": lambda: optim.AdaGradConfig(lr_decay=0.1, weight_decay=optim.WeightDecayConfig(0.01)).init(),
    "lion": lambda: optim.LionConfig(weight_decay=0.1).init(),
    "adan": lambda: optim.AdanConfig(weight_decay=0.02).init(),
    "adan_no_prox": lambda: optim.AdanConfig(weight_decay=0.02, no_prox=True).init(),
    # per-param clipping is traced into the program (the Tensor API's ops on the gradient)
    "adam_clip_norm": lambda: optim.AdamConfig(
        gradient_clipping=optim.GradientClippingConfig.norm(0.05)
    ).init(),
    "lion_clip_value": lambda: optim.LionConfig(
        gradient_clipping=optim.GradientClippingConfig.value(0.01)
    ).init(),
    # the global norm's factor on the device: no host read, so inside the program too
    "adagrad_clip_global": lambda: optim.AdaGradConfig(
        gradient_clipping=optim.GradientClippingConfig.global_norm(0.05)
    ).init(),
}
# Replays that ran the update inside the program, of the 4 after the traced call.
PROGRAM_UPDATES = dict.fromkeys(OPTIMIZERS, 4)

MODELS = {
    "mlp": (
        lambda: _ready(Mlp(nn.LinearConfig(16, 32).init(DEV), nn.LinearConfig(32, 4).init(DEV))),
        (8, 16), (8, 4),
    ),
    "transformer_block": (
        lambda: nn.TransformerEncoderConfig(32, 64, 4, 1, dropout=0.0, norm_first=True).init(DEV),
        (2, 7, 32), (2, 7, 32),
    ),
}


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_compiled_step_equals_eager_bitwise_over_five_steps(model_name: str, opt_name: str) -> None:
    build, xs, ys = MODELS[model_name]
    eager_model = compiled_model = build()
    eager_opt, compiled_opt = OPTIMIZERS[opt_name](), OPTIMIZERS[opt_name]()
    step = burn.compile.step(_mse, compiled_opt)
    for i in range(5):
        x, y = _x(*xs), _x(*ys)
        lr = 0.01 / (i + 1)  # a new learning rate at every call: an argument, not a constant
        eager_loss, eager_model = _eager_step(_mse, eager_opt, lr, eager_model, x, y)
        compiled_loss, compiled_model = step(lr, compiled_model, x, y)
        _same(_np(compiled_loss), _np(eager_loss))
        for (path, a), (_, b) in zip(eager_model.named_params(), compiled_model.named_params(), strict=True):
            _same(_np(b.val()), _np(a.val()), err_msg=f"step {i} param {path}")
    # the optimizer state advanced as the eager one's (Adam's step count, moments, velocity)
    for key, state in eager_opt.to_record().items():
        other = compiled_opt.to_record()[key]
        for name, value in state.items():
            if isinstance(value, Tensor):
                _same(_np(other[name]), _np(value))
            else:
                assert other[name] == value
    if opt_name == "adam":
        assert {s["time"] for s in compiled_opt.to_record().values()} == {5}
    s = step.stats()
    assert (s["traces"], s["replays"], s["fallbacks"], s["recompiles"]) == (1, 4, 0, 0)
    assert s["program_updates"] == PROGRAM_UPDATES[opt_name]


def _big_mlp() -> Mlp:
    # 256 x 256 float32 weights: 256 KiB, above burn-ndarray's in-place threshold (64 KiB)
    return _ready(Mlp(nn.LinearConfig(256, 256).init(DEV), nn.LinearConfig(256, 8).init(DEV)))


def test_update_inside_the_program_reads_lr_and_step_as_inputs_and_updates_moments_in_place() -> None:
    eager_model = compiled_model = _big_mlp()
    eager_opt, compiled_opt = optim.AdamConfig().init(), optim.AdamConfig().init()
    step = burn.compile.step(_mse, compiled_opt)
    x, y = _x(16, 256), _x(16, 8)
    buffers: list[int] = []
    for i in range(6):
        lr = 0.02 * 0.5**i
        eager_loss, eager_model = _eager_step(_mse, eager_opt, lr, eager_model, x, y)
        compiled_loss, compiled_model = step(lr, compiled_model, x, y)
        _same(_np(compiled_loss), _np(eager_loss))
        for (path, a), (_, b) in zip(eager_model.named_params(), compiled_model.named_params(), strict=True):
            _same(_np(b.val()), _np(a.val()), err_msg=f"step {i} param {path}")
        # (no local keeps the state: a held moment is only read, as a held record's)
        buffers.append(id(compiled_opt.states[compiled_model.fc1.weight.id]["moment_1"]._p))
    s = step.stats()
    assert (s["traces"], s["replays"], s["program_updates"]) == (1, 5, 5)
    if BACKEND == "ndarray":
        # the replays wrote the new first moment into the old one's buffer
        assert len(set(buffers[1:])) == 1
    entry = next(e for e in step._cache.values() if hasattr(e, "plan"))
    text = str(entry.updates[(False, False)].plan.program)
    assert "float_adam_step" in text and "s0:" in text  # the step size is a scalar input
    assert entry.updates[(False, False)].plan.program.calls[-1].op == "float_adam_step"


class CausalLm(Module):
    tokens: nn.Embedding
    blocks: nn.TransformerEncoder
    head: nn.Linear

    def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
        return self.head(self.blocks(nn.TransformerEncoderInput(self.tokens(ids), mask_attn=mask)))


def test_causal_attention_step_equals_eager_bitwise() -> None:
    """A GPT-style step: the causal mask [B, 1, T, T] broadcasts over the heads in the scores'
    mask_fill, whose eager layout differs from a fused kernel's: the plan leaves it unfused."""
    from burn.nn.attention import generate_autoregressive_mask

    SEQ = 128  # noqa: N806 - a constant of this test

    def build() -> CausalLm:
        return _ready(CausalLm(
            nn.EmbeddingConfig(32, 16).init(DEV),
            nn.TransformerEncoderConfig(16, 32, 4, 1, dropout=0.0, norm_first=True).init(DEV),
            nn.LinearConfig(16, 32).init(DEV),
        ))  # fmt: skip

    ce = nn.CrossEntropyLossConfig().init()

    def loss_fn(m: Module, ids: Tensor, mask: Tensor, targets: Tensor) -> Tensor:
        return ce(m(ids, mask).reshape((-1, 32)), targets)

    # Long enough that the softmax and products over the scores sum in a layout-dependent order.
    ids_np = RNG.integers(0, 32, size=(2, SEQ + 1))
    ids = Tensor.from_data(ids_np[:, :-1].astype(np.int64), DEV)
    targets = Tensor.from_data(ids_np[:, 1:].reshape(-1).astype(np.int64), DEV)
    mask = generate_autoregressive_mask(2, SEQ, DEV)
    eager_model = compiled_model = build()
    eager_opt, compiled_opt = optim.AdamConfig().init(), optim.AdamConfig().init()
    step = burn.compile.step(loss_fn, compiled_opt)
    for i in range(4):
        _, eager_model = _eager_step(loss_fn, eager_opt, 0.01, eager_model, ids, mask, targets)
        _, compiled_model = step(0.01, compiled_model, ids, mask, targets)
        for (path, a), (_, b) in zip(eager_model.named_params(), compiled_model.named_params(), strict=True):
            _same(_np(b.val()), _np(a.val()), err_msg=f"step {i} param {path}")
    assert step.stats()["program_updates"] == 3


def test_update_inside_the_program_leaves_a_held_record_unchanged() -> None:
    model = _big_mlp()
    opt = optim.SgdConfig(momentum=optim.MomentumConfig(0.9)).init()
    step = burn.compile.step(_mse, opt)
    x, y = _x(16, 256), _x(16, 8)
    for _ in range(2):  # traced, then the velocity exists
        _, model = step(0.1, model, x, y)
    record = opt.to_record()
    held = {k: _np(v["velocity"]).copy() for k, v in record.items()}
    _, model = step(0.1, model, x, y)
    assert step.stats()["program_updates"] == 2  # the calls after the traced one
    now = opt.to_record()
    for k, v in record.items():
        np.testing.assert_array_equal(_np(v["velocity"]), held[k])  # a snapshot, not written into
        assert not np.array_equal(_np(now[k]["velocity"]), held[k])  # while the state advanced


def test_global_norm_clipping_inside_and_a_loaded_record_eager_once() -> None:
    # clipping by the global norm computes its factor on the device: the update stays inside
    clipped = optim.AdamConfig(gradient_clipping=optim.GradientClippingConfig.global_norm(0.5)).init()
    eager_clipped = optim.AdamConfig(gradient_clipping=optim.GradientClippingConfig.global_norm(0.5)).init()
    model = eager_model = _big_mlp()
    step = burn.compile.step(_mse, clipped)
    x, y = _x(16, 256), _x(16, 8)
    for _ in range(3):
        _, model = step(0.01, model, x, y)
        _, eager_model = _eager_step(_mse, eager_clipped, 0.01, eager_model, x, y)
    assert step.stats()["program_updates"] == 2
    _same(_np(model.fc1.weight.val()), _np(eager_model.fc1.weight.val()))
    # a state loaded from a record runs eagerly once (it is made ready for the param), then inside
    opt = optim.AdamConfig().init()
    step = burn.compile.step(_mse, opt)
    for _ in range(2):
        _, model = step(0.01, model, x, y)
    opt.load_record(opt.to_record())
    _, model = step(0.01, model, x, y)
    assert step.stats()["program_updates"] == 1  # the second call only: the third's state was loaded
    _, model = step(0.01, model, x, y)
    assert step.stats()["program_updates"] == 2  # the loaded state was made ready by the eager step


def test_compiled_step_trains_and_backward_ops_are_in_the_program() -> None:
    model = _ready(Mlp(nn.LinearConfig(16, 32).init(DEV), nn.LinearConfig(32, 4).init(DEV)))
    step = burn.compile.step(_mse, optim.AdamConfig().init())
    x, y = _x(32, 16), _x(32, 4)
    losses = [float(step(1e-2, model := step(1e-2, model, x, y)[1], x, y)[0].item()) for _ in range(5)]
    assert losses[-1] < losses[0]
    entry = next(e for e in step._cache.values() if hasattr(e, "plan"))
    ops = entry.plan.program.ops()
    assert "float_matmul" in ops and len(entry.plan.program.outputs) == 1 + 4  # loss, 4 grads
    assert "relu_backward" in ops  # the backward pass was recorded, below the autodiff layer


def test_step_with_a_host_read_falls_back_to_eager_with_a_warning() -> None:
    def loss_fn(m: Module, x: Tensor, y: Tensor) -> Tensor:
        loss = _mse(m, x, y)
        if loss.item() > 1e9:  # data-dependent control flow
            return loss * 0.0
        return loss

    model = eager_model = _ready(Mlp(nn.LinearConfig(16, 32).init(DEV), nn.LinearConfig(32, 4).init(DEV)))
    opt, eager_opt = optim.SgdConfig().init(), optim.SgdConfig().init()
    step = burn.compile.step(loss_fn, opt)
    x, y = _x(8, 16), _x(8, 4)
    with pytest.warns(CompileWarning, match="float_into_data"):
        loss, model = step(0.1, model, x, y)
    eager_loss, eager_model = _eager_step(loss_fn, eager_opt, 0.1, eager_model, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per reason
        loss, model = step(0.1, model, x, y)
    eager_loss, eager_model = _eager_step(loss_fn, eager_opt, 0.1, eager_model, x, y)
    _same(_np(loss), _np(eager_loss))
    for (_, a), (_, b) in zip(eager_model.named_params(), model.named_params(), strict=True):
        _same(_np(b.val()), _np(a.val()))
    s = step.stats()
    assert (s["traces"], s["replays"], s["fallbacks"]) == (1, 0, 2)
    assert burn.compile.stats()[step.name]["fallbacks"] == 2


def test_new_batch_shape_retraces_and_non_autodiff_model_is_refused() -> None:
    model = _ready(Mlp(nn.LinearConfig(16, 32).init(DEV), nn.LinearConfig(32, 4).init(DEV)))
    step = burn.compile.step(_mse, optim.SgdConfig().init())
    for n in (8, 8, 4, 4):
        _, model = step(0.1, model, _x(n, 16), _x(n, 4))
    s = step.stats()
    assert (s["traces"], s["recompiles"], s["replays"]) == (2, 1, 2)
    plain = nn.LinearConfig(2, 2).init(burn.backend(BACKEND).default_device())
    x = Tensor.ones((1, 2), backend=BACKEND)
    with pytest.raises(TypeError, match="autodiff backend"):
        step(0.1, plain, x, x)
    with pytest.raises(TypeError, match=r"step\(lr, model, \*batch\)"):
        step(model, 0.1, x, x)  # type: ignore[arg-type]


class BnNet(Module):
    conv: nn.Conv2d
    bn: nn.BatchNorm

    def forward(self, x: Tensor) -> Tensor:
        return self.bn(self.conv(x))


def test_step_replacing_batch_norm_statistics_runs_eagerly_and_updates_them() -> None:
    model = _ready(BnNet(nn.Conv2dConfig((2, 3), (3, 3)).init(DEV), nn.BatchNormConfig(3).init(DEV)))
    # a copy: a training forward replaces the statistics on the module object itself
    eager_model = model.map(lambda _path, p: p.with_value(p.val()))
    assert eager_model.bn is not model.bn
    opt, eager_opt = optim.SgdConfig().init(), optim.SgdConfig().init()
    step = burn.compile.step(lambda m, x: m(x).square().mean(), opt)
    x = _x(4, 2, 6, 6)
    before = _np(model.bn.running_mean.val())
    with pytest.warns(CompileWarning, match="running_mean"):
        loss, model = step(0.1, model, x)
    eager_loss, eager_model = _eager_step(lambda m, v: m(v).square().mean(), eager_opt, 0.1, eager_model, x)
    assert not np.array_equal(_np(model.bn.running_mean.val()), before)
    _same(_np(loss), _np(eager_loss))
    for (path, a), (_, b) in zip(eager_model.named_params(), model.named_params(), strict=True):
        _same(_np(b.val()), _np(a.val()), err_msg=path)
    assert step.stats()["fallbacks"] == 1 and step.stats()["replays"] == 0


@pytest.mark.parametrize("opt_name", ["adagrad", "lion", "adan", "sgd_decay", "rmsprop_centered"])
def test_a_scheduler_changing_the_lr_never_retraces(opt_name: str) -> None:
    """The lr a scheduler gives at each step, and what the update derives from it and the step
    count (AdaGrad's decayed lr, Adan's bias corrections, the decay factors), are scalar inputs
    of the program: five steps, one trace, and the same params as the eager run."""
    from burn.optim.lr_scheduler import CosineAnnealingLrSchedulerConfig

    eager_model = compiled_model = MODELS["mlp"][0]()
    eager_opt, compiled_opt = OPTIMIZERS[opt_name](), OPTIMIZERS[opt_name]()
    eager_lrs, compiled_lrs = (CosineAnnealingLrSchedulerConfig(0.05, 4).init() for _ in range(2))
    step = burn.compile.step(_mse, compiled_opt)
    seen = set()
    for _ in range(6):
        x, y = _x(8, 16), _x(8, 4)
        lr = compiled_lrs.step()
        seen.add(lr)
        _, eager_model = _eager_step(_mse, eager_opt, eager_lrs.step(), eager_model, x, y)
        _, compiled_model = step(lr, compiled_model, x, y)
    assert len(seen) >= 5  # the lr did change at every step
    for (path, a), (_, b) in zip(eager_model.named_params(), compiled_model.named_params(), strict=True):
        _same(_np(b.val()), _np(a.val()), err_msg=f"param {path}")
    s = step.stats()
    assert (s["traces"], s["replays"], s["recompiles"], s["program_updates"]) == (1, 5, 0, 5)


@pytest.mark.parametrize("opt_name", ["adam", "adan", "sgd_momentum", "adam_clip_norm"])
def test_gradient_accumulation_updates_inside_the_program(opt_name: str) -> None:
    """The last micro-batch of a group adds its gradients to the earlier ones' sum inside the
    program (``accumulated + grad``, `GradientsAccumulator`'s op) before the update."""
    eager_model = compiled_model = MODELS["mlp"][0]()
    eager_opt, compiled_opt = OPTIMIZERS[opt_name](), OPTIMIZERS[opt_name]()
    step = burn.compile.step(_mse, compiled_opt)
    for group in range(3):
        batches = [(_x(8, 16), _x(8, 4)) for _ in range(3)]
        lr = 0.02 / (group + 1)
        eager_acc, compiled_acc = optim.GradientsAccumulator(), optim.GradientsAccumulator()
        for k, (x, y) in enumerate(batches):
            loss = _mse(eager_model, x, y)
            eager_acc.accumulate(optim.GradientsParams.from_grads(loss.backward(), eager_model))
            if k < 2:
                _, grads = step.grads(compiled_model, x, y)
                compiled_acc.accumulate(grads)
            else:
                _, compiled_model = step(lr, compiled_model, x, y, accumulated=compiled_acc.grads())
        eager_model = eager_opt.step(lr, eager_model, eager_acc.grads())
        for (path, a), (_, b) in zip(eager_model.named_params(), compiled_model.named_params(), strict=True):
            _same(_np(b.val()), _np(a.val()), err_msg=f"group {group} param {path}")
    s = step.stats()
    assert (s["traces"], s["fallbacks"]) == (1, 0)
    # the first group's update made the state (eager); the stateless or later ones run inside
    assert s["program_updates"] == 2


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the inf batch
@pytest.mark.parametrize("opt_name", ["adam", "lion", "rmsprop"])
def test_grad_scaler_unscales_checks_and_skips_inside_the_program(opt_name: str) -> None:
    """With ``scaler=``, the program unscales, probes for inf/NaN and keeps the old params and
    state where the probe is NaN: a batch with an inf skips the step (and the scale halves, as
    in the eager loop), one host read per step for the scaler's verdict."""
    eager_model = compiled_model = MODELS["mlp"][0]()
    eager_opt, compiled_opt = OPTIMIZERS[opt_name](), OPTIMIZERS[opt_name]()
    eager_scaler = burn.amp.GradScaler(init_scale=2.0**10, growth_interval=3)
    compiled_scaler = burn.amp.GradScaler(init_scale=2.0**10, growth_interval=3)

    def scaled(m: Module, x: Tensor, y: Tensor, scale: float) -> Tensor:
        return _mse(m, x, y) * scale

    step = burn.compile.step(scaled, compiled_opt)
    for i in range(7):
        xs = RNG.normal(size=(8, 16)).astype(np.float32)
        if i == 4:
            xs[0, 0] = np.inf  # this step's gradients overflow: skipped, the scale halves
        x, y = Tensor.from_data(xs, DEV), _x(8, 4)
        lr = 0.01 / (i + 1)
        loss = scaled(eager_model, x, y, eager_scaler.get_scale())
        grads = optim.GradientsParams.from_grads(loss.backward(), eager_model)
        eager_model = eager_scaler.step(eager_opt, eager_model, grads, lr)
        eager_scaler.update()
        scale = compiled_scaler.get_scale()
        _, compiled_model = step(lr, compiled_model, x, y, scale, scaler=compiled_scaler)
        assert compiled_scaler.found_inf == (i == 4)
        compiled_scaler.update()
        assert compiled_scaler.to_record() == eager_scaler.to_record()
        for (path, a), (_, b) in zip(eager_model.named_params(), compiled_model.named_params(), strict=True):
            _same(_np(b.val()), _np(a.val()), err_msg=f"step {i} param {path}")
    for key, state in eager_opt.to_record().items():
        for name, value in state.items():
            other = compiled_opt.to_record()[key][name]
            if isinstance(value, Tensor):
                _same(_np(other), _np(value))
            else:
                assert other == value  # the skipped step did not count (Adam's time)
    s = step.stats()
    # the scale (an argument) is 2**10 at steps 0-2, grows to 2**11 for steps 3-4 and halves back
    # after step 4's overflow: two signatures, traced at steps 0 and 3, the rest replayed
    assert (s["traces"], s["fallbacks"]) == (2, 0), s
    assert s["program_updates"] == s["replays"] == 5, s


def test_rmsprop_update_inside_the_program_writes_its_averages_in_place() -> None:
    """``float_rmsprop_step`` gets its dying operands handed over as Adam's op does: burn-ndarray
    writes the new square average into the old one's buffer, and the params stay eager's bits."""
    eager_model = compiled_model = _big_mlp()
    eager_opt = optim.RmsPropConfig(centered=True).init()
    compiled_opt = optim.RmsPropConfig(centered=True).init()
    step = burn.compile.step(_mse, compiled_opt)
    buffers = []
    for i in range(5):
        x, y = _x(16, 256), _x(16, 8)
        _, eager_model = _eager_step(_mse, eager_opt, 0.01, eager_model, x, y)
        _, compiled_model = step(0.01, compiled_model, x, y)
        for (path, a), (_, b) in zip(eager_model.named_params(), compiled_model.named_params(), strict=True):
            _same(_np(b.val()), _np(a.val()), err_msg=f"step {i} param {path}")
        buffers.append(id(compiled_opt.states[compiled_model.fc1.weight.id]["square_avg"]._p))
    assert step.stats()["program_updates"] == 4
    if BACKEND == "ndarray":
        assert len(set(buffers[1:])) == 1
