"""ONNX sequences and optionals in `burn.onnx`: the sequence ops against the values ONNX
specifies (and onnx's reference evaluator), sequence and optional graph inputs and outputs,
declared element dtypes kept, and bad positions, split sizes and misuse refused with an
`OnnxError` naming the node."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import burn  # noqa: E402
import burn.onnx  # noqa: E402
from burn.errors import KindError  # noqa: E402
from burn.onnx import OnnxError  # noqa: E402

FLOATS = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
SEQ = helper.make_sequence_type_proto(FLOATS)


def model(
    nodes: list[Any], inputs: list[tuple[str, Any]], outputs: list[tuple[str, Any]], opset: int = 18
) -> Any:
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_value_info(n, t) for n, t in inputs],
        [helper.make_value_info(n, t) for n, t in outputs],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def host(value: Any) -> Any:
    if isinstance(value, list):
        return [host(v) for v in value]
    return None if value is None else np.asarray(value.to_numpy())


def run_both(proto: Any, feeds: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """burn's outputs and onnx's reference evaluator's, in output order."""
    out = burn.onnx.load(proto, backend="ndarray").run(feeds)
    ours = [host(out[o.name]) for o in proto.graph.output]
    return ours, ReferenceEvaluator(proto).run(None, feeds)


def assert_same(ours: Any, ref: Any) -> None:
    if isinstance(ref, list):
        assert isinstance(ours, list) and len(ours) == len(ref)
        for a, b in zip(ours, ref, strict=True):
            assert_same(a, b)
        return
    ref = np.asarray(ref)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    np.testing.assert_array_equal(ours, ref)


XS = [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.ones((1, 3), np.float32),
    np.full((3, 3), 2.0, np.float32),
]


@pytest.mark.parametrize("position", [0, 2, -1, -3])
def test_sequence_at_and_length(position: int) -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
        helper.make_node("SequenceAt", ["s", "p"], ["y"]),
        helper.make_node("SequenceLength", ["s"], ["n"]),
    ]
    scalar_i64 = helper.make_tensor_type_proto(TensorProto.INT64, [])
    proto = model(
        nodes,
        [("a", FLOATS), ("b", FLOATS), ("c", FLOATS), ("p", scalar_i64)],
        [("y", FLOATS), ("n", scalar_i64)],
    )
    feeds = {"a": XS[0], "b": XS[1], "c": XS[2], "p": np.array(position, np.int64)}
    ours, ref = run_both(proto, feeds)
    assert_same(ours, ref)
    np.testing.assert_array_equal(ours[0], XS[position])
    assert ours[1] == 3


def test_insert_and_erase_return_new_sequences() -> None:
    # the same sequence read by two nodes: each sees it unchanged (no edit in place)
    nodes = [
        helper.make_node("SequenceInsert", ["s", "t"], ["at_end"]),
        helper.make_node("SequenceInsert", ["s", "t", "zero"], ["at_front"]),
        helper.make_node("SequenceErase", ["s"], ["without_last"]),
        helper.make_node("SequenceErase", ["s", "minus_three"], ["without_first"]),
    ]
    i64 = helper.make_tensor_type_proto(TensorProto.INT64, [])
    proto = model(
        nodes,
        [("s", SEQ), ("t", FLOATS), ("zero", i64), ("minus_three", i64)],
        [(n, SEQ) for n in ("at_end", "at_front", "without_last", "without_first")],
    )
    t = np.zeros((2, 2), np.float32)
    feeds = {"s": XS, "t": t, "zero": np.array(0, np.int64), "minus_three": np.array(-3, np.int64)}
    ours, ref = run_both(proto, feeds)
    assert_same(ours, ref)
    assert [x.shape for x in ours[0]] == [(2, 3), (1, 3), (3, 3), (2, 2)]
    assert [x.shape for x in ours[1]] == [(2, 2), (2, 3), (1, 3), (3, 3)]
    assert [x.shape for x in ours[2]] == [(2, 3), (1, 3)]
    assert [x.shape for x in ours[3]] == [(1, 3), (3, 3)]


