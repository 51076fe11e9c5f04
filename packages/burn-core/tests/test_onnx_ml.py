"""``ai.onnx.ml`` ops (`burn.onnx.ops_ml`) on one-node models built with ``onnx.helper``,
compared to NumPy (float32 outputs, as the ONNX-ML spec declares)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

from onnx import TensorProto, helper  # noqa: E402

import burn.onnx  # noqa: E402

X = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)


def run_ml(op: str, inputs: list[np.ndarray], out_shape: list[Any], out_type: int = TensorProto.FLOAT,
           **attrs: Any) -> np.ndarray:
    names = [f"i{k}" for k in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], domain="ai.onnx.ml", **attrs)
    types = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
    graph = helper.make_graph(
        [node],
        op,
        [
            helper.make_tensor_value_info(n, types[a.dtype], list(a.shape))
            for n, a in zip(names, inputs, strict=True)
        ],
        [helper.make_tensor_value_info("y", out_type, out_shape)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    loaded = burn.onnx.load(model.SerializeToString(), backend="ndarray")
    out = loaded.run(dict(zip(names, inputs, strict=True)))["y"]
    return np.asarray(out.to_numpy())


def test_scaler_per_feature_and_broadcast() -> None:
    got = run_ml("Scaler", [X], [2, 3], offset=[1.0, 0.0, -1.0], scale=[2.0, 0.5, 1.0])
    np.testing.assert_allclose(got, (X - [1.0, 0.0, -1.0]) * [2.0, 0.5, 1.0], rtol=1e-6)
    got = run_ml("Scaler", [X], [2, 3], offset=[0.5], scale=[3.0])
    np.testing.assert_allclose(got, (X - 0.5) * 3.0, rtol=1e-6)


@pytest.mark.parametrize(
    ("norm", "ref"),
    [
        ("MAX", lambda x: x / x.max(axis=1, keepdims=True)),
        ("L1", lambda x: x / np.abs(x).sum(axis=1, keepdims=True)),
        ("L2", lambda x: x / np.sqrt((x * x).sum(axis=1, keepdims=True))),
    ],
)
def test_normalizer(norm: str, ref: Any) -> None:
    np.testing.assert_allclose(run_ml("Normalizer", [X], [2, 3], norm=norm), ref(X), rtol=1e-6)


def test_binarizer_keeps_the_type() -> None:
    got = run_ml("Binarizer", [X], [2, 3], threshold=0.75)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, (X > 0.75).astype(np.float32))


def test_linear_regressor() -> None:
    coef = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.25]], np.float32)
    got = run_ml("LinearRegressor", [X], [2, 2], coefficients=coef.ravel().tolist(), intercepts=[0.1, -3.0],
                 targets=2)
    np.testing.assert_allclose(got, X @ coef.T + [0.1, -3.0], rtol=1e-6)
    with pytest.raises(burn.onnx.OnnxError, match="5 coefficients for 2 targets of 3 features"):
        run_ml("LinearRegressor", [X], [2, 2], coefficients=[1.0] * 5, targets=2)
    with pytest.raises(burn.onnx.OnnxError, match="post_transform 'SOFTMAX' is not supported"):
        run_ml("LinearRegressor", [X], [2, 1], coefficients=[1.0] * 3, post_transform="SOFTMAX")


def test_array_feature_extractor() -> None:
    idx = np.array([2, 0], np.int64)
    np.testing.assert_array_equal(run_ml("ArrayFeatureExtractor", [X, idx], [2, 2]), X[:, [2, 0]])
    with pytest.raises(burn.onnx.OnnxError, match=r"indices \[3\] out of range for 3 features"):
        run_ml("ArrayFeatureExtractor", [X, np.array([3], np.int64)], [2, 1])


def test_label_encoder_numbers_to_numbers() -> None:
    x = np.array([[3, 1], [7, 2]], np.int64)
    got = run_ml("LabelEncoder", [x], [2, 2], TensorProto.INT64, keys_int64s=[1, 2, 3],
                 values_int64s=[10, 20, 30], default_int64=-5)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [[30, 10], [-5, 20]])
    got = run_ml("LabelEncoder", [x], [2, 2], keys_int64s=[1, 7], values_floats=[0.5, 1.5])
    np.testing.assert_array_equal(got, np.array([[-0.0, 0.5], [1.5, -0.0]], np.float32))
    with pytest.raises(burn.onnx.OnnxError, match="string keys are not supported"):
        run_ml("LabelEncoder", [x], [2, 2], TensorProto.INT64, keys_strings=["a"], values_int64s=[1])


def test_one_hot_encoder_on_ints() -> None:
    x = np.array([[4, 1], [2, 9]], np.int64)
    got = run_ml("OneHotEncoder", [x], [2, 2, 3], cats_int64s=[1, 2, 4])
    want = (x[..., None] == np.array([1, 2, 4])).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(burn.onnx.OnnxError, match="not one of the categories"):
        run_ml("OneHotEncoder", [x], [2, 2, 3], cats_int64s=[1, 2, 4], zeros=0)
