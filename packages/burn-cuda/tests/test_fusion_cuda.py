"""`fusion(cuda)`: the CUDA source generated from fused blocks (checked here without a GPU, and
compiled with nvcc where it is installed), and on a GPU, fused results against plain `cuda` and
the number of fused kernels launched (skipped with the probe's reason without one)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import burn
from burn.backend.fusion_exprs import EXPRS
from burn.backend.ir import ELEMENTWISE, FusedBlock, OpIR, ReduceIR, TensorIR, broadcast_shapes, result_dtype
from burn.foundations.dtype import DType
from burn_cuda import fusion

F32, F64 = DType.F32, DType.F64


class Recorder:
    """Builds a `FusedBlock` op by op, numbering values as a recording would."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.inputs: list[TensorIR] = []
        self.ops: list[OpIR] = []
        self.next = 0

    def value(self, shape: tuple[int, ...], dtype: DType) -> TensorIR:
        self.next += 1
        return TensorIR(self.next - 1, shape, dtype)

    def input(self, shape: tuple[int, ...], dtype: DType = F32) -> TensorIR:
        t = self.value(shape, dtype)
        self.inputs.append(t)
        return t

    def op(self, name: str, *args: Any, dtype: DType | None = None) -> TensorIR:
        tensors = tuple(a for a in args if isinstance(a, TensorIR))
        scalars = tuple(float(a) for a in args if not isinstance(a, TensorIR))
        out_dtype = result_dtype(name, [t.dtype for t in tensors], dtype) or F32
        out = self.value(broadcast_shapes(name, [t.shape for t in tensors]), out_dtype)
        self.ops.append(OpIR(name, tensors, (out,), scalars))
        return out

    def block(self, *outputs: TensorIR, reduce: ReduceIR | None = None) -> FusedBlock:
        return FusedBlock(self.shape, tuple(self.inputs), tuple(self.ops), outputs, reduce)


def gelu_block() -> FusedBlock:
    r = Recorder((16, 24))
    x, b = r.input((16, 24)), r.input((24,))
    return r.block(r.op("gelu", r.op("float_add", x, b)))


def layer_norm_blocks() -> tuple[FusedBlock, FusedBlock]:
    """[sub, mul -> mean_dim] writing the centred values, then [add, sqrt, div, mul, add]."""
    r = Recorder((8, 64))
    x, mean = r.input((8, 64)), r.input((8, 1))
    centered = r.op("float_sub", x, mean)
    square = r.op("float_mul", centered, centered)
    var = r.value((8, 1), F32)
    first = r.block(centered, reduce=ReduceIR("float_mean_dim", square, 1, var))
    r = Recorder((8, 64))
    c, v, gamma, beta = r.input((8, 64)), r.input((8, 1)), r.input((64,)), r.input((64,))
    std = r.op("float_sqrt", r.op("float_add_scalar", v, 1e-5))
    out = r.op("float_add", r.op("float_mul", r.op("float_div", c, std), gamma), beta)
    return first, r.block(out)


def adam_block(dtype: DType = F32) -> FusedBlock:
    """One Adam update: new moments and parameter from the gradient, as one kernel."""
    r = Recorder((64, 33))
    param, grad, m1, m2 = (r.input((64, 33), dtype) for _ in range(4))
    m1n = r.op("float_add", r.op("float_mul_scalar", m1, 0.9), r.op("float_mul_scalar", grad, 0.1))
    g2 = r.op("float_mul", grad, grad)
    m2n = r.op("float_add", r.op("float_mul_scalar", m2, 0.999), r.op("float_mul_scalar", g2, 0.001))
    mhat = r.op("float_div_scalar", m1n, 0.1)
    vhat = r.op("float_div_scalar", m2n, 0.001)
    step = r.op("float_div", mhat, r.op("float_add_scalar", r.op("float_sqrt", vhat), 1e-5))
    return r.block(r.op("float_sub", param, r.op("float_mul_scalar", step, 0.01)), m1n, m2n)


def every_op_block(dtype: DType) -> FusedBlock:
    """Each element-wise IR op once, reading float, bool and int inputs (and a wider float)."""
    r = Recorder((4, 5))
    x, other = r.input((4, 5), dtype), r.input((5,), F64)
    mask, ints = r.input((4, 5), DType.BOOL), r.input((4, 1), DType.I64)
    outs = []
    for name, spec in ELEMENTWISE.items():
        pick = {"float": x, "bool": mask, "int": ints}
        args: list[Any] = [pick[kind] for kind in spec.kinds]
        if spec.arity == 2 and spec.kinds == ("float", "float"):
            args[1] = other
        args += [0.5 + j for j in range(spec.nscalars)]
        outs.append(r.op(name, *args, dtype=dtype if spec.result == "cast" else None))
    return r.block(*outs)


def _params(text: str, kernel: str) -> list[str]:
    found = re.search(rf'extern "C" __global__ void {kernel}\((.*?)\) \{{', text)
    assert found is not None
    return [p.strip() for p in found.group(1).split(",")]


