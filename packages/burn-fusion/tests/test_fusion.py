"""fusion(opencl): fusion happens (kernel launches counted), results equal opencl's, the stream
flushes when it must, and fusion over a backend without the contract is refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from burn_fusion import Fusion, FusionError, FusionTensor
from burn_fusion.stream import MAX_OPS

import burn
from burn.backend.ir import ELEMENTWISE, FusedBlock, OpIR, ReduceIR, TensorIR
from burn.foundations.dtype import DType
from burn.optim.transforms import adam_apply

RNG = np.random.default_rng(7)


def put(backend: Any, array: np.ndarray) -> burn.Tensor:
    return burn.Tensor.from_data(np.asarray(array, dtype=np.float32), backend=backend)


def gelu_linear(backend: Any, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> burn.Tensor:
    return burn.activation.gelu(put(backend, x).matmul(put(backend, w)) + put(backend, b))


def layer_norm(backend: Any, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> burn.Tensor:
    t = put(backend, x)
    centered = t - t.mean_dim(1)
    var = (centered * centered).mean_dim(1)
    return centered / (var + 1e-5).sqrt() * put(backend, gamma) + put(backend, beta)


def run_counted(backend: Any, launches: Any, fn: Any, *args: Any) -> tuple[np.ndarray, int]:
    """`fn`'s result on the host and the kernels launched to compute it (uploads excluded)."""
    tensors = [put(backend, a) for a in args]
    backend.sync()
    launches.take()
    out = fn(*tensors)
    backend.sync()
    count = launches.take()
    return out.to_numpy(), count


def test_gelu_of_linear_fuses_bias_and_activation(fused: Any, cl_backend: Any, launches: Any) -> None:
    x, w, b = RNG.normal(size=(16, 32)), RNG.normal(size=(32, 24)) / 6, RNG.normal(size=(24,))

    def f(xt: Any, wt: Any, bt: Any) -> Any:
        return burn.activation.gelu(xt.matmul(wt) + bt)

    plain, plain_count = run_counted(cl_backend, launches, f, x, w, b)
    fusion, fusion_count = run_counted(fused, launches, f, x, w, b)
    np.testing.assert_allclose(fusion, plain, rtol=1e-5, atol=1e-6)
    assert fusion_count == plain_count - 1  # bias add + gelu: one kernel instead of two
    assert fused.stats.kernels == 1 and fused.stats.fused_ops == 2


def test_layer_norm_runs_as_one_row_chain(fused: Any, cl_backend: Any, launches: Any) -> None:
    x = RNG.normal(size=(8, 64)) * 3 + 1
    gamma, beta = RNG.normal(size=(64,)), RNG.normal(size=(64,))

    def f(xt: Any, g: Any, b: Any) -> Any:
        centered = xt - xt.mean_dim(1)
        var = (centered * centered).mean_dim(1)
        return centered / (var + 1e-5).sqrt() * g + b

    plain, plain_count = run_counted(cl_backend, launches, f, x, gamma, beta)
    fusion, fusion_count = run_counted(fused, launches, f, x, gamma, beta)
    np.testing.assert_allclose(fusion, plain, rtol=1e-5, atol=1e-5)
    # mean of the input (nothing pending to fuse it with), then [sub, mul -> mean, add, sqrt, div,
    # mul, add] as one row chain: the ops go on past the mean along the last dim
    # (`burn_opencl.fusion_rows`), the per-row 1/std computed once per row inside the kernel.
    assert plain_count == 9
    assert fusion_count == 2
    assert fused.stats.kernels == 1 and fused.stats.fused_reductions == 1 and fused.stats.fused_ops == 7


def gelu_norm(xt: Any, g: Any, b: Any) -> Any:
    """Issue 35's chain: GELU (tanh form), then a layer norm of its result along the last dim."""
    last = len(xt.shape) - 1
    y = xt * 0.5 * (((xt + xt**3.0 * 0.044715) * 0.7978845608028654).tanh() + 1.0)
    centered = y - y.mean_dim(last)
    return centered * ((centered**2.0).mean_dim(last) + 1e-5) ** -0.5 * g + b


