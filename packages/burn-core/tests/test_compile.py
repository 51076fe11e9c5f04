"""burn.compile: replays equal eager runs bitwise, read params at each call, keep random ops
advancing, fall back to eager with a warning naming the reason, and count what they do."""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import pytest

import burn
from burn import nn, optim
from burn.capture import trace
from burn.capture.compiler import CompileWarning
from burn.capture.lower import Plan
from burn.errors import BackendNotFoundError
from burn.module import Module
from burn.tensor import Tensor

BACKEND = os.environ.get("BURN_COMPILE_TEST_BACKEND", "ndarray")
try:
    B = burn.backend(BACKEND)
except BackendNotFoundError as e:  # a tox env without that backend (core; ndarray has no autodiff)
    pytest.skip(str(e), allow_module_level=True)


def _autodiff() -> Any:
    """The autodiff backend over BACKEND, or a skip where burn-autodiff is not installed."""
    try:
        return burn.backend(f"autodiff({BACKEND})")
    except BackendNotFoundError as e:
        pytest.skip(str(e))
DEV = B.default_device()
RNG = np.random.default_rng(5)


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



class Mlp(Module):
    fc1: nn.Linear
    fc2: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(burn.activation.relu(self.fc1(x)))


def _mlp() -> Mlp:
    return _ready(Mlp(nn.LinearConfig(16, 32).init(DEV), nn.LinearConfig(32, 4).init(DEV)))


def _autodiff_mlp_batch() -> tuple[Mlp, Tensor, Tensor]:
    """An `Mlp`, an ``[8, 16]`` input and an ``[8, 4]`` target on autodiff(BACKEND)."""
    dev = _autodiff().default_device()
    model = _ready(Mlp(nn.LinearConfig(16, 32).init(dev), nn.LinearConfig(32, 4).init(dev)))
    x, y = (Tensor.from_data(RNG.normal(size=shape).astype(np.float32), dev) for shape in ((8, 16), (8, 4)))
    return model, x, y


def test_mlp_forward_equals_eager_bitwise_and_replays() -> None:
    model = _mlp()

    @burn.compile
    def forward(m: Mlp, x: Tensor) -> Tensor:
        return m(x) * 0.5 + 1.0

    for _ in range(3):
        x = _x(8, 16)
        np.testing.assert_array_equal(_np(forward(model, x)), _np(model(x) * 0.5 + 1.0))
    s = forward.stats()
    assert (s["traces"], s["replays"], s["fallbacks"], s["recompiles"]) == (1, 2, 0, 0)


def test_transformer_block_forward_equals_eager_bitwise() -> None:
    layer = _ready(nn.TransformerEncoderConfig(32, 64, 4, 1, dropout=0.0, norm_first=True).init(DEV))
    compiled = burn.compile(layer)
    for _ in range(2):
        x = _x(2, 7, 32)
        np.testing.assert_array_equal(_np(compiled(x)), _np(layer(x)))
    s = compiled.stats()
    assert s["replays"] == 1
    if BACKEND == "ndarray":  # layer norm and residual chains run as fused kernels
        assert s["fused_groups"] >= 1 and s["kernels"] >= s["fused_groups"]


def test_loss_equals_eager_bitwise() -> None:
    loss_fn = nn.MseLoss()

    @burn.compile
    def loss(m: Mlp, x: Tensor, y: Tensor) -> Tensor:
        return loss_fn(m(x), y)

    model = _mlp()
    for _ in range(2):
        x, y = _x(8, 16), _x(8, 4)
        np.testing.assert_array_equal(_np(loss(model, x, y)), _np(loss_fn(model(x), y)))
    assert loss.stats()["replays"] == 1


def test_params_are_read_at_each_call_after_an_optimizer_step() -> None:
    model, x, y = _autodiff_mlp_batch()
    loss_fn = nn.MseLoss()

    @burn.compile
    def loss(m: Mlp, x: Tensor, y: Tensor) -> Tensor:
        return loss_fn(m(x), y)

    opt = optim.SgdConfig().init()
    before = _np(loss(model, x, y))
    for _ in range(2):
        value = loss(model, x, y)  # replayed on the autodiff backend: backward still works
        model = opt.step(0.1, model, optim.GradientsParams.from_grads(value.backward(), model))
    after = loss(model, x, y)
    np.testing.assert_array_equal(_np(after), _np(loss_fn(model(x), y)))
    assert _np(after) < before
    assert loss.stats()["traces"] == 1 and loss.stats()["replays"] == 3


