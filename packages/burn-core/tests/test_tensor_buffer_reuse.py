"""Burn's ownership trick (burn.foundations.ownership): buffers of provable temporaries are reused,
never those of anything else, and results are bit for bit those of the plain path."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np
import pytest

import burn
from burn import Tensor
from burn.foundations import ownership as _ownership

NdArray = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed").NdArray

pytestmark = pytest.mark.skipif(not _ownership.ENABLED, reason="buffer reuse is off on this interpreter")

N = 1 << 15  # float32: 128 KiB, above burn_ndarray.runtime.ownership.MIN_BYTES


def addr(t: Tensor) -> int:
    """The address of the tensor's buffer."""
    return int(t._p.__array_interface__["data"][0])


@pytest.fixture(scope="module")
def B() -> Any:
    return burn.backend("ndarray")


def fresh(B: Any, n: int = N, seed: int = 0) -> Tensor:
    return Tensor.from_data(np.random.default_rng(seed).random(n, dtype=np.float32), backend=B)


def spy(B: Any, op: str) -> list[weakref.ref[Any]]:
    """Weak references to every array `op` returns on `B` (weak: they do not change counts)."""
    made: list[weakref.ref[Any]] = []
    plain = getattr(B, op)

    def recording(*args: Any) -> Any:
        out = plain(*args)
        made.append(weakref.ref(out))
        return out

    setattr(B, op, recording)
    return made


def test_chain_reuses_the_temporary() -> None:
    B = NdArray()
    a = fresh(B)
    made = spy(B, "float_mul_scalar")
    chained = a.mul(2.0).add(1.0).exp()  # one allocation, by mul; add and exp write into it
    assert chained._p is made[-1]()
    ops = (a * 2.0 + 1.0).exp()  # operators allocate; exp (a method on a temporary) reuses
    assert ops._p is not made[-1]()
    expected = np.exp(a.to_numpy() * np.float32(2.0) + np.float32(1.0))
    np.testing.assert_array_equal(chained.to_numpy(), expected)
    np.testing.assert_array_equal(ops.to_numpy(), expected)


def test_binary_reuses_either_side() -> None:
    B = NdArray()
    a, b = fresh(B, seed=1), fresh(B, seed=2)
    made = spy(B, "float_mul")
    # Outside `assert`: pytest's assertion rewriting keeps every subexpression alive (so, named).
    right = a.sub(a.mul(b))  # right operand temporary
    assert right._p is made[-1]()
    left = a.mul(b).div(b)  # left operand temporary
    assert left._p is made[-1]()
    np.testing.assert_array_equal(a.sub(a.mul(b)).to_numpy(), a.to_numpy() - a.to_numpy() * b.to_numpy())


def _unchanged(t: Tensor, op: Any) -> None:
    snapshot = np.array(t.to_numpy())
    pointer = addr(t)
    result = op(t)
    np.testing.assert_array_equal(t.to_numpy(), snapshot)
    assert addr(result) != pointer or result is t


@pytest.mark.parametrize(
    "op",
    [
        lambda t: t.add(1.0),
        lambda t: t.mul(t),
        lambda t: t.exp(),
        lambda t: t.sqrt(),
        lambda t: t.neg(),
        lambda t: t.sub(t.mul(2.0)),
        lambda t: t + 1.0,
    ],
)
def test_named_tensor_is_never_reused(B: Any, op: Any) -> None:
    _unchanged(fresh(B), op)


def test_held_in_containers_is_never_reused(B: Any) -> None:
    items = [fresh(B)]
    table = {"m": fresh(B)}
    snap_l, snap_d = np.array(items[0].to_numpy()), np.array(table["m"].to_numpy())
    items[0].mul(2.0).add(1.0)
    items[0].exp()
    table["m"].add(1.0)
    table["m"].sqrt()
    np.testing.assert_array_equal(items[0].to_numpy(), snap_l)
    np.testing.assert_array_equal(table["m"].to_numpy(), snap_d)