@pytest.mark.parametrize(
    "split, keepdims, shapes",
    [
        (None, 1, [(1, 5)] * 3),
        (None, 0, [(5,)] * 3),
        (np.array(2, np.int64), 1, [(2, 5), (1, 5)]),
        (np.array([1, 2], np.int64), 1, [(1, 5), (2, 5)]),
    ],
)
def test_split_to_sequence(split: np.ndarray | None, keepdims: int, shapes: list[tuple[int, ...]]) -> None:
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    ins = ["x"] + ([] if split is None else ["split"])
    types = [("x", FLOATS)] + (
        [] if split is None else [("split", helper.make_tensor_type_proto(TensorProto.INT64, None))]
    )
    proto = model(
        [helper.make_node("SplitToSequence", ins, ["s"], axis=0, keepdims=keepdims)], types, [("s", SEQ)]
    )
    feeds = {"x": x} if split is None else {"x": x, "split": split}
    ours, ref = run_both(proto, feeds)
    assert_same(ours, ref)
    assert [p.shape for p in ours[0]] == shapes
    np.testing.assert_array_equal(np.concatenate([p.reshape(-1, 5) for p in ours[0]]), x)


@pytest.mark.parametrize(
    "new_axis, axis, shape", [(0, 0, (6, 3)), (0, -1, (2, 9)), (1, 0, (3, 2, 3)), (1, 2, (2, 3, 3))]
)
def test_concat_from_sequence(new_axis: int, axis: int, shape: tuple[int, ...]) -> None:
    parts = [np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * i for i in range(3)]
    proto = model(
        [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)],
        [("s", SEQ)],
        [("y", FLOATS)],
    )
    ours, ref = run_both(proto, {"s": parts})
    assert_same(ours, ref)
    assert ours[0].shape == shape


def test_sequence_map_runs_its_body_per_element_with_tensors_given_whole() -> None:
    body = helper.make_graph(
        [helper.make_node("Add", ["e", "w"], ["o"]), helper.make_node("Shape", ["e"], ["shape"])],
        "body",
        [helper.make_value_info("e", FLOATS), helper.make_value_info("w", FLOATS)],
        [
            helper.make_value_info("o", FLOATS),
            helper.make_value_info("shape", helper.make_tensor_type_proto(TensorProto.INT64, None)),
        ],
    )
    int_seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, None))
    proto = model(
        [helper.make_node("SequenceMap", ["s", "w"], ["out", "shapes"], body=body)],
        [("s", SEQ), ("w", FLOATS)],
        [("out", SEQ), ("shapes", int_seq)],
    )
    seq = [np.ones((2, 3), np.float32), np.zeros((4, 3), np.float32)]
    w = np.arange(3, dtype=np.float32)
    ours, ref = run_both(proto, {"s": seq, "w": w})
    assert_same(ours, ref)
    assert [s.tolist() for s in ours[1]] == [[2, 3], [4, 3]] and ours[1][0].dtype == np.int64


def test_sequence_outputs_keep_their_declared_element_dtype() -> None:
    i32 = helper.make_tensor_type_proto(TensorProto.INT32, None)
    proto = model(
        [helper.make_node("SequenceConstruct", ["a", "b"], ["s"])],
        [("a", i32), ("b", i32)],
        [("s", helper.make_sequence_type_proto(i32))],
    )
    out = burn.onnx.load(proto, backend="ndarray").run(
        {"a": np.array([1, 2], np.int32), "b": np.array([3], np.int32)}
    )
    assert [t.dtype.value for t in out["s"]] == ["int32", "int32"]
    assert host(out["s"])[1].tolist() == [3]


def test_optionals_empty_and_full() -> None:
    opt = helper.make_optional_type_proto(FLOATS)
    b = helper.make_tensor_type_proto(TensorProto.BOOL, [])
    nodes = [
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
        helper.make_node("Identity", ["o"], ["same"]),
    ]
    proto = model(nodes, [("o", opt)], [("has", b), ("same", opt)])
    loaded = burn.onnx.load(proto, backend="ndarray")
    out = loaded.run({"o": None})
    assert bool(out["has"].to_numpy()) is False and out["same"] is None
    out = loaded.run({"o": np.ones(2, np.float32)})
    assert bool(out["has"].to_numpy()) is True and host(out["same"]).tolist() == [1.0, 1.0]
    # Optional builds one; OptionalGetElement of an empty one is refused, naming the node
    nodes = [
        helper.make_node("Optional", [], ["e"], type=FLOATS),
        helper.make_node("OptionalGetElement", ["e"], ["y"], name="get_it"),
    ]
    proto = model(nodes, [], [("y", FLOATS)])
    with pytest.raises(
        OnnxError,
        match=r"node 'get_it' \(OptionalGetElement, opset 18\) on inputs \(None\): the optional is empty",
    ):
        burn.onnx.load(proto, backend="ndarray").run({})


