"""ONNX semantics the node suite found burn getting silently wrong (or crashing on): declared
output dtypes, casts to types burn lacks, the edge cases ONNX defines (zero vectors, min > max,
out-of-range one-hot indices, empty reductions, Dropout's mask), old opsets, other domains, and
the backend of a model without params. Each on ndarray, against values ONNX specifies."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import burn  # noqa: E402
import burn.onnx  # noqa: E402
from burn.onnx import OnnxError, UnsupportedOpError  # noqa: E402

ND = "ndarray"


def graph(
    op: str,
    inputs: list[tuple[str, int, list[int] | None]],
    outputs: list[tuple[str, int]],
    *,
    opset: int = 17,
    initializers: dict[str, np.ndarray] | None = None,
    domain: str = "",
    **attrs: Any,
) -> bytes:
    node = helper.make_node(op, [n for n, _, _ in inputs] + list(initializers or {}), [n for n, _ in outputs],
                            domain=domain, **attrs)
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    imports = [helper.make_opsetid(domain or "", 3 if domain else opset)]
    return helper.make_model(g, opset_imports=imports).SerializeToString()  # type: ignore[no-any-return]


def run(model_bytes: bytes, *feeds: np.ndarray) -> Any:
    model = burn.onnx.load(model_bytes, backend="ndarray")
    out = model(*feeds)
    return out.to_numpy() if not isinstance(out, tuple) else tuple(o.to_numpy() for o in out)


@pytest.mark.parametrize(
    "op, np_type, onnx_type",
    [("Add", np.int8, TensorProto.INT8), ("Mul", np.int16, TensorProto.INT16),
     ("Sub", np.uint8, TensorProto.UINT8), ("Max", np.int32, TensorProto.INT32)],
)
def test_integer_outputs_keep_their_declared_dtype_and_wrap(op: str, np_type: Any, onnx_type: int) -> None:
    info = np.iinfo(np_type)
    a = np.array([info.max, 3, info.min, 7], np_type)
    b = np.array([1, 100, 0, 9], np_type)
    out = run(graph(op, [("a", onnx_type, [4]), ("b", onnx_type, [4])], [("y", onnx_type)]), a, b)
    with np.errstate(over="ignore"):
        expected = {"Add": np.add, "Mul": np.multiply, "Sub": np.subtract, "Max": np.maximum}[op](a, b)
    assert out.dtype == np_type
    np.testing.assert_array_equal(out, expected)  # int8 127 + 1 wraps to -128 as ONNX's does


def test_float_outputs_keep_their_declared_dtype() -> None:
    x = np.array([1.5, -2.25, 3.0], np.float64)
    out = run(graph("Neg", [("x", TensorProto.DOUBLE, [3])], [("y", TensorProto.DOUBLE)]), x)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, -x)
    half = np.array([0.1, 2.0], np.float16)
    out = run(graph("Abs", [("x", TensorProto.FLOAT16, [2])], [("y", TensorProto.FLOAT16)]), half)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, half)


def test_an_output_type_the_backend_lacks_is_refused_at_load() -> None:
    u16 = TensorProto.UINT16
    model = graph("Add", [("a", u16, [2]), ("b", u16, [2])], [("y", u16)])
    with pytest.raises(OnnxError, match=r"output 'y' is declared uint16.*'ndarray' has no dtype for"):
        burn.onnx.load(model, backend="ndarray")


@pytest.mark.parametrize(("target", "want"), [
    (TensorProto.FLOAT8E4M3FN, [0.3125, 1.75, 448.0]),  # saturated at its largest finite value
    (TensorProto.FLOAT8E5M2, [0.3125, 1.75, 512.0]),
    (TensorProto.INT4, [0.0, 1.0, 4.0]),  # truncated, then wrapped: 500 = 0x1F4 keeps 0x4
    (TensorProto.FLOAT4E2M1, [0.5, 1.5, 6.0]),  # to nearest; saturated
])
def test_casts_to_narrow_types_round_as_onnx(target: int, want: list[float]) -> None:
    # Cast to the narrow type and back: the values come back rounded (ONNX's reference rounding).
    nodes = [helper.make_node("Cast", ["x"], ["n"], to=target), helper.make_node("Cast", ["n"], ["y"], to=1)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    x = np.array([0.3, 1.7, 500.0], np.float32)
    np.testing.assert_array_equal(run(model.SerializeToString(), x), want)
    # the same on a constant (folded at load: the host path)
    const = helper.make_graph(
        nodes, "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        [numpy_helper.from_array(x, "x")],
    )
    folded = burn.onnx.load(helper.make_model(const, opset_imports=[helper.make_opsetid("", 21)]), backend=ND)
    np.testing.assert_array_equal(folded.run({})["y"].to_numpy(), want)


def test_lp_normalization_of_a_zero_vector_is_zero() -> None:
    x = np.array([[0.0, 0.0], [3.0, 4.0]], np.float32)
    for p, norm in ((2, 5.0), (1, 7.0)):
        out = run(graph("LpNormalization", [("x", TensorProto.FLOAT, [2, 2])], [("y", TensorProto.FLOAT)],
                        axis=1, p=p), x)
        np.testing.assert_allclose(out, [[0.0, 0.0], [3.0 / norm, 4.0 / norm]], rtol=1e-6)


def test_dropout_mask_output_and_training_mode() -> None:
    x = np.array([1.0, np.nan, -2.0], np.float32)
    y, mask = run(graph("Dropout", [("x", TensorProto.FLOAT, [3])], [("y", TensorProto.FLOAT),
                                                                    ("m", TensorProto.BOOL)]), x)
    np.testing.assert_array_equal(y, x)
    assert mask.dtype == np.bool_ and mask.tolist() == [True, True, True]
    training = graph("Dropout", [("x", TensorProto.FLOAT, [3])], [("y", TensorProto.FLOAT)],
                     initializers={"r": np.array(0.5, np.float32), "t": np.array(True)})
    with pytest.raises(OnnxError, match="training_mode is true: random dropout is not supported"):
        run(training, x)
    no_drop = graph("Dropout", [("x", TensorProto.FLOAT, [3])], [("y", TensorProto.FLOAT)],
                    initializers={"r": np.array(0.0, np.float32), "t": np.array(True)})
    np.testing.assert_array_equal(run(no_drop, x), x)  # ratio 0 in training mode: identity


def test_clip_with_min_above_max_gives_max() -> None:
    x = np.array([-1.0, 0.5, 3.0], np.float32)
    model = graph("Clip", [("x", TensorProto.FLOAT, [3])], [("y", TensorProto.FLOAT)],
                  initializers={"lo": np.array(2.0, np.float32), "hi": np.array(1.0, np.float32)})
    np.testing.assert_array_equal(run(model, x), [1.0, 1.0, 1.0])


def test_one_hot_out_of_range_indices_give_off_rows() -> None:
    idx = np.array([0, -1, 5, -6, 2], np.int64)
    model = graph("OneHot", [("i", TensorProto.INT64, [5])], [("y", TensorProto.FLOAT)],
                  initializers={"d": np.array(5, np.int64), "v": np.array([0.0, 1.0], np.float32)}, axis=0)
    out = run(model, idx)
    expected = np.zeros((5, 5), np.float32)
    for col, i in enumerate([0, 4, None, None, 2]):
        if i is not None:
            expected[i, col] = 1.0
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    "op, value", [("ReduceMax", -np.inf), ("ReduceMin", np.inf), ("ReduceLogSumExp", -np.inf),
                  ("ReduceSum", 0.0), ("ReduceProd", 1.0)],
)
def test_reductions_over_an_empty_axis_give_the_identity(op: str, value: float) -> None:
    x = np.zeros((2, 0, 3), np.float32)
    axes = {"ax": np.array([1], np.int64)}
    model = graph(op, [("x", TensorProto.FLOAT, [2, 0, 3])], [("y", TensorProto.FLOAT)], opset=18,
                  initializers=axes, keepdims=1)
    out = run(model, x)
    assert out.shape == (2, 1, 3)
    np.testing.assert_array_equal(out, np.full((2, 1, 3), value, np.float32))
    if op in ("ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd"):  # the host (folding) path
        const = graph(op, [], [("y", TensorProto.FLOAT)], opset=18, initializers={"x": x, **axes}, keepdims=0)
        np.testing.assert_array_equal(run(const), np.full((2, 3), value, np.float32))


def test_bool_max_min_reductions_are_any_and_all() -> None:
    x = np.array([[True, False], [False, False]])
    for op, expected in (("ReduceMax", [True, False]), ("ReduceMin", [False, False])):
        model = graph(op, [("x", TensorProto.BOOL, [2, 2])], [("y", TensorProto.BOOL)], opset=18,
                      initializers={"ax": np.array([1], np.int64)}, keepdims=0)
        assert run(model, x).tolist() == expected


def test_integer_max_over_an_empty_axis_is_refused() -> None:
    model = graph("ReduceMax", [("x", TensorProto.INT32, [2, 0])], [("y", TensorProto.INT32)], opset=18,
                  initializers={"ax": np.array([1], np.int64)})
    with pytest.raises(OnnxError, match="reducing an integer tensor over an empty axis"):
        run(model, np.zeros((2, 0), np.int32))


def test_a_model_of_the_ml_domain_only_names_its_ops() -> None:
    x, y = ("x", TensorProto.FLOAT, [2]), ("y", TensorProto.FLOAT)
    model = graph("TreeEnsembleRegressor", [x], [y], domain="ai.onnx.ml")
    with pytest.raises(UnsupportedOpError, match=r"'ai\.onnx\.ml\.TreeEnsembleRegressor' \(node"):
        burn.onnx.load(model, backend="ndarray")
    # one burn runs loads without any ai.onnx opset
    model = graph("Normalizer", [x], [y], domain="ai.onnx.ml", norm="L1")
    np.testing.assert_allclose(run(model, np.array([1.0, -3.0], np.float32)), [0.25, -0.75])


def test_old_opsets_are_converted_with_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    model = graph("Relu", [("x", TensorProto.FLOAT, [3])], [("y", TensorProto.FLOAT)], opset=11)
    with caplog.at_level(logging.INFO, logger="burn.onnx"):
        out = run(model, np.array([-1.0, 0.0, 2.0], np.float32))
    np.testing.assert_array_equal(out, [0.0, 0.0, 2.0])
    assert any("opset 11 converted to opset 13" in r.getMessage() for r in caplog.records)
    assert burn.onnx.inspect(model).opset == 11  # inspect reports the file's own opset
    # Upsample (opset 8) without its scales: the converter fails, and the load says so
    bad = graph("Upsample", [("x", TensorProto.FLOAT, [1, 1, 2, 2])], [("y", TensorProto.FLOAT)], opset=8)
    with pytest.raises(OnnxError, match=r"opset 8 is older than 13.*version converter could not convert it"):
        burn.onnx.load(bad, backend="ndarray")


def test_maps_nested_sequences_and_strings_are_refused_at_load() -> None:
    def identity(kind: Any) -> bytes:
        g = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y"])], "g",
            [helper.make_value_info("x", kind)], [helper.make_value_info("y", kind)],
        )
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()  # type: ignore[no-any-return]

    floats = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    a_map = helper.make_map_type_proto(TensorProto.INT64, floats)
    with pytest.raises(OnnxError, match="input 'x' is a map: burn.onnx takes tensors, sequences of tensors"):
        burn.onnx.load(identity(a_map), backend="ndarray")
    nested = helper.make_sequence_type_proto(helper.make_sequence_type_proto(floats))
    with pytest.raises(OnnxError, match=r"input 'x' is a sequence\(sequence\(float32\?\)\): burn.onnx takes "
                                        "sequences of tensors only"):
        burn.onnx.load(identity(nested), backend="ndarray")
    of_strings = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.STRING, None))
    with pytest.raises(OnnxError, match="input 'x' is a string tensor"):
        burn.onnx.load(identity(of_strings), backend="ndarray")
    two_strings = [("x", TensorProto.STRING, [2]), ("y", TensorProto.STRING, [2])]
    strings = graph("Equal", two_strings, [("z", TensorProto.BOOL)])
    with pytest.raises(OnnxError, match="input 'x' is a string tensor: burn has no string dtype"):
        burn.onnx.load(strings, backend="ndarray")
    strings = graph("Identity", [("x", TensorProto.STRING, [2])], [("y", TensorProto.STRING)])
    with pytest.raises(OnnxError, match="input 'x' is a string tensor"):
        burn.onnx.load(strings, backend="ndarray")


def test_a_model_without_params_runs_on_the_backend_it_was_loaded_for() -> None:
    model_bytes = graph("Relu", [("x", TensorProto.FLOAT, [3])], [("y", TensorProto.FLOAT)])
    ad = burn.backend("autodiff(ndarray)")
    model = burn.onnx.load(model_bytes, backend=ad)
    assert model.backend is ad
    out = model(np.array([-1.0, 2.0, 0.5], np.float32))
    assert out.backend is ad
    nd = burn.backend("ndarray")
    moved = model.to_device(nd.default_device())
    assert moved.backend is nd and moved(np.zeros(3, np.float32)).backend is nd
    assert model.backend is ad  # to_device makes a copy
    # device= alone: its backend and device, for a graph with initializers and one without
    device = ad.default_device()
    for g in (model_bytes, graph("Add", [("x", TensorProto.FLOAT, [3])], [("y", TensorProto.FLOAT)],
                                 initializers={"w": np.ones(3, np.float32)})):
        on_device = burn.onnx.load(g, device)
        assert on_device.backend is ad
        out = on_device(np.array([-1.0, 2.0, 0.5], np.float32))
        assert out.backend is ad and out.device == device


def test_batch_norm_training_mode_uses_batch_statistics_and_gives_running_ones() -> None:
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(6)
    x = rng.normal(size=(4, 3, 2, 5)).astype(np.float32)
    stats = {n: rng.uniform(0.5, 1.5, size=3).astype(np.float32) for n in ("s", "b", "m", "v")}
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                            training_mode=1, momentum=0.8, epsilon=1e-3)
    g = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
        + [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in stats],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "rm", "rv")],
    )
    proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])
    feeds = {"x": x, **stats}
    want = ReferenceEvaluator(proto).run(None, feeds)
    out = burn.onnx.load(proto, backend=ND).run(feeds)
    for name, ref in zip(("y", "rm", "rv"), want, strict=True):
        np.testing.assert_allclose(out[name].to_numpy(), ref, rtol=1e-5, atol=1e-5)
    # running statistics outputs without training mode: refused, naming the node
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], name="bn")
    g = helper.make_graph([node], "g", g.input, g.output)
    model = burn.onnx.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)]), backend=ND)
    with pytest.raises(OnnxError, match=r"node 'bn' \(BatchNormalization, opset 15\).*need training_mode=1"):
        model.run(feeds)