def test_numpy_object_array_is_never_reused(B: Any) -> None:
    """Operators see a borrowed reference: in an object array, a held tensor looks like a temporary."""
    holder = np.empty(1, dtype=object)
    holder[0] = fresh(B)
    snapshot = np.array(holder[0].to_numpy())
    holder + 1.0  # noqa: B018 - calls Tensor.__add__ with the array's borrowed reference
    np.testing.assert_array_equal(holder[0].to_numpy(), snapshot)


def test_optimizer_state_and_records_untouched(B: Any) -> None:
    from burn.optim import AdamConfig

    optim = AdamConfig().init().optimizer
    param, grad = fresh(B, seed=3), fresh(B, seed=4)
    p1, state = optim.step(0.1, param, grad, None)
    snaps = {k: np.array(v.to_numpy()) for k, v in state.items() if isinstance(v, Tensor)}
    p_snap, g_snap, p1_snap = np.array(param.to_numpy()), np.array(grad.to_numpy()), np.array(p1.to_numpy())
    optim.step(0.1, p1, grad, state)
    for k, v in snaps.items():
        np.testing.assert_array_equal(state[k].to_numpy(), v)
    np.testing.assert_array_equal(param.to_numpy(), p_snap)
    np.testing.assert_array_equal(grad.to_numpy(), g_snap)
    np.testing.assert_array_equal(p1.to_numpy(), p1_snap)


def test_adam_updates_its_own_moments_in_place(B: Any) -> None:
    """Through OptimizerAdaptor the moments are the state's alone: burn-ndarray's fused Adam
    writes the new moments into their buffers (the same addresses every step) and allocates
    only the new param; a record held by the caller stops that for the moments it refers to."""
    from burn import optim
    from burn.module import Module, Param

    class Weights(Module):
        w: Param

    model = Weights(Param.from_tensor(fresh(B, seed=5)))
    grad = fresh(B, seed=6)
    optimizer = optim.AdamConfig().init()

    def step() -> tuple[int, int]:
        nonlocal model
        model = optimizer.step(0.01, model, optim.GradientsParams({model.w.id: grad}))
        (state,) = optimizer.states.values()
        return addr(state["moment_1"]), addr(state["moment_2"])

    step()
    first = step()
    assert step() == first == step()
    held = optimizer.to_record()
    assert step() != first  # the held record's moments are read, and new ones allocated
    del held
    second = step()
    assert step() == second


def _steps_run(B: Any, optimizer: Any, hold: bool) -> tuple[list[bool], np.ndarray, list[np.ndarray]]:
    """Four optimizer steps on fresh gradients, as in training (`hold`: the caller keeps each one):
    per step whether the new param took the gradient's buffer, the final param, and the held
    gradients' values after their steps."""
    from burn import optim
    from burn.module import Module, Param

    class Weights(Module):
        w: Param

    model = Weights(Param.from_tensor(fresh(B, seed=7)))
    took, held = [], []
    for seed in range(4):
        g = fresh(B, seed=10 + seed)
        where = addr(g)
        grads = optim.GradientsParams({model.w.id: g})
        if hold:
            held.append(g)
        del g
        model = optimizer.step(0.01, model, grads)
        took.append(addr(model.w.val()) == where)
    return took, np.array(model.w.val().to_numpy()), [np.array(g.to_numpy()) for g in held]