@pytest.mark.parametrize("shape", [(16, 64), (2, 3, 32), (5, 1024)])
def test_gelu_layer_norm_chain_is_one_kernel(
    fused: Any, cl_backend: Any, launches: Any, shape: tuple[int, ...]
) -> None:
    x = RNG.normal(size=shape) * 2
    gamma, beta = RNG.normal(size=shape[-1:]), RNG.normal(size=shape[-1:])
    plain, _ = run_counted(cl_backend, launches, gelu_norm, x, gamma, beta)
    fusion, fusion_count = run_counted(fused, launches, gelu_norm, x, gamma, beta)
    np.testing.assert_allclose(fusion, plain, rtol=1e-5, atol=1e-5)
    assert fusion_count == 1
    assert fused.stats.kernels == 1 and fused.stats.fused_reductions == 2


def test_row_chain_returns_held_intermediates_and_reductions(fused: Any, cl_backend: Any) -> None:
    x, v, s = RNG.normal(size=(6, 16)), RNG.normal(size=(6, 1)), RNG.normal(size=(1,))
    outs = {}
    for name, backend in (("fusion", fused), ("plain", cl_backend)):
        xt, vt, st = put(backend, x), put(backend, v), put(backend, s)
        y = (xt * st).exp()  # held: written by the chain
        total = y.sum_dim(1)  # held: the reduction's result
        z = y / total + vt  # a per-row input (and `st`, one element)
        outs[name] = [t.to_numpy() for t in (y, total, z)]
    for a, b in zip(outs["fusion"], outs["plain"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert fused.stats.kernels == 1 and fused.stats.fused_reductions == 1


def test_row_chain_the_backend_declines_runs_stage_by_stage(
    fused: Any, cl_backend: Any, launches: Any
) -> None:
    x = np.abs(RNG.normal(size=(4, 24))) + 0.5

    def f(xt: Any) -> Any:
        y = xt * 2.0
        centered = y - y.mean_dim(1)
        return (centered * centered + 1.0).log()  # log has no float8 form: the chain is declined

    plain, _ = run_counted(cl_backend, launches, f, x)
    fusion, _ = run_counted(fused, launches, f, x)
    np.testing.assert_allclose(fusion, plain, rtol=1e-5, atol=1e-6)
    assert fused.stats.kernels == 2 and fused.stats.fused_reductions == 1


def test_row_chain_not_taken_off_the_last_dim(fused: Any, cl_backend: Any) -> None:
    x = RNG.normal(size=(8, 16))
    results = []
    for backend in (fused, cl_backend):
        y = put(backend, x) * 3.0
        results.append((y - y.mean_dim(0)).to_numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)
    assert fused.stats.kernels == 2  # [mul -> mean] then [sub]


@pytest.mark.parametrize("op", ["max_dim", "min_dim"])
def test_row_chain_past_max_and_min_lets_nan_win(fused: Any, cl_backend: Any, op: str) -> None:
    x = RNG.normal(size=(4, 32))
    x[1, 5] = np.nan
    x[2, :] = -np.inf if op == "max_dim" else np.inf
    results = []
    for backend in (fused, cl_backend):
        y = put(backend, x) * 2.0
        results.append((y - getattr(y, op)(1)).exp().to_numpy())
    np.testing.assert_array_equal(np.isnan(results[0]), np.isnan(results[1]))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)
    assert fused.stats.kernels == 1 and fused.stats.fused_reductions == 1


def test_large_per_row_value_runs_alone(fused: Any, cl_backend: Any, launches: Any) -> None:
    x = RNG.normal(size=(512, 256))
    v = np.abs(RNG.normal(size=(512, 1))) + 0.5

    def f(xt: Any, vt: Any) -> Any:
        return xt * (vt + 1e-5).sqrt() + 1.0

    plain, _ = run_counted(cl_backend, launches, f, x, v)
    fusion, fusion_count = run_counted(fused, launches, f, x, v)
    np.testing.assert_allclose(fusion, plain, rtol=1e-5, atol=1e-6)
    # [add, sqrt] over the 512 rows, then [mul, add] over 512x256 reading the rows' values: the
    # square root is not taken once per element (256x the work) to save a launch.
    assert fusion_count == 2
    assert fused.stats.kernels == 2 and fused.stats.fused_ops == 4


def test_softmax_runs_in_one_kernel(fused: Any, cl_backend: Any, launches: Any) -> None:
    x = RNG.normal(size=(6, 40)) * 4

    def f(xt: Any) -> Any:
        return burn.activation.softmax(xt * 0.5, 1)

    plain, plain_count = run_counted(cl_backend, launches, f, x)
    fusion, fusion_count = run_counted(fused, launches, f, x)
    np.testing.assert_allclose(fusion, plain, rtol=1e-5, atol=1e-7)
    # [mul -> max, sub, exp -> sum, div]: one row chain, the max and the sum inside the kernel.
    assert plain_count == 5
    assert fusion_count == 1
    assert fused.stats.fused_reductions == 2


@pytest.mark.parametrize("op", ["sum_dim", "mean_dim", "prod_dim", "max_dim", "min_dim"])
@pytest.mark.parametrize("shape,dim", [((5, 7), 0), ((5, 7), 1), ((3, 4, 6), 1), ((2, 1500), 1)])
def test_reductions_take_their_prologue(
    fused: Any, cl_backend: Any, op: str, shape: tuple[int, ...], dim: int
) -> None:
    a = RNG.normal(size=shape)
    a[0, 0] = np.nan if op == "max_dim" else a[0, 0]  # NaN propagates as in the one-op kernels
    b = RNG.normal(size=shape[-1:])

    def f(backend: Any) -> tuple[np.ndarray, np.ndarray]:
        x, y = put(backend, a), put(backend, b)
        held = (x * 0.25 + y).tanh()  # a value of the prologue still held: the kernel writes it
        reduced = getattr(held * 0.5 + 1.0, op)(dim)
        return reduced.to_numpy(), held.to_numpy()

    got, want = f(fused), f(cl_backend)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[0].shape == shape[:dim] + (1,) + shape[dim + 1 :]
    assert fused.stats.kernels == 1 and fused.stats.fused_reductions == 1


def test_reduction_of_a_strided_broadcast_prologue(fused: Any, cl_backend: Any) -> None:
    a, b = RNG.normal(size=(4, 6)), RNG.normal(size=(6, 1))

    def f(backend: Any) -> np.ndarray:
        x = put(backend, a).swap_dims(0, 1)  # (6, 4), strided
        return ((x - put(backend, b)).exp() * x).sum_dim(0).to_numpy()

    np.testing.assert_allclose(f(fused), f(cl_backend), rtol=1e-5, atol=1e-6)
    assert fused.stats.fused_reductions == 1


def test_reduction_is_run_lazily_and_drops_temporaries(fused: Any) -> None:
    x = put(fused, np.arange(12.0).reshape(3, 4))
    c = x - 1.0
    var = (c * c).mean_dim(1)  # closes the block: nothing runs yet
    assert fused.stats.kernels == 0 and var._p.pending
    out = c / (var + 1.0)  # the next op runs the closed block first
    assert fused.stats.kernels == 1 and fused.stats.fused_ops == 2 and not var._p.pending
    want_c = np.arange(12.0).reshape(3, 4) - 1.0
    want = want_c / ((want_c * want_c).mean(axis=1, keepdims=True) + 1.0)
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-6)
    # a reduction of a computed value, or of a per-row value in a bigger block, runs alone
    s = x.sum_dim(0)
    assert not s._p.pending
    row = x.mean_dim(1) * 2.0
    big = x + row
    r = row.sum_dim(0)
    np.testing.assert_allclose(r.to_numpy(), [[np.arange(12.0).reshape(3, 4).mean(1).sum() * 2]])
    np.testing.assert_allclose(big.to_numpy(), np.arange(12.0).reshape(3, 4) + row.to_numpy())


