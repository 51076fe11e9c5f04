"""ONNX import end to end: models built and exported by PyTorch (onnx_support.py) run in burn
and match onnxruntime within 1e-4 (float32) on ndarray and opencl, fine-tune under autodiff,
and save and load like any module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

onnx_support = pytest.importorskip("onnx_support")  # skips with its reason without torch / onnx / onnxruntime
from onnx_support import MODELS, gpt, reference  # noqa: E402

import burn  # noqa: E402
import burn.onnx  # noqa: E402
from burn import Tensor, optim  # noqa: E402

TOL = 1e-4
_CACHE: dict[str, Any] = {}


def backend(name: str) -> Any:
    if name not in _CACHE:
        base = name.removeprefix("autodiff(").rstrip(")")
        if base == "opencl":
            rows = {r.name: r for r in burn.backends()}
            row = rows.get("opencl")
            if row is None or row.status != "available":
                pytest.skip("opencl: " + ("burn-opencl is not installed" if row is None else str(row.reason)))
        else:
            pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
        if name.startswith("autodiff"):
            pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
        _CACHE[name] = burn.backend(name)
    return _CACHE[name]


def model_data(name: str) -> tuple[bytes, list[np.ndarray]]:
    key = "model:" + name
    if key not in _CACHE:
        _CACHE[key] = MODELS[name]()
    return _CACHE[key]  # type: ignore[no-any-return]


def outputs(model: Any, inputs: list[np.ndarray], b: Any) -> list[np.ndarray]:
    got = model(*[Tensor.from_data(x, backend=b) for x in inputs])
    return [t.to_numpy() for t in (got if isinstance(got, tuple) else (got,))]


# -- outputs match onnxruntime --------------------------------------------------------------------
@pytest.mark.parametrize("backend_name", ["ndarray", "opencl"])
@pytest.mark.parametrize("name", list(MODELS))
def test_outputs_match_onnxruntime(name: str, backend_name: str) -> None:
    b = backend(backend_name)
    data, inputs = model_data(name)
    model = burn.onnx.load(data, backend=b)
    want = reference(data, inputs)
    got = outputs(model, inputs, b)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=TOL, atol=TOL)


def test_dynamic_shapes_run_other_lengths() -> None:
    """A graph exported with symbolic batch and length computes its shapes at call time."""
    b = backend("ndarray")
    data, _ = model_data("gpt-dynamic")
    model = burn.onnx.load(data, backend=b)
    assert {"Shape", "Range", "Trilu"} <= {n.op_type for n in model.program.nodes}
    for shape in [(1, 5), (3, 11)]:
        idx = np.random.default_rng(1).integers(0, 40, size=shape).astype(np.int64)
        np.testing.assert_allclose(outputs(model, [idx], b)[0], reference(data, [idx])[0], rtol=TOL, atol=TOL)


def test_static_shapes_fold_at_load() -> None:
    """With static shapes the shape computations and the causal masks are constants."""
    data, _ = model_data("gpt")
    model = burn.onnx.load(data, backend=backend("ndarray"))
    ops = {n.op_type for n in model.program.nodes}
    assert not ops & {"Shape", "Range", "Trilu", "Equal", "Less", "Cast", "Constant"}, ops
    assert model.program.folded > 10
    # the reshape targets are concrete: every Reshape reads a host constant
    for node in model.program.nodes:
        if node.op_type == "Reshape":
            assert node.inputs[1] in model.program.constants


def test_params_are_the_float_initializers() -> None:
    data, _ = model_data("resnet")
    model = burn.onnx.load(data, backend=backend("ndarray"))
    names = dict(model.named_params())
    assert "weights.fc.weight" in names and "weights.stem.weight" in names
    stats = [p for path, p in names.items() if "running_" in path]
    assert stats and not any(p.require_grad for p in stats)  # batch-norm statistics do not train
    assert model.num_params(trainable=False) == sum(
        v.size for v in _initializers(data).values() if v.dtype.kind == "f"
    )


def _initializers(data: bytes) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    return {t.name: numpy_helper.to_array(t) for t in onnx.load_from_string(data).graph.initializer}


def test_float64_backend_and_dtype_option() -> None:
    data, inputs = model_data("mlp")
    b = burn.backend("ndarray", float_dtype="float64")
    model = burn.onnx.load(data, backend=b)
    got = outputs(model, inputs, b)
    assert got[0].dtype == np.float64
    np.testing.assert_allclose(got[0], reference(data, inputs)[0], rtol=TOL, atol=TOL)
    m32 = burn.onnx.load(data, backend=backend("ndarray"), float_dtype="float64")
    assert {p.val().dtype for p in m32.weights.values()} == {burn.float64}


# -- fine-tuning under autodiff -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mlp", "resnet", "gpt", "lstm"])
def test_fine_tune_ten_steps_lowers_the_loss(name: str) -> None:
    b = backend("autodiff(ndarray)")
    data, inputs = model_data(name)
    model = burn.onnx.load(data, backend=b)
    xs = [Tensor.from_data(x, backend=b) for x in inputs]
    first = model(*xs)
    first = first[0] if isinstance(first, tuple) else first
    target = Tensor.from_data(np.random.default_rng(0).normal(size=first.shape).astype(np.float32), backend=b)
    optimizer = optim.AdamConfig().init()
    losses = []
    for _ in range(10):
        out = model(*xs)
        out = out[0] if isinstance(out, tuple) else out
        loss = (out - target).square().mean()
        losses.append(loss.item())
        grads = optim.GradientsParams.from_grads(loss.backward(), model)
        assert len(grads) > 0
        model = optimizer.step(3e-2, model, grads)
    assert losses[-1] < losses[0] * 0.9, losses


def test_gradients_reach_every_trainable_param() -> None:
    b = backend("autodiff(ndarray)")
    data, inputs = model_data("gpt")
    model = burn.onnx.load(data, backend=b)
    loss = model(Tensor.from_data(inputs[0], backend=b)).square().mean()
    grads = loss.backward()
    missing = [name for name, p in model.weights.items() if p.require_grad and p.val().grad(grads) is None]
    assert not missing


# -- records and devices --------------------------------------------------------------------------
def test_record_round_trip(tmp_path: Path) -> None:
    b = backend("autodiff(ndarray)")
    data, inputs = model_data("lstm")
    model = burn.onnx.load(data, backend=b)
    xs = [Tensor.from_data(x, backend=b) for x in inputs]
    loss = model(*xs)[0].square().mean()
    trained = (
        optim.AdamConfig().init().step(0.05, model, optim.GradientsParams.from_grads(loss.backward(), model))
    )
    path = trained.save_file(tmp_path / "lstm")
    fresh = burn.onnx.load(data, backend=backend("ndarray"))
    loaded = fresh.load_file(path)
    want = [t.to_numpy() for t in trained.valid()(*[x.inner() for x in xs])]
    got = outputs(loaded, inputs, backend("ndarray"))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    assert not np.allclose(got[0], outputs(fresh, inputs, backend("ndarray"))[0])  # the trained weights
    record = loaded.into_record()
    assert loaded.load_record(record) is not None


def test_valid_and_to_device() -> None:
    data, inputs = model_data("mlp")
    ad = backend("autodiff(ndarray)")
    model = burn.onnx.load(data, backend=ad)
    inner = model.valid()
    assert inner.backend is backend("ndarray")
    got = outputs(inner, inputs, backend("ndarray"))
    np.testing.assert_allclose(got[0], reference(data, inputs)[0], rtol=TOL, atol=TOL)
    moved = inner.to_device(ad.default_device())
    assert moved.backend is not None


def test_named_inputs_and_run() -> None:
    data, inputs = model_data("mlp")
    b = backend("ndarray")
    model = burn.onnx.load(data, backend=b)
    assert model.input_names == ["x", "seq"]
    by_name = model(seq=inputs[1], x=inputs[0])  # NumPy arrays are accepted too
    out = model.run({"x": inputs[0], "seq": inputs[1]})
    assert list(out) == model.output_names
    np.testing.assert_allclose(by_name[0].to_numpy(), out[model.output_names[0]].to_numpy())


def test_gpt_other_seed_differs() -> None:
    """The comparison could fail: two different weight draws give different outputs."""
    b = backend("ndarray")
    d0, inputs = model_data("gpt")
    d1, _ = gpt(seed=1)
    a = outputs(burn.onnx.load(d0, backend=b), inputs, b)[0]
    c = outputs(burn.onnx.load(d1, backend=b), inputs, b)[0]
    assert not np.allclose(a, c, atol=TOL)