@pytest.mark.parametrize("name", ["adam", "adamw", "sgd-momentum", "rmsprop"])
def test_the_new_param_is_written_over_a_gradient_handed_over(B: Any, name: str) -> None:
    """Through OptimizerAdaptor a gradient taken out of the consumed GradientsParams, held by
    nothing else, becomes the new param's buffer from the second step (the first creates the
    state); a gradient the caller keeps is only read. The params are the same bits."""
    from burn import optim

    configs = {
        "adam": optim.AdamConfig,
        "adamw": optim.AdamWConfig,
        "sgd-momentum": lambda: optim.SgdConfig(momentum=optim.MomentumConfig(0.9, 0.1, True)),
        "rmsprop": lambda: optim.RmsPropConfig(momentum=0.5, centered=True),
    }
    took, handed, _ = _steps_run(B, configs[name]().init(), hold=False)
    assert took == [False, True, True, True]
    kept, read, grads_after = _steps_run(B, configs[name]().init(), hold=True)
    assert kept == [False] * 4
    np.testing.assert_array_equal(handed, read)
    for seed, g in enumerate(grads_after):
        np.testing.assert_array_equal(g, fresh(B, seed=10 + seed).to_numpy())


def test_a_step_that_overrides_adam_never_gets_the_gradient(B: Any) -> None:
    """Only burn's own steps (`consumes_grad`) are handed a gradient: a subclass's step may keep
    it, and its values stay."""
    from burn import optim

    class Keeping(optim.Adam):
        def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any) -> Any:
            self.kept.append(grad)
            return super().step(lr, tensor, grad, state)

    keeping = Keeping(0.9, 0.999, 1e-5, False, None)
    keeping.kept = []
    took, param, _ = _steps_run(B, optim.OptimizerAdaptor(keeping), hold=False)
    assert took == [False] * 4
    for seed, g in enumerate(keeping.kept):
        np.testing.assert_array_equal(g.to_numpy(), fresh(B, seed=10 + seed).to_numpy())
    _, expected, _ = _steps_run(B, optim.AdamConfig().init(), hold=False)
    np.testing.assert_array_equal(param, expected)