def _nvcc(tmp_path: Path, text: str) -> None:
    """Compile `text` to PTX with nvcc when it is installed (errors fail the test)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return
    path = tmp_path / "fused.cu"
    path.write_text(text)
    done = subprocess.run(
        [nvcc, "--ptx", "-o", str(tmp_path / "fused.ptx"), str(path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr + "\n" + text


@pytest.mark.no_device
def test_every_ir_op_has_one_shared_expression() -> None:
    assert fusion.FUSION_OPS == frozenset(ELEMENTWISE) == frozenset(EXPRS)


@pytest.mark.no_device
@pytest.mark.parametrize("rank", [-1, 2])
def test_gelu_source(tmp_path: Path, rank: int) -> None:
    block = gelu_block()
    text = fusion.source(block, rank)
    params = _params(text, "burn_fused")
    assert params[:3] == ["float* o0", "const float* x0", "const float* x1"]
    # outputs, inputs, n, then per-input steps (flat) or dims and every operand's strides
    assert len(params) == 3 + 1 + (2 if rank < 0 else rank * 4)
    assert text.count("#define T float") == 2 and "erf(a * (T)0.70710678118654752440)" in text
    assert "o0[o0_i] = v3;" in text and "double" not in text.split("extern")[1]
    _nvcc(tmp_path, text)


@pytest.mark.no_device
def test_layer_norm_sources(tmp_path: Path) -> None:
    reduce_block, tail = layer_norm_blocks()
    text = fusion.reduce_source(reduce_block, 1)
    params = _params(text, "burn_fused_reduce")
    assert params[:4] == ["float* o0", "float* r", "const float* x0", "const float* x1"]
    # n C L Lc, a stride along the reduced dim per operand, scale, then d0 and strides over it
    assert len(params) == 4 + 4 + 3 + 1 + 1 + 3
    assert "acc *= scale;" in text and "o0[o0_e] = v2;" in text and "acc += v;" in text
    _nvcc(tmp_path, text)
    text = fusion.source(tail, 2)
    assert text.count("#define T float") == 5 and "float p0" in _params(text, "burn_fused")
    _nvcc(tmp_path, text)


@pytest.mark.no_device
@pytest.mark.parametrize("dtype", [F32, F64])
def test_adam_source(tmp_path: Path, dtype: DType) -> None:
    block = adam_block(dtype)
    text = fusion.source(block, -1)
    ctype = "float" if dtype is F32 else "double"
    params = _params(text, "burn_fused")
    nscalars = sum(len(op.scalars) for op in block.ops)
    assert nscalars == 8 and params[-nscalars:] == [f"{ctype} p{k}" for k in range(nscalars)]
    assert len(params) == 3 + 4 + 1 + 4 + nscalars
    assert text.count(f"#define T {ctype}") == len(block.ops)
    _nvcc(tmp_path, text)


@pytest.mark.no_device
@pytest.mark.parametrize("dtype", [F32, F64])
def test_every_op_compiles(tmp_path: Path, dtype: DType) -> None:
    block = every_op_block(dtype)
    text = fusion.source(block, 2)
    assert text.count("#define T") == len(ELEMENTWISE)
    assert "const bool* x2" in text and "const long long* x3" in text and "bool* o" in text
    _nvcc(tmp_path, text)
    for op in ("float_max_dim", "float_prod_dim"):
        r = Recorder((4, 5))
        x = r.input((4, 5), dtype)
        red = ReduceIR(op, r.op("float_tanh", x), 0, r.value((1, 5), dtype))
        _nvcc(tmp_path, fusion.reduce_source(r.block(reduce=red), 1))


# -- on a GPU ----------------------------------------------------------------------------------
RNG = np.random.default_rng(11)


@pytest.fixture
def fused(B: Any) -> Any:
    import burn.plugins as bp

    # burn-fusion is installed in tox's fusion-cuda env, not in the cuda env that also collects this file
    plugin = pytest.importorskip("burn_fusion.plugin", reason="burn-fusion is not installed")
    bp.register(plugin)
    backend = bp.backend("fusion(cuda)")
    backend.sync()
    backend.stats.reset()
    return backend


@pytest.fixture
def plain(B: Any) -> Any:
    return burn.plugins.backend("cuda")


class Launches:
    """Counts the fused kernels burn-cuda launches (`burn_cuda.fusion._launch`)."""

    def __init__(self) -> None:
        self.count = 0

    def take(self) -> int:
        count, self.count = self.count, 0
        return count


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> Iterator[Launches]:
    counter = Launches()
    original = fusion._launch

    def counted(*args: Any) -> None:
        counter.count += 1
        original(*args)

    monkeypatch.setattr(fusion, "_launch", counted)
    yield counter


def put(backend: Any, array: Any) -> burn.Tensor:
    return burn.Tensor.from_data(np.asarray(array, dtype=np.float32), backend=backend)


def test_gelu_of_linear_is_one_fused_kernel(fused: Any, plain: Any, launches: Launches) -> None:
    x, w, b = RNG.normal(size=(16, 32)), RNG.normal(size=(32, 24)) / 6, RNG.normal(size=(24,))

    def f(backend: Any) -> np.ndarray:
        return burn.activation.gelu(put(backend, x).matmul(put(backend, w)) + put(backend, b)).to_numpy()

    np.testing.assert_allclose(f(fused), f(plain), rtol=1e-5, atol=1e-6)
    assert launches.take() == 1 and fused.stats.kernels == 1 and fused.stats.fused_ops == 2


def test_layer_norm_fuses_into_two_kernels(fused: Any, plain: Any, launches: Launches) -> None:
    x = RNG.normal(size=(8, 64)) * 3 + 1
    gamma, beta = RNG.normal(size=(64,)), RNG.normal(size=(64,))

    def f(backend: Any) -> np.ndarray:
        t = put(backend, x)
        centered = t - t.mean_dim(1)
        var = (centered * centered).mean_dim(1)
        return (centered / (var + 1e-5).sqrt() * put(backend, gamma) + put(backend, beta)).to_numpy()

    np.testing.assert_allclose(f(fused), f(plain), rtol=1e-5, atol=1e-5)
    # [sub, mul -> mean_dim] and [add, sqrt, div, mul, add]; the first mean runs on CuPy
    assert launches.take() == 2
    assert fused.stats.kernels == 2 and fused.stats.fused_reductions == 1


def test_adam_update_is_one_kernel(
    fused: Any, plain: Any, launches: Launches, monkeypatch: pytest.MonkeyPatch
) -> None:
    from burn.optim.transforms import adam_apply
    from burn_cuda.kernels import optim as optim_kernels

    # burn-cuda's own Adam is one kernel (`burn_cuda.kernels.optim`), so fusion(cuda) delegates the
    # update to it rather than generating one: one launch of that kernel per step on both, no fused
    # kernel.
    adam_launches = Launches()
    for kernel in ("adam", "adam_first"):
        original = getattr(optim_kernels, kernel)

        def counted(*args: Any, original: Any = original) -> Any:
            adam_launches.count += 1
            return original(*args)

        monkeypatch.setattr(optim_kernels, kernel, counted)
    param, g1, g2 = (RNG.normal(size=(64, 33)) for _ in range(3))
    results = {}
    for name, backend in (("cuda", plain), ("fusion", fused)):
        p, state = put(backend, param), None
        backend.sync()
        launches.take()
        for grad in (g1, g2):
            put_grad = put(backend, grad)
            backend.sync()
            adam_launches.take()
            p, state = adam_apply(p, put_grad, state, 0.9, 0.999, 1e-5, False, 0.01)
            backend.sync()
            assert (launches.take(), adam_launches.take()) == (0, 1), name
        assert state is not None
        results[name] = (p.to_numpy(), state["moment_1"].to_numpy(), state["moment_2"].to_numpy())
    for got, want in zip(results["fusion"], results["cuda"], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op", ["sum_dim", "mean_dim", "prod_dim", "max_dim", "min_dim"])
@pytest.mark.parametrize("shape,dim", [((5, 7), 0), ((3, 4, 6), 1), ((2, 1500), 1)])
def test_reductions_take_their_prologue(
    fused: Any, plain: Any, op: str, shape: tuple[int, ...], dim: int
) -> None:
    a, b = RNG.normal(size=shape), RNG.normal(size=shape[-1:])
    a[0, 0] = np.nan if op == "max_dim" else a[0, 0]

    def f(backend: Any) -> list[np.ndarray]:
        held = (put(backend, a) * 0.25 + put(backend, b)).tanh()
        reduced = getattr(held * 0.5 + 1.0, op)(dim)
        return [reduced.to_numpy(), held.to_numpy()]

    for got, want in zip(f(fused), f(plain), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert fused.stats.kernels == 1 and fused.stats.fused_reductions == 1


def test_many_ops_strided_inputs_and_float64(fused: Any, plain: Any) -> None:
    a, b = RNG.normal(size=(5, 7)), RNG.normal(size=(7,))
    mask = RNG.random(size=(7, 5)) > 0.5

    def f(backend: Any) -> np.ndarray:
        x = put(backend, a.T.copy()).swap_dims(0, 1)  # (5, 7), strided
        y = put(backend, b)
        m = burn.Tensor.from_data(mask, backend=backend).swap_dims(0, 1)
        z = (x * y - 0.5).abs().sqrt() + x.exp().clamp(0.1, 3.0)
        z = z.mask_where(m, burn.activation.sigmoid(x)) + x.greater(y).float() * 2.0
        z = (z - x.lower_equal_elem(0.0).float()).mask_fill(x.lower_elem(-1.0), 7.0)
        return (z.cast(burn.float64) * 3.0).flip((0,)).to_numpy()

    np.testing.assert_allclose(f(fused), f(plain), rtol=1e-6, atol=1e-6)
    assert fused.stats.fused_ops >= 15
