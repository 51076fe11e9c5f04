"""The planned runner of `burn.onnx` (`Program.steps`, resolved at load) against the generic
node-by-node path (`_run_node` for every node, as every node ran before the plan): the same
outputs, bit for bit, on the PyTorch-exported models of the import tests, and the same errors."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np
import pytest

onnx_support = pytest.importorskip("onnx_support")  # skips with its reason without torch / onnx / onnxruntime
from _onnx_graphs import one_node_model  # noqa: E402
from onnx import helper  # noqa: E402
from onnx_support import MODELS  # noqa: E402

import burn  # noqa: E402
import burn.onnx  # noqa: E402
from burn.onnx import OnnxShapeError  # noqa: E402
from burn.onnx.model import OnnxModel, plan  # noqa: E402

pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")


def generic(model: OnnxModel) -> OnnxModel:
    """`model` with every step sent through `_run_node` (the path every node took before)."""
    program = model.program
    steps = tuple(dataclasses.replace(s, direct=False) for s in program.steps)
    out = copy.copy(model)
    object.__setattr__(out, "program", dataclasses.replace(program, steps=steps))
    return out


def outputs(model: OnnxModel, inputs: list[np.ndarray], backend: Any) -> list[np.ndarray]:
    got = model(*[burn.Tensor.from_data(x, backend=backend) for x in inputs])
    return [t.to_numpy() for t in (got if isinstance(got, tuple) else (got,))]


@pytest.mark.parametrize("backend_name", ["ndarray", "autodiff(ndarray)"])
@pytest.mark.parametrize("name", list(MODELS))
def test_planned_run_is_bit_identical_to_the_generic_path(name: str, backend_name: str) -> None:
    if backend_name.startswith("autodiff"):
        pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    b = burn.backend(backend_name)
    data, inputs = MODELS[name]()
    model = burn.onnx.load(data, backend=b)
    assert any(s.direct for s in model.program.steps)  # the plan is in use
    want = outputs(generic(model), inputs, b)
    got = outputs(model, inputs, b)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w, equal_nan=True), f"{name}: max |diff| {np.max(np.abs(g - w))}"


def test_plain_tensor_ops_are_direct_and_sequence_ops_are_not() -> None:
    b = burn.backend("ndarray")
    model = burn.onnx.load(MODELS["resnet"]()[0], backend=b)
    kinds = {s.node.op_type: s.direct for s in model.program.steps}
    assert kinds["Conv"] and kinds["Relu"] and kinds["Add"]
    nodes = [
        helper.make_node("Relu", ["x"], ["y"]),
        helper.make_node("SequenceConstruct", ["y", "y"], ["s"]),
        helper.make_node("SequenceAt", ["s", "i"], ["z"]),
    ]
    from burn.onnx.graph import Node

    parsed = [Node(n.op_type, f"n{i}", tuple(n.input), tuple(n.output)) for i, n in enumerate(nodes)]
    steps = plan(parsed, ["z"], set())
    assert [s.direct for s in steps] == [True, False, False]
    # a value a sequence op made, read by a plain op, keeps the generic path and its check
    parsed.append(Node("Relu", "n3", ("s",), ("w",)))
    assert not plan(parsed, ["w"], set())[3].direct
    assert not plan(parsed[:1], ["y"], {"x"})[0].direct  # a sequence graph input


def test_identity_nodes_are_resolved_at_load_unless_their_name_is_needed() -> None:
    from onnx import TensorProto

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in ("y", "kept")]
    nodes = [
        helper.make_node("Identity", ["x"], ["a"], name="id_a"),
        helper.make_node("Identity", ["a"], ["b"], name="id_b"),  # a chain: read as x
        helper.make_node("Relu", ["b"], ["y"], name="relu"),
        helper.make_node("Identity", ["y"], ["kept"], name="id_out"),  # a graph output: runs
    ]
    graph = helper.make_graph(nodes, "g", [x], out)
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    model = burn.onnx.load(data, backend="ndarray")
    steps = model.program.steps
    assert [(s.node.name, s.inputs) for s in steps] == [("relu", ("x",)), ("id_out", ("y",))]
    assert steps[0].dead == ("x",) and steps[1].dead == ()  # y is an output: kept
    v = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    y, kept = model(v)
    assert y.tolist() == kept.tolist() == np.maximum(v, 0).tolist()


def test_an_identity_a_subgraph_reads_by_name_still_runs() -> None:
    from onnx import TensorProto

    then = helper.make_graph(
        [helper.make_node("Neg", ["a"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
    )
    other = helper.make_graph(
        [helper.make_node("Abs", ["a"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
    )
    nodes = [
        helper.make_node("Identity", ["x"], ["a"], name="id_a"),
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    model = burn.onnx.load(data, backend="ndarray")
    assert [s.node.name for s in model.program.steps] == ["id_a", "if"]
    x = np.array([1.0, -2.0], np.float32)
    assert model(x, np.array(True)).tolist() == [-1.0, 2.0]
    assert model(x, np.array(False)).tolist() == [1.0, 2.0]


def test_a_direct_step_names_the_node_on_failure() -> None:
    x = np.zeros((1, 3, 8, 8), np.float32)
    w = np.zeros((4, 5, 3, 3), np.float32)  # 5 input channels for a 3-channel input
    data = one_node_model("Conv", {"x": x}, {"w": w}).SerializeToString()
    model = burn.onnx.load(data, backend="ndarray")
    assert model.program.steps[0].direct
    for m in (model, generic(model)):  # both paths: the same error, naming the node
        with pytest.raises(OnnxShapeError, match=r"node 'Conv_node' \(Conv, opset 17\) on inputs"):
            m(x)


def test_a_direct_op_on_host_values_runs_on_the_host() -> None:
    # Shape of an input of symbolic batch size is left to run time, and so is the Add after it:
    # the Add step is direct and computes on the host arrays, as the generic path does
    from onnx import TensorProto, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Add", ["s", "one"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2])],
        [numpy_helper.from_array(np.ones(2, np.int64), "one")],
    )
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    model = burn.onnx.load(data, backend="ndarray")
    add = [s for s in model.program.steps if s.node.op_type == "Add"]
    assert len(add) == 1 and add[0].direct and add[0].host is not None
    for m in (model, generic(model)):
        assert m(np.zeros((5, 3), np.float32)).tolist() == [6, 4]