@pytest.mark.parametrize(
    "view",
    [
        lambda t: t[: N // 2],
        lambda t: t.reshape((64, -1)).permute((1, 0)),
        lambda t: t.reshape((2, -1))[:, :10].reshape((-1,)),
        lambda t: t.reshape((1, -1)).expand((2, N)),
        lambda t: t.reshape((N,)),
    ],
)
def test_views_are_never_reused(B: Any, view: Any) -> None:
    base = fresh(B)
    snapshot = np.array(base.to_numpy())
    view(base).add(1.0).exp()
    view(base).mul(view(base))
    np.testing.assert_array_equal(base.to_numpy(), snapshot)
    # a temporary whose array is a view of a named tensor's buffer
    v = view(base)
    expected = np.exp(np.array(v.to_numpy()))
    np.testing.assert_array_equal(view(base).exp().to_numpy(), expected)
    np.testing.assert_array_equal(base.to_numpy(), snapshot)


def test_temporary_sharing_a_named_array_is_never_reused(B: Any) -> None:
    a = fresh(B)
    snapshot = np.array(a.to_numpy())
    a.to_device(a.device).add(1.0)  # to_device returns the same array in another wrapper
    np.testing.assert_array_equal(a.to_numpy(), snapshot)


def test_user_arrays_and_exports_are_never_reused(B: Any) -> None:
    user = np.random.default_rng(5).random(N, dtype=np.float32)
    copy = user.copy()
    Tensor.from_data(user, backend=B).add(1.0).exp()
    np.testing.assert_array_equal(user, copy)
    t = fresh(B)
    exported = t.to_numpy()
    view = np.asarray(t)
    capsule_holder = np.from_dlpack(t)
    snapshot = np.array(exported)
    t2 = t.mul(1.0)
    exported2 = t2.to_numpy()
    snap2 = np.array(exported2)
    del t2
    wrapper = Tensor.from_data(np.zeros(1, np.float32), backend=B)  # unrelated, keeps names busy
    del wrapper
    np.testing.assert_array_equal(exported, snapshot)
    np.testing.assert_array_equal(view, snapshot)
    np.testing.assert_array_equal(capsule_holder, snapshot)
    # the only wrapper of t2 is gone, but its export lives: a temporary built on it is not reused
    back = Tensor.from_data(exported2, backend=B)
    back.add(1.0)
    np.testing.assert_array_equal(exported2, snap2)


def test_other_thread_holder_is_never_reused(B: Any) -> None:
    shared = fresh(B)
    snapshot = np.array(shared.to_numpy())
    seen: list[np.ndarray] = []
    start = threading.Barrier(2)

    def worker(t: Tensor) -> None:
        start.wait()
        for _ in range(20):
            seen.append(np.array(t.to_numpy()))

    th = threading.Thread(target=worker, args=(shared,))
    th.start()
    start.wait()
    for _ in range(20):
        shared.add(1.0).exp()
        shared.exp()
    th.join()
    for s in seen:
        np.testing.assert_array_equal(s, snapshot)


def test_autodiff_saved_inputs_never_reused() -> None:
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    AD = burn.backend("autodiff(ndarray)")
    assert not AD._reuse
    x = Tensor.from_data(np.random.default_rng(6).random(N, dtype=np.float32), backend=AD).require_grad()
    y = x.mul(2.0).add(1.0).exp().sqrt().sum()
    grads = y.backward()
    xv = x.to_numpy().astype(np.float64)
    expected = np.exp(2 * xv + 1) ** 0.5  # d/dx sqrt(exp(2x+1)) = sqrt(exp(2x+1))
    np.testing.assert_allclose(x.grad(grads).to_numpy(), expected, rtol=1e-5)


def test_tiny_and_other_dtypes_fall_back(B: Any) -> None:
    small = Tensor.from_data(np.ones(4, np.float32), backend=B)
    np.testing.assert_array_equal(small.mul(2.0).add(1.0).to_numpy(), np.full(4, 3.0, np.float32))
    B16 = burn.backend("ndarray", float_dtype="float16")
    h = Tensor.from_data(np.ones(N, np.float16), backend=B16)
    assert h.mul(2.0).add(1.0).dtype == burn.float16


def test_randomized_chains_match_the_plain_path(B: Any) -> None:
    """Random chains of methods on temporaries, against the same chain with reuse off."""
    rng = np.random.default_rng(7)
    plain = burn.backend("ndarray")
    plain._reuse = False
    unary = ["exp", "sqrt", "neg", "tanh", "log"]
    for trial in range(60):
        shape = (int(rng.integers(1, 300)), int(rng.integers(1, 300)))
        data = rng.random(shape, dtype=np.float32) + np.float32(0.5)
        other = rng.random(shape[1:], dtype=np.float32) + np.float32(0.5)  # broadcasts
        ops = []
        for _ in range(int(rng.integers(1, 8))):
            kind = int(rng.integers(0, 4))
            if kind == 0:
                ops.append(
                    ("scalar", str(rng.choice(["add", "sub", "mul", "div"])), float(rng.random() + 0.5))
                )
            elif kind == 1:
                ops.append(("tensor", str(rng.choice(["add", "sub", "mul", "div"])), None))
            elif kind == 2:
                ops.append(("rtensor", str(rng.choice(["add", "sub", "mul", "div"])), None))
            else:
                ops.append(("unary", str(rng.choice(unary)), None))

        def run(
            backend: Any, data: np.ndarray = data, other: np.ndarray = other, ops: list[Any] = ops
        ) -> np.ndarray:
            a = Tensor.from_data(data, backend=backend)
            o = Tensor.from_data(other, backend=backend)
            t = a.mul(1.0)
            for kind, name, value in ops:
                if kind == "scalar":
                    t = getattr(t, name)(value)
                elif kind == "tensor":
                    t = getattr(t, name)(o)
                elif kind == "rtensor":
                    t = getattr(a, name)(t)
                else:
                    t = getattr(t.abs().add(0.5), name)()
            return np.array(t.to_numpy())

        with np.errstate(all="ignore"):
            got, want = run(B), run(plain)
        np.testing.assert_array_equal(got, want, err_msg=f"trial {trial}: {ops}")