def test_loop_carries_a_sequence() -> None:
    i64 = helper.make_tensor_type_proto(TensorProto.INT64, [])
    cond = helper.make_tensor_type_proto(TensorProto.BOOL, [])
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["c"], ["c_out"]),
            helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
            helper.make_node("SequenceInsert", ["s", "f"], ["s_out"]),
        ],
        "body",
        [
            helper.make_value_info("i", i64),
            helper.make_value_info("c", cond),
            helper.make_value_info("s", SEQ),
        ],
        [helper.make_value_info("c_out", cond), helper.make_value_info("s_out", SEQ)],
    )
    nodes = [
        helper.make_node("SequenceEmpty", [], ["empty"]),
        helper.make_node("Loop", ["n", "", "empty"], ["s"], body=body),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1),
    ]
    proto = model(nodes, [("n", i64)], [("y", FLOATS)])
    out = burn.onnx.load(proto, backend="ndarray").run({"n": np.array(4, np.int64)})
    assert host(out["y"]).tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "node, feeds, message",
    [
        (
            helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at"),
            {"p": np.array(3, np.int64)},
            r"node 'at' \(SequenceAt, opset 18\) on inputs .*: position 3 is out of range for a "
            r"sequence of 3 \(allowed: -3 to 2\)",
        ),
        (
            helper.make_node("SequenceInsert", ["s", "t", "p"], ["y"], name="ins"),
            {"p": np.array(-4, np.int64)},
            r"node 'ins' \(SequenceInsert, opset 18\) on inputs .*: position -4 is out of range for a "
            r"sequence of 3 \(allowed: -3 to 3\)",
        ),
        (
            helper.make_node("Relu", ["s"], ["y"], name="relu"),
            {},
            r"node 'relu' \(Relu, opset 18\) on inputs \(sequence\(.*\)\): input 0 is a sequence; Relu takes",
        ),
    ],
)
def test_misuse_is_refused_naming_the_node(node: Any, feeds: dict[str, Any], message: str) -> None:
    names = [n for n in node.input if n != "s"]
    types = {"p": helper.make_tensor_type_proto(TensorProto.INT64, []), "t": FLOATS}
    proto = model([node], [("s", SEQ)] + [(n, types[n]) for n in names], [("y", FLOATS)])
    feeds = {"s": XS, "t": np.zeros(2, np.float32), **feeds}
    with pytest.raises(OnnxError, match=message):
        burn.onnx.load(proto, backend="ndarray").run({k: v for k, v in feeds.items() if k in {"s", *names}})


def test_split_sizes_that_do_not_cover_the_axis_are_refused() -> None:
    i64 = helper.make_tensor_type_proto(TensorProto.INT64, None)
    proto = model(
        [helper.make_node("SplitToSequence", ["x", "split"], ["s"], name="sp")],
        [("x", FLOATS), ("split", i64)],
        [("s", SEQ)],
    )
    with pytest.raises(
        OnnxError,
        match=r"node 'sp' \(SplitToSequence, opset 18\) on inputs .*: split sizes \[1, 1\] must .* sum to "
        r"the size 3",
    ):
        burn.onnx.load(proto, backend="ndarray").run(
            {"x": np.zeros((3, 2), np.float32), "split": np.array([1, 1])}
        )


def test_a_sequence_input_must_be_given_a_list() -> None:
    proto = model(
        [helper.make_node("SequenceLength", ["s"], ["n"])],
        [("s", SEQ)],
        [("n", helper.make_tensor_type_proto(TensorProto.INT64, []))],
    )
    loaded = burn.onnx.load(proto, backend="ndarray")
    with pytest.raises(KindError, match=r"input 's' must be a sequence \(s: sequence\(float32\?\)\)"):
        loaded.run({"s": np.zeros(3, np.float32)})
    assert (
        int(loaded.run({"s": [burn.Tensor.zeros((2,), backend=burn.backend("ndarray"))] * 2})["n"].to_numpy())
        == 2
    )