def test_adam_update_is_one_kernel(fused: Any, cl_backend: Any, launches: Any) -> None:
    shape = (64, 33)
    param, g1, g2 = (RNG.normal(size=shape) for _ in range(3))
    results = {}
    counts = {}
    for name, backend in (("opencl", cl_backend), ("fusion", fused)):
        p = put(backend, param)
        grads = [put(backend, g1), put(backend, g2)]
        backend.sync()
        launches.take()
        state = None
        per_step = []
        for grad in grads:
            p, state = adam_apply(p, grad, state, 0.9, 0.999, 1e-5, False, 0.01)
            backend.sync()
            per_step.append(launches.take())
        counts[name] = per_step
        results[name] = (p.to_numpy(), state["moment_1"].to_numpy(), state["moment_2"].to_numpy())
    for got, want in zip(results["fusion"], results["opencl"], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    assert counts["fusion"] == [1, 1]  # float_adam_step's default composition: one fused group
    assert counts["opencl"][1] >= 10


def test_results_equal_opencl_for_many_ops(fused: Any, cl_backend: Any) -> None:
    a = RNG.normal(size=(5, 7))
    b = RNG.normal(size=(7,))
    mask = RNG.random(size=(5, 7)) > 0.5

    def f(backend: Any) -> np.ndarray:
        x, y = put(backend, a), put(backend, b)
        m = burn.Tensor.from_data(mask, backend=backend)
        z = (x * y - 0.5).abs().sqrt() + x.exp().clamp(0.1, 3.0)
        z = z.mask_where(m, burn.activation.sigmoid(x)) + x.greater(y).float() * 2.0
        z = (z - x.lower_equal_elem(0.0).float()).mask_fill(x.lower_elem(-1.0), 7.0)
        return z.to_numpy()

    np.testing.assert_allclose(f(fused), f(cl_backend), rtol=1e-5, atol=1e-6)
    assert fused.stats.kernels == 1
    assert fused.stats.fused_ops >= 15


def test_broadcast_to_a_new_shape_flushes(fused: Any) -> None:
    x = put(fused, np.ones((4, 1)))
    y = put(fused, np.ones((1, 3)))
    a = x * 2.0  # block over (4, 1)
    b = y + 1.0  # (1, 3) does not grow (4, 1) into itself: a new block
    assert fused.stats.kernels == 1
    c = a * b  # (4, 3) grows the (1, 3) block: joins
    np.testing.assert_allclose(c.to_numpy(), np.full((4, 3), 4.0))
    assert fused.stats.kernels == 2


def test_flush_triggers(fused: Any) -> None:
    x = put(fused, np.arange(6.0).reshape(2, 3))
    y = (x + 1.0) * 2.0
    assert fused.stats.kernels == 0 and isinstance(y._p, FusionTensor) and y._p.pending
    assert y.shape == (2, 3) and y.dtype == burn.float32  # metadata needs no kernel
    assert fused.stats.kernels == 0
    s = y.sum()  # a reduction reads y: the block runs first
    assert fused.stats.kernels == 1 and not y._p.pending
    np.testing.assert_allclose(s.to_numpy(), [42.0])
    z = x.exp()
    fused.sync()  # sync runs the open block
    assert fused.stats.kernels == 2 and not z._p.pending
    w = x
    for _ in range(MAX_OPS + 1):  # the bound: a block of MAX_OPS ops runs as soon as it is full
        w = w + 1.0
    assert fused.stats.kernels == 3
    np.testing.assert_allclose(w.to_numpy(), np.arange(6.0).reshape(2, 3) + MAX_OPS + 1)


def test_values_nobody_holds_are_not_computed(fused: Any) -> None:
    x = put(fused, np.ones(8))
    (x * 3.0).exp()  # dropped at once
    kept = x + 1.0
    fused.sync()
    assert fused.stats.kernels == 1
    assert fused.stats.fused_ops == 1 and fused.stats.eliminated_ops == 2
    np.testing.assert_allclose(kept.to_numpy(), np.full(8, 2.0))


def test_strided_and_broadcast_inputs(fused: Any, cl_backend: Any) -> None:
    a = RNG.normal(size=(3, 4, 5))
    b = RNG.normal(size=(5, 4))

    def f(backend: Any) -> tuple[np.ndarray, np.ndarray]:
        x, y = put(backend, a), put(backend, b)
        yt = y.swap_dims(0, 1)  # a strided view
        row = (x.mean_dim(2) * 2.0).exp()  # (3, 4, 1): written once per element it broadcasts to
        return (x * yt + row).to_numpy(), row.to_numpy()

    for got, want in zip(f(fused), f(cl_backend), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_float64_and_casts(cl_backend: Any) -> None:
    if burn.float64 not in cl_backend.capabilities.dtypes:
        pytest.skip("the OpenCL device has no float64")
    B = burn.plugins.backend("fusion(opencl)", float_dtype="float64")
    x = burn.Tensor.from_data(np.linspace(-2, 2, 9), backend=B)
    i = burn.Tensor.from_data(np.arange(9), backend=B)
    y = (x * 3.0).cast(burn.float32) + i.float().cast(burn.float32)
    assert y.dtype == burn.float32
    np.testing.assert_allclose(y.to_numpy(), np.linspace(-2, 2, 9) * 3 + np.arange(9), rtol=1e-6)


def test_autodiff_over_fusion_matches_opencl(cl_backend: Any) -> None:
    a = RNG.normal(size=(6, 8))
    w = RNG.normal(size=(8, 4))

    def grads(name: str) -> tuple[np.ndarray, np.ndarray]:
        B = burn.plugins.backend(name)
        x = put(B, a).require_grad()
        wt = put(B, w).require_grad()
        loss = (burn.activation.gelu(x.matmul(wt)) * 0.5 + burn.activation.sigmoid(x.sum_dim(1))).sum()
        g = loss.backward()
        return x.grad(g).to_numpy(), wt.grad(g).to_numpy()

    for got, want in zip(grads("autodiff(fusion(opencl))"), grads("autodiff(opencl)"), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_fusion_needs_the_contract() -> None:
    with pytest.raises(FusionError, match="does not implement the fusion contract"):
        Fusion(burn.backend("autodiff(ndarray)"))
    with pytest.raises(FusionError, match="fusion contract"):
        burn.plugins.backend("fusion(autodiff(ndarray))")
    with pytest.raises(FusionError, match="fusion contract"):
        burn.plugins.backend("fusion(fusion(opencl))")


def test_fusion_over_ndarray_runs_generated_numba_kernels_bitwise() -> None:
    # burn-ndarray implements the contract (burn_ndarray.fused) for its bitwise-exact ops.
    fused, plain = burn.plugins.backend("fusion(ndarray)"), burn.backend("ndarray")
    x, g = RNG.normal(size=(6, 5)).astype(np.float32), RNG.normal(size=5).astype(np.float32)

    def f(backend: Any) -> np.ndarray:
        v = put(backend, x)
        return (((v - v.mean_dim(1)) / 3.0) * put(backend, g) + 1.0).abs().to_numpy()

    np.testing.assert_array_equal(f(fused), f(plain))
    assert fused.stats.kernels >= 1 and fused.stats.fused_ops >= 4


def test_log_prints_the_fused_groups(fused: Any, capsys: pytest.CaptureFixture[str]) -> None:
    fused._stream.log = True
    try:
        y = put(fused, np.ones(4)).exp() + 1.0
        y.to_numpy()
    finally:
        fused._stream.log = False
    err = capsys.readouterr().err
    assert "[burn-fusion] fused block over [4]: 2 ops, 1 inputs, 1 outputs" in err
    assert "= float_exp(t" in err and "= float_add_scalar(t" in err


def test_ir_records_print_and_sign() -> None:
    x, y, z = TensorIR(0, (2, 3), DType.F32), TensorIR(1, (2, 3), DType.F32), TensorIR(2, (2, 3), DType.BOOL)
    ops = (OpIR("float_mul_scalar", (x,), (y,), (2.0,)), OpIR("float_greater_elem", (y,), (z,), (1.0,)))
    block = FusedBlock((2, 3), (x,), ops, (z,))
    assert str(ops[0]) == "t1 = float_mul_scalar(t0, 2.0)  # float32[2, 3]"
    r = TensorIR(3, (2, 1), DType.F32)
    reducing = FusedBlock((2, 3), (x,), ops[:1], (), ReduceIR("float_sum_dim", y, 1, r))
    assert "reduce t3 = float_sum_dim(t1, dim=1)  # float32[2, 1]" in str(reducing)
    assert reducing.signature() != FusedBlock((2, 3), (x,), ops[:1], (y,)).signature()
    a, b, c = TensorIR(10, (4,), DType.F32), TensorIR(11, (4,), DType.F32), TensorIR(12, (4,), DType.BOOL)
    shifted_ops = (
        OpIR("float_mul_scalar", (a,), (b,), (5.0,)),
        OpIR("float_greater_elem", (b,), (c,), (0.0,)),
    )
    shifted = FusedBlock((4,), (a,), shifted_ops, (c,))
    assert block.signature() == shifted.signature()  # ids, shapes and scalar values do not matter
    assert all(spec.arity == len(spec.kinds) for spec in ELEMENTWISE.values())
