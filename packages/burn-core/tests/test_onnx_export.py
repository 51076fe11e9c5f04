"""burn.onnx.export: burn.nn models and one function per mapped op family, run by onnxruntime
against burn's own result, with dynamic axes, re-imported with burn.onnx.load; and its errors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
onnx = pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (the reference)")

import export_models as M  # noqa: E402

import burn  # noqa: E402
import burn.onnx  # noqa: E402
import burn.tensor.module as F  # noqa: E402
from burn import activation as A  # noqa: E402
from burn import nn  # noqa: E402
from burn.onnx import ExportError  # noqa: E402
from burn.tensor import Tensor  # noqa: E402

B = burn.backend("ndarray")
DEV = B.default_device()
RNG = np.random.default_rng(7)


def _t(a: np.ndarray) -> Tensor:
    return Tensor.from_data(a, DEV)


def _run(path: Path, *arrays: np.ndarray) -> list[np.ndarray]:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, arrays, strict=True)))


def _burn(fn: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    out = fn(*[_t(a) for a in arrays])
    outs = out if isinstance(out, tuple | list) else [out]
    return [o.to_data().to_numpy() for o in outs]


def _check(
    tmp_path: Path, fn: Any, *arrays: np.ndarray, dynamic: dict[str, Any] | None = None,
    others: tuple[np.ndarray, ...] | None = None, tol: float = 1e-5, opset: int = 17,
) -> onnx.ModelProto:
    """Export `fn` traced on `arrays`, run it with onnxruntime on `arrays` (and on `others`,
    inputs of other sizes along the dynamic axes), compare with burn."""
    path = tmp_path / "fn.onnx"
    burn.onnx.export(fn, [_t(a) for a in arrays], path, dynamic_axes=dynamic, opset=opset)
    for inputs in [arrays] + ([others] if others is not None else []):
        want = _burn(fn, *inputs)
        got = _run(path, *inputs)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape, (g.shape, w.shape)
            if w.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
            else:
                np.testing.assert_array_equal(g, w)
    return onnx.load(str(path))


def _f32(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape).astype(np.float32)


# -- the three models ------------------------------------------------------------------------------
MODELS = {
    "resnet": (M.resnet, lambda b: _f32(b, 3, 16, 16)),
    "gpt": (M.gpt, lambda b: RNG.integers(0, 50, (b, 7))),
    "bilstm": (M.bilstm, lambda b: _f32(b, 5, 6)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_runs_in_onnxruntime_with_dynamic_batch_and_reloads(tmp_path: Path, name: str) -> None:
    build, example = MODELS[name]
    model = build(DEV)
    x, other = example(2), example(5)
    path = burn.onnx.export(model, _t(x), tmp_path / f"{name}.onnx", dynamic_axes={"input_0": {0: "batch"}})
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    torch_keys = {k for k in burn.record.pytorch_state_dict(model) if not k.endswith("num_batches_tracked")}
    assert {i.name for i in proto.graph.initializer} >= torch_keys
    for inp in (x, other):  # the example's batch and another one
        want = model(_t(inp)).to_data().to_numpy()
        (got,) = _run(path, inp)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    reloaded = burn.onnx.load(path, backend="ndarray")
    for inp in (x, other):
        want = model(_t(inp)).to_data().to_numpy()
        np.testing.assert_allclose(reloaded(_t(inp)).to_data().to_numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_initializers_carry_pytorch_names_and_layouts(tmp_path: Path, name: str) -> None:
    build, example = MODELS[name]
    model = build(DEV)
    path = burn.onnx.export(model, _t(example(2)), tmp_path / f"{name}.onnx", param_names="pytorch")
    values = {i.name: onnx.numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}
    state = burn.record.pytorch_state_dict(model)
    shared = [k for k in state if k in values]
    assert len(shared) == len([k for k in state if not k.endswith("num_batches_tracked")])
    for key in shared:
        np.testing.assert_array_equal(values[key], state[key], err_msg=key)


def test_param_names_pytorch_refuses_a_layer_without_counterpart(tmp_path: Path) -> None:
    model = nn.GruConfig(3, 4, reset_after=False).init(DEV)
    x = _t(_f32(2, 5, 3))
    with pytest.raises(burn.onnx.ExportError, match="param_names='pytorch'.*PyTorch counterpart"):
        burn.onnx.export(model, x, tmp_path / "g.onnx", param_names="pytorch")
    assert not (tmp_path / "g.onnx").exists()


def test_param_names_must_be_known(tmp_path: Path) -> None:
    with pytest.raises(burn.onnx.ExportError, match="param_names"):
        burn.onnx.export(M.resnet(DEV), _t(_f32(1, 3, 16, 16)), tmp_path / "r.onnx", param_names="torch")


def test_initializers_are_named_by_param_path(tmp_path: Path) -> None:
    model = M.resnet(DEV)
    path = burn.onnx.export(model, _t(_f32(1, 3, 16, 16)), tmp_path / "r.onnx", param_names="burn")
    names = {i.name for i in onnx.load(str(path)).graph.initializer}
    for p in ("stem.weight", "bn.running_mean", "blocks.1.conv2.weight", "head.bias"):
        assert p in names
    values = {i.name: onnx.numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}
    np.testing.assert_array_equal(values["stem.weight"], model.stem.weight.val().to_data().to_numpy())


def test_autodiff_module_exports_its_inference_graph(tmp_path: Path) -> None:
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    ad = burn.backend("autodiff(ndarray)")
    model = M.bilstm(ad.default_device()).train()
    x = _f32(2, 5, 6)
    path = burn.onnx.export(model, Tensor.from_data(x, ad.default_device()), tmp_path / "ad.onnx")
    want = model.valid()(_t(x)).to_data().to_numpy()
    np.testing.assert_allclose(_run(path, x)[0], want, rtol=1e-5, atol=1e-5)


# -- op families ------------------------------------------------------------------------------------
UNARY = ["exp", "abs", "neg", "sin", "cos", "tanh", "erf", "floor", "ceil", "round", "sign"]


@pytest.mark.parametrize("op", UNARY)
def test_unary_math(tmp_path: Path, op: str) -> None:
    _check(tmp_path, lambda x: getattr(x, op)(), _f32(3, 4) * 3)


@pytest.mark.parametrize("op, low, high", [
    ("tan", -1.2, 1.2), ("sinh", -2, 2), ("cosh", -2, 2), ("asin", -0.9, 0.9), ("acos", -0.9, 0.9),
    ("atan", -3, 3), ("asinh", -3, 3), ("acosh", 1.1, 4), ("atanh", -0.9, 0.9),
])
def test_trigonometry(tmp_path: Path, op: str, low: float, high: float) -> None:
    _check(tmp_path, lambda x: getattr(x, op)(), RNG.uniform(low, high, (3, 4)).astype(np.float32))


def test_int_ops(tmp_path: Path) -> None:
    def fn(a: Tensor, b: Tensor) -> tuple[Tensor, ...]:
        c = (a + b) * 2 - b.abs() + (-a)
        return (
            c, c.clamp(-3, 3), c.clamp_min(0), a.greater(b), a.lower_equal_elem(1), a.equal(b),
            a.sum_dim(1), a.max_dim(0), a.min(), a.prod_dim(1), a.argmin(1), a.cumsum(1), a.float() * 0.5,
            a.matmul(b.swap_dims(0, 1)), a[:, 1:], Tensor.cat([a, b], 0).reshape((4, 3)),
        )

    _check(tmp_path, fn, RNG.integers(-4, 5, (2, 3)), RNG.integers(-4, 5, (2, 3)))


def test_positive_domain_math(tmp_path: Path) -> None:
    x = np.abs(_f32(3, 4)) + 0.5
    _check(tmp_path, lambda t: t.log() + t.sqrt() + t.recip() + t.log1p() + t.powf_scalar(1.5), x)


def test_binary_broadcast_and_scalar_ops(tmp_path: Path) -> None:
    def fn(a: Tensor, b: Tensor) -> Tensor:
        return ((a + b) * (a - b) / (b.abs() + 1.0) - 2.0) * 0.5 + a.powf(b.abs().clamp(0.5, 2.0))

    _check(tmp_path, fn, np.abs(_f32(2, 3, 4)) + 0.1, _f32(4))


def test_comparisons_masks_and_casts(tmp_path: Path) -> None:
    def fn(a: Tensor, b: Tensor) -> tuple[Tensor, ...]:
        mask = a.greater(b)
        filled = a.mask_fill(mask, -1.0).mask_where(a.lower_elem(-0.5), b)
        flags = mask.bool_and(a.not_equal_elem(0.0)).bool_not()
        clamped = a.clamp_min(0.0) + a.clamp_max(0.1)
        return filled, flags, a.greater_equal_elem(0.0).int(), (a * 3).int(), clamped

    _check(tmp_path, fn, _f32(3, 5), _f32(3, 5))


@pytest.mark.parametrize("opset", [17, 18, 21])
def test_reductions(tmp_path: Path, opset: int) -> None:
    def fn(x: Tensor) -> tuple[Tensor, ...]:
        return (
            x.sum_dim(1), x.mean_dim(0), x.max_dim(2), x.min_dim(1), x.sum(), x.mean(), x.argmax(2),
            x.cumsum(1),
        )

    model = _check(tmp_path, fn, _f32(2, 3, 4), opset=opset)
    assert model.opset_import[0].version == opset


def test_layout_ops_follow_a_dynamic_batch(tmp_path: Path) -> None:
    def fn(x: Tensor, y: Tensor) -> tuple[Tensor, ...]:
        b = x.shape[0]
        r = x.reshape((b * 3, 4)).reshape((b, 12))
        p = x.permute((2, 0, 1)).swap_dims(0, 1)
        s = x[:, 1:3, ::2]
        cat = Tensor.cat([x, y.expand((b, 3, 4))], 2)
        return r, p, s, x.flip((1,)), cat, x.repeat_dim(1, 2), x.matmul(y.swap_dims(1, 2).expand((b, 4, 3)))

    _check(tmp_path, fn, _f32(2, 3, 4), _f32(1, 3, 4), dynamic={"input_0": [0]},
           others=(_f32(5, 3, 4), _f32(1, 3, 4)))


def test_indexing_and_creation_follow_a_dynamic_batch(tmp_path: Path) -> None:
    def fn(x: Tensor, idx: Tensor) -> tuple[Tensor, ...]:
        b = x.shape[0]
        zeros = Tensor.zeros((b, 4), device=x.device)
        full = Tensor.full((b, 2), 3.5, device=x.device)
        steps = Tensor.arange(0, b, device=x.device)
        picked = x.gather(1, idx.reshape((1, 2)).expand((b, 2)))
        return x.select(1, idx), picked, zeros + x[:, :4], full, steps

    _check(tmp_path, fn, _f32(3, 5), np.array([4, 1]), dynamic={"input_0": [0]},
           others=(_f32(6, 5), np.array([4, 1])))


def test_conv_and_pooling(tmp_path: Path) -> None:
    w2, b2, w1 = _f32(6, 2, 3, 3), _f32(6), _f32(4, 3, 3)

    def fn(x: Tensor, s: Tensor, w2: Tensor, b2: Tensor, w1: Tensor) -> tuple[Tensor, ...]:
        y = F.conv2d(x, w2, b2, stride=2, padding=1, dilation=1, groups=2)
        z = F.conv1d(s, w1, None, stride=1, padding=2, dilation=2)
        return (
            y, z, F.max_pool2d(x, 2, 2), F.avg_pool2d(x, 3, 1, 1),
            F.avg_pool2d(x, 3, 1, 1, count_include_pad=False), F.max_pool1d(s, 3, 2, 1), F.avg_pool1d(s, 2),
            F.adaptive_avg_pool2d(x, (2, 4)), F.adaptive_avg_pool2d(x, 1),
        )

    _check(tmp_path, fn, _f32(2, 4, 8, 8), _f32(2, 3, 10), w2, b2, w1,
           dynamic={"input_0": {0: "n"}, "input_1": {0: "n"}},
           others=(_f32(3, 4, 8, 8), _f32(3, 3, 10), w2, b2, w1))


def test_activations(tmp_path: Path) -> None:
    def fn(x: Tensor) -> tuple[Tensor, ...]:
        return (
            A.relu(x), A.relu6(x * 4), A.leaky_relu(x, 0.1), A.elu(x, 0.7), A.softplus(x), A.softplus(x, 2.0),
            A.hard_sigmoid(x), A.silu(x), A.gelu(x), A.gelu(x, approximate="tanh"), A.sigmoid(x),
            A.softmax(x, 1), A.log_softmax(x, 0), A.hardtanh(x, -0.5, 0.5),
        )

    _check(tmp_path, fn, _f32(3, 6) * 3)


def test_attention_with_a_mask(tmp_path: Path) -> None:
    mask = np.zeros((1, 1, 4, 6), bool)
    mask[..., 5] = True
    mask[..., 2, :] = True  # a row with every key masked: weights 0, as the contract defines it

    def fn(q: Tensor, k: Tensor, v: Tensor, m: Tensor) -> Tensor:
        return F.attention(q, k, v, m)

    _check(tmp_path, fn, _f32(2, 3, 4, 8), _f32(2, 3, 6, 8), _f32(2, 3, 6, 5), mask,
           dynamic={f"input_{i}": {0: "batch"} for i in range(3)},
           others=(_f32(3, 3, 4, 8), _f32(3, 3, 6, 8), _f32(3, 3, 6, 5), mask))


def test_attention_causal(tmp_path: Path) -> None:
    def fn(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        return F.attention(q, k, v, None, causal=True, scale=0.3)

    _check(tmp_path, fn, _f32(2, 3, 6, 8), _f32(2, 3, 6, 8), _f32(2, 3, 6, 5))


def test_layer_norm_with_and_without_a_shift(tmp_path: Path) -> None:
    def fn(x: Tensor, gamma: Tensor, beta: Tensor) -> tuple[Tensor, Tensor]:
        return F.layer_norm(x, gamma, beta, epsilon=1e-3), F.layer_norm(x, gamma)

    _check(tmp_path, fn, _f32(2, 3, 6), _f32(6), _f32(6), dynamic={"input_0": {0: "batch"}},
           others=(_f32(4, 3, 6), _f32(6), _f32(6)))


def test_embedding_and_lstm_cell(tmp_path: Path) -> None:
    def fn(weights: Tensor, ids: Tensor, gates: Tensor, cell: Tensor) -> tuple[Tensor, Tensor]:
        return F.embedding(weights, ids), F.lstm_cell(gates, cell)

    _check(tmp_path, fn, _f32(10, 4), np.array([[1, 9], [0, 3]]), _f32(3, 16), _f32(3, 4))


def test_closed_over_tensor_is_explained(tmp_path: Path) -> None:
    w = _t(_f32(3, 3))
    with pytest.raises(ExportError, match="not among the traced function's inputs"):
        burn.onnx.export(lambda x: x.matmul(w), _t(_f32(2, 3)), tmp_path / "c.onnx")


def test_exported_ops_lists_what_the_models_need() -> None:
    ops = set(burn.onnx.exported_ops())
    for op in ("conv2d", "max_pool2d", "adaptive_avg_pool2d", "embedding", "softmax", "gelu", "lstm_cell",
               "float_matmul", "float_reshape", "float_slice", "float_cat", "float_mean_dim", "attention"):
        assert op in ops
    assert "float_sort" not in ops


# -- errors ------------------------------------------------------------------------------------------
def test_unmappable_op_is_named(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="float_sort"):
        burn.onnx.export(lambda x: x.sort(1), _t(_f32(2, 3)), tmp_path / "s.onnx")
    assert not (tmp_path / "s.onnx").exists()


def test_host_read_is_named_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=r"float_into_data: .*cannot depend on a value read"):
        burn.onnx.export(lambda x: x * x.sum().item(), _t(_f32(2, 3)), tmp_path / "h.onnx")


def test_failed_export_leaves_an_existing_file_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model.onnx"
    target.write_bytes(b"previous model")
    with pytest.raises(ExportError):
        burn.onnx.export(lambda x: x.sort(1), _t(_f32(2, 3)), target)
    assert target.read_bytes() == b"previous model"

    def refuse(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("burn.record._io.os.replace", refuse)
    with pytest.raises(ExportError, match="cannot write .*No space left"):
        burn.onnx.export(lambda x: x.exp(), _t(_f32(2, 3)), target)
    assert target.read_bytes() == b"previous model"
    assert os.listdir(tmp_path) == ["model.onnx"]  # no temp file left behind


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="does not exist"):
        burn.onnx.export(lambda x: x.exp(), _t(_f32(2)), tmp_path / "missing" / "m.onnx")
    with pytest.raises(ExportError, match="is a directory"):
        burn.onnx.export(lambda x: x.exp(), _t(_f32(2)), tmp_path)


def test_bad_arguments(tmp_path: Path) -> None:
    x = _t(_f32(2, 3))
    with pytest.raises(ExportError, match="opset"):
        burn.onnx.export(lambda v: v.exp(), x, tmp_path / "m.onnx", opset=13)
    with pytest.raises(ExportError, match="'nope'"):
        burn.onnx.export(lambda v: v.exp(), x, tmp_path / "m.onnx", dynamic_axes={"nope": [0]})
    with pytest.raises(ExportError, match="out of range"):
        burn.onnx.export(lambda v: v.exp(), x, tmp_path / "m.onnx", dynamic_axes={"input_0": [5]})
    with pytest.raises(ExportError, match="input_names"):
        burn.onnx.export(lambda v: v.exp(), x, tmp_path / "m.onnx", input_names=["a", "b"])


def test_custom_names(tmp_path: Path) -> None:
    path = burn.onnx.export(lambda a, b: (a + b, a * b), [_t(_f32(2)), _t(_f32(2))], tmp_path / "n.onnx",
                            input_names=["left", "right"], output_names=["sum", "product"])
    graph = onnx.load(str(path)).graph
    assert [i.name for i in graph.input] == ["left", "right"]
    assert [o.name for o in graph.output] == ["sum", "product"]


def test_loop_over_a_dynamic_axis_is_refused(tmp_path: Path) -> None:
    # each direction is one lstm_sequence op, which the exporter unrolls over its steps: it needs
    # the sequence length at export time
    model = M.bilstm(DEV)
    with pytest.raises(ExportError, match=r"lstm_sequence: the exported graph needs the size of axes \[0\]"):
        burn.onnx.export(model, _t(_f32(2, 5, 6)), tmp_path / "l.onnx", dynamic_axes={"input_0": [1]})


def test_data_built_from_a_dynamic_size_is_refused(tmp_path: Path) -> None:
    model = M.gpt(DEV)  # the causal mask is built from data of size [T, T]
    with pytest.raises(ExportError, match="bool_from_data: a tensor the traced function builds from data"):
        burn.onnx.export(
            model, _t(RNG.integers(0, 50, (2, 7))), tmp_path / "g.onnx", dynamic_axes={"input_0": [1]}
        )


def test_export_from_another_backend(tmp_path: Path) -> None:
    """The trace runs on the tensors' own backend: a model on opencl exports the same graph."""
    pytest.importorskip("burn_opencl", reason="burn-opencl is not installed")
    try:
        cl = burn.backend("opencl")
    except burn.BurnError as e:  # no OpenCL platform here
        pytest.skip(f"opencl cannot run here: {e}")
    dev = cl.default_device()
    model = M.gpt(dev)
    ids = RNG.integers(0, 50, (2, 6))
    x = Tensor.from_data(ids, dev)
    path = burn.onnx.export(model, x, tmp_path / "cl.onnx", dynamic_axes={"input_0": [0]})
    for batch in (ids, RNG.integers(0, 50, (3, 6))):
        want = model(Tensor.from_data(batch, dev)).to_data().to_numpy()
        np.testing.assert_allclose(_run(path, batch)[0], want, rtol=1e-5, atol=1e-5)


def test_missing_onnx_package_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise burn.onnx.OnnxError("burn.onnx needs the onnx package: pip install 'burn-core[onnx]'")

    monkeypatch.setattr("burn.onnx.graph.import_onnx", missing)
    with pytest.raises(burn.onnx.OnnxError, match=r"pip install 'burn-core\[onnx\]'"):
        burn.onnx.export(lambda v: v.exp(), _t(_f32(2)), tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()