def test_dropout_draws_new_masks_at_each_replay() -> None:
    drop = nn.DropoutConfig(0.5).init().train()

    @burn.compile
    def f(d: nn.Dropout, x: Tensor) -> Tensor:
        return d(x) + 0.0

    x = Tensor.ones((64, 64), device=DEV)
    masks = [_np(f(drop, x)) for _ in range(3)]
    assert f.stats()["replays"] == 2
    assert not np.array_equal(masks[1], masks[2]) and not np.array_equal(masks[0], masks[1])
    for m in masks:  # kept values scaled by 1 / keep, dropped ones zero
        assert set(np.unique(m).tolist()) <= {0.0, 2.0}
    # eval mode is another signature: no dropout there
    np.testing.assert_array_equal(_np(f(drop.eval(), x)), _np(x))


def test_host_read_falls_back_to_eager_with_a_warning_naming_the_op() -> None:
    @burn.compile
    def f(x: Tensor) -> Tensor:
        if x.sum().item() > 0:  # data-dependent control flow
            return x * 2.0
        return x - 1.0

    pos, neg = Tensor.from_data([1.0, 2.0], DEV), Tensor.from_data([-1.0, -2.0], DEV)
    with pytest.warns(CompileWarning, match="float_into_data"):
        assert f(pos).tolist() == [2.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per reason
        assert f(neg).tolist() == [-2.0, -3.0]
        assert f(pos).tolist() == [2.0, 4.0]
    s = f.stats()
    assert s["replays"] == 0 and s["fallbacks"] == 3


def test_closed_over_tensor_falls_back_with_a_warning() -> None:
    w = _x(3)

    @burn.compile
    def f(x: Tensor) -> Tensor:
        return x + w

    x = _x(3)
    with pytest.warns(CompileWarning, match="closes over"):
        np.testing.assert_array_equal(_np(f(x)), _np(x + w))


def test_recompile_limit_warns_once_then_runs_eagerly() -> None:
    @burn.compile(max_recompiles=2)
    def f(x: Tensor, k: float) -> Tensor:
        return x * k

    x = _x(4)
    f(x, 1.0)
    f(x, 2.0)
    f(x, 2.0)
    with pytest.warns(CompileWarning, match="max_recompiles=2"):
        np.testing.assert_array_equal(_np(f(x, 3.0)), _np(x * 3.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x, 4.0)
    f(_x(5), 1.0)  # a new shape is a new signature too
    s = f.stats()
    assert (s["traces"], s["recompiles"], s["replays"], s["fallbacks"]) == (2, 1, 1, 3)


def test_unhashable_argument_falls_back() -> None:
    @burn.compile
    def f(x: Tensor, k: np.ndarray) -> Tensor:
        return x * float(k)

    with pytest.warns(CompileWarning, match="unhashable ndarray"):
        assert f(Tensor.from_data([1.0], DEV), np.array(2.0)).tolist() == [2.0]


def test_stats_report_every_compiled_function() -> None:
    @burn.compile
    def g(x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        y = (x * 2.0 + 1.0) * x - 3.0
        unused = (x.exp() * 4.0).sum()  # dead code: removed from the plan
        del unused
        return y, {"neg": -y}

    x = _x(4, 5)
    first = g(x)
    again = g(x)
    np.testing.assert_array_equal(_np(again[0]), _np(first[0]))
    np.testing.assert_array_equal(_np(again[1]["neg"]), _np(-first[0]))
    stats = burn.compile.stats()[g.name]
    assert set(stats) == {"traces", "replays", "fallbacks", "recompiles", "fused_groups", "fused_ops",
                          "kernels", "removed_ops", "warmups", "program_updates"}
    assert stats["removed_ops"] >= 3 and stats["traces"] == 1 and stats["replays"] == 1
    if BACKEND == "ndarray":
        assert stats["fused_groups"] == 1 and stats["fused_ops"] == 5 and stats["kernels"] == 1


def test_plan_frees_values_and_fuses_a_chain() -> None:
    x = _x(6, 3)
    t = trace(lambda v: ((v * 3.0 - 1.0) / 2.0).abs().sqrt(), x)
    plan = Plan(t.program, x.backend)
    (out,) = plan.run([x._p], {})
    np.testing.assert_array_equal(B.float_into_data(out).to_numpy(), _np(t.outputs[0]))
    if BACKEND == "ndarray":
        assert (plan.fused_groups, plan.steps, plan.kernels) == (1, 1, 1)


def test_fused_chains_with_broadcasts_masks_and_per_row_values_equal_eager() -> None:
    def f(x: Tensor, row: Tensor, col: Tensor) -> tuple[Tensor, Tensor]:
        r = (row + 1.0).abs().sqrt()  # [4, 1]: a per-row value, kept to the output
        y = (x - row) / r * col
        m = y.greater_elem(0.25)
        z = y.mask_fill(m, 0.25).mask_where(y.lower(col), -y) - 2.0
        return z, r * 3.0

    x, row, col = _x(4, 9), _x(4, 1), _x(9)
    compiled = burn.compile(f)
    first = compiled(x, row, col)
    for got, want in zip(compiled(x, row, col), first, strict=True):
        np.testing.assert_array_equal(_np(got), _np(want))
    if BACKEND == "ndarray":
        assert compiled.stats()["fused_groups"] >= 2


def test_training_step_with_backward_inside_falls_back_to_eager() -> None:
    model, x, y = _autodiff_mlp_batch()
    opt = optim.SgdConfig().init()

    @burn.compile
    def step(m: Mlp, x: Tensor, y: Tensor) -> tuple[Mlp, Tensor]:
        loss = nn.MseLoss()(m(x), y)
        return opt.step(0.1, m, optim.GradientsParams.from_grads(loss.backward(), m)), loss

    with pytest.warns(CompileWarning, match="calls backward"):
        updated, loss = step(model, x, y)
    eager_loss = nn.MseLoss()(model(x), y)
    eager_model = opt.step(0.1, model, optim.GradientsParams.from_grads(eager_loss.backward(), model))
    np.testing.assert_array_equal(_np(loss), _np(eager_loss))
    np.testing.assert_array_equal(_np(updated.fc1.weight.val()), _np(eager_model.fc1.weight.val()))
    assert step.stats()["fallbacks"] == 1


@pytest.mark.skipif(BACKEND != "ndarray", reason="burn-ndarray's generated kernels")
def test_a_second_process_loads_the_fused_kernel_from_the_disk_cache(tmp_path) -> None:
    import subprocess
    import sys

    script = (
        "import numpy as np, burn, sys\n"
        "from burn_ndarray import fused\n"
        "f = burn.compile(lambda x: (x * 3.0 - 1.0).abs() / 2.0)\n"
        "x = burn.Tensor.from_data(np.ones((4, 4), np.float32), backend='ndarray')\n"
        "f(x); f(x)\n"
        "(m,) = fused._kernels.values()\n"
        "k = m.kernel\n"
        "print(sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))\n"
    )
    env = {**os.environ, "BURN_NDARRAY_FUSED_CACHE": str(tmp_path)}
    runs = [
        subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
        for _ in range(2)
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (r.stdout.split()[-2:] for r in runs)
    assert (first[0], second[0], second[1]) == ("0", "1", "0")  # compiled, then loaded from the cache
    assert any(p.suffix == ".py" for p in tmp_path.iterdir())


def test_auto_mode_layers_train_on_autodiff_and_state_changes_run_eagerly() -> None:
    ad: Any = _autodiff()
    dev = ad.default_device()
    x = Tensor.ones((32, 32), device=dev)
    drop = nn.DropoutConfig(0.5).init()  # no explicit mode: trains on autodiff, as eagerly

    @burn.compile
    def f(d: nn.Dropout, x: Tensor) -> Tensor:
        return d(x)

    outs = [_np(f(drop, x)) for _ in range(2)]
    assert all((o == 0.0).any() for o in outs) and not np.array_equal(outs[0], outs[1])
    assert f.stats()["replays"] == 1

    bn = _ready(nn.BatchNormConfig(3).init(dev))  # training replaces its running statistics

    @burn.compile
    def g(m: nn.BatchNorm, x: Tensor) -> Tensor:
        return m(x)

    xb = Tensor.from_data(RNG.normal(size=(4, 3, 2, 2)).astype(np.float32), dev)
    before = _np(bn.running_mean.val())
    with pytest.warns(CompileWarning, match="running_mean"):
        g(bn, xb)
    assert not np.array_equal(_np(bn.running_mean.val()), before)  # updated on the caller's module


@pytest.mark.skipif(BACKEND != "ndarray", reason="burn-ndarray's split kernels")
def test_fused_kernels_give_the_same_bits_at_any_thread_count() -> None:
    x, g = _x(1200, 512), _x(512)
    f = burn.compile(lambda x, g: ((x - 0.5) * g + 1.0).abs().sqrt() / 3.0)
    old = burn.get_num_threads()
    try:
        burn.set_num_threads(1)
        one = _np(f(x, g)), _np(f(x, g))
        burn.set_num_threads(2)
        two = _np(f(x, g))
    finally:
        burn.set_num_threads(old)
    np.testing.assert_array_equal(one[1], one[0])
    np.testing.assert_array_equal(two, one[0])
    assert f.stats()["kernels"] == 2


def test_a_lazy_module_warms_up_eagerly_so_its_params_draw_as_eager() -> None:
    """Reading the params for the signature would run their lazy initializers in another order
    than the forward does: the first call runs eagerly (a warmup), the second traces."""
    def build() -> Mlp:
        B.seed(3)
        return Mlp(nn.LinearConfig(16, 32).init(DEV), nn.LinearConfig(32, 4).init(DEV))

    x = _x(2, 16)
    want = _np(build()(x))
    compiled = burn.compile(build())
    got = [_np(compiled(x)) for _ in range(3)]
    for g in got:
        np.testing.assert_array_equal(g, want)
    s = compiled.stats()
    assert (s["warmups"], s["traces"], s["replays"], s["fallbacks"]) == (1, 1, 1, 0)


def test_the_autocast_region_is_part_of_the_signature() -> None:
    """Inside `autocast` a matmul runs in bfloat16: a plan traced outside must not replay there."""
    from burn import amp

    if not B.capabilities.supports(burn.bfloat16):
        pytest.skip(f"{BACKEND} has no bfloat16")
    f = burn.compile(lambda a, b: a @ b)
    a, b = _x(3, 4), _x(4, 2)
    for _ in range(2):
        assert f(a, b).dtype is burn.float32
        with amp.autocast("bfloat16"):
            got = f(a, b)
            want = a @ b
        assert got.dtype is want.dtype is burn.bfloat16
        np.testing.assert_array_equal(_np(got.cast(burn.float32)), _np(want.cast(burn.float32)))
    s = f.stats()
    assert (s["traces"], s["replays"]) == (2, 2)


def test_an_object_holding_tensors_runs_eagerly_and_fallbacks_count_reasons() -> None:
    """An object other than a tuple, list or dict is hashed by identity: its tensors would be
    neither inputs nor part of the signature, so such a call runs eagerly, and says why."""

    class Batch:
        def __init__(self, x: Tensor) -> None:
            self.x = x

    f = burn.compile(lambda b: b.x * 2.0)
    x = _x(3)
    with pytest.warns(CompileWarning, match="a Batch holding tensors"):
        for _ in range(2):
            np.testing.assert_array_equal(_np(f(Batch(x))), _np(x * 2.0))
    assert f.stats()["fallbacks"] == 2 and f.stats()["traces"] == 0
    [(reason, calls)] = burn.compile.fallbacks()[f.name].items()
    assert "holding tensors" in reason and calls == 2
    assert f.fallback_reasons() == {reason: 2}
