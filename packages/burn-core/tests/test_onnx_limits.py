"""Hostile ONNX files end in an `OnnxError` naming the node or value and the limit broken, fast,
before anything big is built: nested-function bombs, folds that blow up, tensors of types or
sizes burn refuses, FIFOs, graphs that would fail on each call; and a fuzz of mutated small
models: `burn.onnx.load` plus a run either works or raises burn's own errors, never a raw
KeyError / IndexError / ValueError / StopIteration / MemoryError / OverflowError."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import burn  # noqa: E402
import burn.onnx  # noqa: E402
from burn.errors import BurnError  # noqa: E402
from burn.onnx import OnnxError  # noqa: E402
from burn.onnx.graph import parse, read_model  # noqa: E402
from burn.onnx.model import fold  # noqa: E402
from burn.onnx.ops import REGISTRY, OpInfo  # noqa: E402

OPSET = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def make(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any] = (), **kw: Any) -> Any:  # type: ignore[assignment]
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=OPSET, **kw)


def vi(name: str, elem: int = F, dims: Any = None) -> Any:
    return helper.make_tensor_value_info(name, elem, dims)


def ints(name: str, values: list[int]) -> Any:
    return helper.make_tensor(name, I64, [len(values)], values)


def declared(name: str, dims: list[int]) -> Any:
    """A float tensor that declares `dims` and holds no data."""
    tensor = TensorProto(name=name, data_type=F)
    tensor.dims[:] = dims
    return tensor


def const(name: str, value: Any) -> Any:
    array = np.asarray(value)
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(array, name))


# -- crafted models -------------------------------------------------------------------------------
def function_bomb(depth: int = 40, calls: int = 2) -> Any:
    """``f_i`` calls ``f_{i-1}`` `calls` times: the main graph's one node expands to
    ``calls ** (depth - 1)`` Relus."""
    funcs = [
        helper.make_function("local", "f0", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])], OPSET)
    ]
    for i in range(1, depth):
        body, prev = [], "x"
        for c in range(calls):
            out = "y" if c == calls - 1 else f"h{c}"
            body.append(helper.make_node(f"f{i - 1}", [prev], [out], domain="local"))
            prev = out
        funcs.append(helper.make_function("local", f"f{i}", ["x"], ["y"], body, OPSET))
    node = helper.make_node(f"f{depth - 1}", ["x"], ["y"], domain="local", name="top")
    return make([node], [vi("x", F, [2])], [vi("y", F, [2])], functions=funcs)


def expand_fold(rows: int = 1 << 14, cols: int = 1 << 15) -> Any:
    """One float expanded to ``[rows, cols]`` (2 GiB by default) from constants: a fold."""
    nodes = [
        const("c", np.ones(1, np.float32)),
        helper.make_node("Expand", ["c", "shape"], ["big"], name="blow_up"),
        helper.make_node("Add", ["x", "big"], ["y"], name="add"),
    ]
    return make(nodes, [vi("x", F, [1])], [vi("y")], [ints("shape", [rows, cols])])


TIMED = """
import sys, time
import burn, burn.onnx
for path in sys.argv[1:]:
    start = time.perf_counter()
    try:
        burn.onnx.load(path, backend="ndarray")
        outcome = "loaded"
    except Exception as exc:
        outcome = f"{type(exc).__name__}: {exc}"
    print(f"{time.perf_counter() - start:.3f} {outcome}", flush=True)
"""


def test_bombs_end_fast_with_the_limit_named(tmp_path: Path) -> None:
    """The issue's targets, in a subprocess so that a hang fails here instead of blocking CI: a
    function bomb 40 deep, a 2^29-node function bomb within the depth limit, a 2 GiB Expand
    fold, and a FIFO each end in an OnnxError in well under a second."""
    files = {
        "deep.onnx": function_bomb(40).SerializeToString(),
        "wide.onnx": function_bomb(30).SerializeToString(),
        "expand.onnx": expand_fold().SerializeToString(),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    paths = [str(tmp_path / name) for name in files] + [str(fifo)]
    result = subprocess.run(
        [sys.executable, "-c", TIMED, *paths], capture_output=True, text=True, timeout=120, check=False
    )
    lines = result.stdout.splitlines()
    assert len(lines) == len(paths), result.stderr
    expected = [
        "max_function_depth=",
        "max_graph_nodes=",
        "node 'blow_up' (Expand), folded to a constant: 2147483648 bytes",
        "not a regular file (a FIFO)",
    ]
    for path, line, want in zip(paths, lines, expected, strict=True):
        elapsed, outcome = line.split(" ", 1)
        assert outcome.startswith(f"OnnxError: {path}: "), outcome
        assert want in outcome, outcome
        assert float(elapsed) < 5.0, line  # the target is 1 s; generous for a loaded CI machine


def test_function_depth_names_the_chain_and_the_limit() -> None:
    with pytest.raises(OnnxError) as info:
        burn.onnx.load(function_bomb(40), backend="ndarray")
    message = str(info.value)
    assert "local functions called by node 'top' (local.f39 -> local.f38" in message
    assert "33 levels of nested functions, over the limit of 32" in message
    # A raised limit lets the depth through; the expanded node count is refused next.
    with pytest.raises(OnnxError, match=r"2\^?|549755813888 nodes, over the limit of 1048576"):
        burn.onnx.load(function_bomb(40), backend="ndarray", limits=burn.Limits(max_function_depth=64))


def test_function_node_count_is_counted_without_expanding() -> None:
    start = time.perf_counter()
    with pytest.raises(OnnxError, match=r"expanded: 536870912 nodes, over the limit of 1048576"):
        burn.onnx.load(function_bomb(30), backend="ndarray")
    assert time.perf_counter() - start < 5.0
    with pytest.raises(OnnxError, match=r"expanded: 64 nodes, over the limit of 10 "):
        burn.onnx.load(function_bomb(7), backend="ndarray", limits=burn.Limits(max_graph_nodes=10))


def test_recursive_functions_are_refused() -> None:
    f = helper.make_function(
        "local", "f", ["x"], ["y"], [helper.make_node("g", ["x"], ["y"], domain="local")], OPSET
    )
    g = helper.make_function(
        "local", "g", ["x"], ["y"], [helper.make_node("f", ["x"], ["y"], domain="local")], OPSET
    )
    model = make(
        [helper.make_node("f", ["x"], ["y"], domain="local")],
        [vi("x", F, [2])],
        [vi("y", F, [2])],
        functions=[f, g],
    )
    with pytest.raises(
        OnnxError, match=r"local function 'local.f' calls itself \(local.f -> local.g -> local.f\)"
    ):
        burn.onnx.load(model, backend="ndarray")


def test_nested_functions_within_the_limits_are_inlined_and_run() -> None:
    pytest.importorskip("onnx.inliner", reason="onnx < 1.16 does not inline local functions")
    model = burn.onnx.load(function_bomb(3), backend="ndarray")  # f2 -> f1 x2 -> f0 x4
    out = model(np.array([-1.0, 2.0], np.float32))
    np.testing.assert_array_equal(out.to_numpy(), [0.0, 2.0])
    assert [n.op_type for n in model.program.nodes] == ["Relu"] * 4


def test_subgraph_nesting_and_nodes_count() -> None:
    """If bodies count toward max_graph_nodes and nest within max_depth."""

    def branch(depth: int) -> Any:
        if depth == 0:
            nodes = [helper.make_node("Identity", ["x"], ["r"])]
        else:
            nodes = [
                helper.make_node("If", ["cond"], ["r"], then_branch=branch(depth - 1), else_branch=branch(0))
            ]
        return helper.make_graph(nodes, f"b{depth}", [], [vi("r", F, [2])])

    model = make(
        [
            helper.make_node(
                "If", ["cond"], ["y"], name="top_if", then_branch=branch(5), else_branch=branch(0)
            )
        ],
        [vi("x", F, [2]), vi("cond", TensorProto.BOOL, [])],
        [vi("y", F, [2])],
    )
    with pytest.raises(
        OnnxError, match=r"subgraphs nested in node .*: 4 levels of nesting, over the limit of 3"
    ):
        burn.onnx.load(model, backend="ndarray", limits=burn.Limits(max_depth=3))
    with pytest.raises(OnnxError, match=r"expanded: 13 nodes, over the limit of 12"):
        burn.onnx.load(model, backend="ndarray", limits=burn.Limits(max_graph_nodes=12))


@pytest.mark.skipif(sys.platform != "linux", reason="inference runs in a forked child on Linux only")
def test_a_crash_of_onnx_shape_inference_is_an_onnx_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """onnx's C++ asserts on some malformed graphs and aborts the process: inference runs in a
    forked child, so an abort there ends in an OnnxError here."""
    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", lambda model: os.abort())
    with pytest.raises(OnnxError, match=r"ONNX shape inference crashed on this graph \(SIGABRT\)"):
        burn.onnx.load(expand_fold(2, 2), backend="ndarray")
    monkeypatch.undo()
    # A graph that made onnx 1.23's inference abort: negative pads reaching a Slice.
    pads = [ints("pads", [2, 2, -(1 << 62), 1 << 31]), ints("st", [0]), ints("en", [1])]
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["p"]),
        helper.make_node("Slice", ["p", "st", "en"], ["y"]),
    ]
    model = make(nodes, [vi("x", F, [2, 3])], [vi("y")], pads)
    try:
        burn.onnx.load(model, backend="ndarray")(np.ones((2, 3), np.float32))
    except OnnxError:
        pass  # refused at load (inference crashed) or at the run (negative pads)


# -- folds ----------------------------------------------------------------------------------------
def test_expand_fold_is_refused_before_it_is_computed() -> None:
    start = time.perf_counter()
    with pytest.raises(OnnxError) as info:
        burn.onnx.load(expand_fold(), backend="ndarray")
    assert time.perf_counter() - start < 5.0
    assert str(info.value) == (
        "<ModelProto>: node 'blow_up' (Expand), folded to a constant: 2147483648 bytes of folded "
        "constant, over the limit of 1073741824 (raise it with limits=burn.Limits(max_folded_bytes=...))"
    )
    # Within a raised limit (and small), the same graph folds and runs.
    model = burn.onnx.load(expand_fold(4, 8), backend="ndarray")
    assert model(np.ones(1, np.float32)).shape == (4, 8)


@pytest.mark.parametrize(
    "nodes, inits, op",
    [
        (
            [helper.make_node("ConstantOfShape", ["shape"], ["big"], name="n")],
            [ints("shape", [64, 64])],
            "ConstantOfShape",
        ),
        (
            [
                const("c", np.ones((2, 2), np.float32)),
                helper.make_node("Tile", ["c", "reps"], ["big"], name="n"),
            ],
            [ints("reps", [40, 40])],
            "Tile",
        ),
        (
            [
                const("s", np.float32(0)),
                const("l", np.float32(5000)),
                const("d", np.float32(1)),
                helper.make_node("Range", ["s", "l", "d"], ["big"], name="n"),
            ],
            [],
            "Range",
        ),
        (
            [
                const("c", np.ones((40, 40), np.float32)),
                helper.make_node("Concat", ["c", "c", "c"], ["big"], name="n", axis=0),
            ],
            [],
            "Concat",
        ),
        (
            [
                const("a", np.ones((80, 1), np.float32)),
                const("b", np.ones((1, 80), np.float32)),
                helper.make_node("Mul", ["a", "b"], ["big"], name="n"),
            ],
            [],
            "Mul",
        ),
    ],
)
def test_growing_folds_are_refused_naming_the_node(nodes: list[Any], inits: list[Any], op: str) -> None:
    model = make([*nodes, helper.make_node("Identity", ["big"], ["y"])], [], [vi("y")], inits)
    with pytest.raises(
        OnnxError,
        match=rf"node 'n' \({op}\), folded to a constant: \d+ bytes of folded constant, "
        r"over the limit of 4096 \(raise it with limits=burn\.Limits\(max_folded_bytes=\.\.\.\)\)",
    ):
        burn.onnx.load(model, backend="ndarray", limits=burn.Limits(max_folded_bytes=4096))
    assert burn.onnx.load(model, backend="ndarray").run({})["y"].shape[0] > 1  # the defaults fold it


def test_each_fold_is_checked_after_it_is_computed() -> None:
    """An op with no size rule and no inferred shape is still held to the limit by its result."""
    model = make(
        [const("c", np.ones((40, 40), np.float32)), helper.make_node("Neg", ["c"], ["y"], name="neg")],
        [],
        [vi("y")],
    )
    graph = parse(*read_model(model))
    graph.shapes.clear()
    with pytest.raises(OnnxError, match=r"src: node 'neg' \(Neg\), folded to a constant: 6400 bytes"):
        fold(graph, set(), "src", burn.Limits(max_folded_bytes=6399))
    nodes, constants, folded = fold(graph, set(), "src", burn.Limits(max_folded_bytes=6400))
    assert folded == 2 and constants["y"].shape == (40, 40)


def test_gather_out_of_range_while_folding_names_the_node() -> None:
    nodes = [
        const("c", np.arange(3, dtype=np.int64)),
        helper.make_node("Gather", ["c", "i"], ["y"], name="pick"),
    ]
    model = make(nodes, [], [vi("y", I64)], [ints("i", [7])])
    with pytest.raises(
        OnnxError,
        match=r"node 'pick' \(Gather, opset \d+\): cannot evaluate it on its constant inputs: IndexError",
    ) as info:
        burn.onnx.load(model, backend="ndarray")
    assert isinstance(info.value.__cause__, IndexError)


# -- tensors ----------------------------------------------------------------------------------------
def test_string_initializer_is_named_with_its_type() -> None:
    model = make(
        [helper.make_node("Identity", ["names"], ["y"])],
        [],
        [vi("y", TensorProto.STRING)],
        [helper.make_tensor("names", TensorProto.STRING, [2], [b"a", b"b"])],
    )
    with pytest.raises(
        OnnxError, match=r"initializer 'names' has element type STRING, which burn.onnx cannot load"
    ):
        burn.onnx.load(model, backend="ndarray")


def test_initializers_are_checked_from_their_declared_dims() -> None:
    huge = declared("w", [1 << 20, 1 << 20])  # declares 2^40 elements, holds none
    model = make([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y")], [huge])
    with pytest.raises(
        OnnxError, match=r"initializer 'w' of dims \[1048576, 1048576\]: 1099511627776 elements in one tensor"
    ):
        burn.onnx.load(model, backend="ndarray")
    negative = helper.make_tensor("w", F, [2], [1.0, 2.0])
    negative.dims[:] = [-2]
    model = make([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y")], [negative])
    with pytest.raises(OnnxError, match=r"initializer 'w' declares negative dims \[-2\]"):
        burn.onnx.load(model, backend="ndarray")
    two = [helper.make_tensor(n, F, [3], [1.0, 2.0, 3.0]) for n in ("a", "b")]
    model = make([helper.make_node("Add", ["a", "b"], ["y"])], [], [vi("y")], two)
    with pytest.raises(
        OnnxError, match=r"the model's tensors together: 6 elements in all, over the limit of 5"
    ):
        burn.onnx.load(model, backend="ndarray", limits=burn.Limits(max_total_elements=5))
    big_constant = helper.make_node(
        "Constant", [], ["y"], name="k", value=helper.make_tensor("v", F, [4, 4], [0.0] * 16)
    )
    with pytest.raises(
        OnnxError, match=r"the tensor attribute of node 'k' \(Constant\) .*: 16 elements in one tensor"
    ):
        burn.onnx.load(
            make([big_constant], [], [vi("y")]), backend="ndarray", limits=burn.Limits(max_tensor_elements=15)
        )


# -- the graph ------------------------------------------------------------------------------------
RELU = [vi("x", F, [1, 1, 4, 4])], [vi("y")]


def conv(**attrs: Any) -> Any:
    w = helper.make_tensor("w", F, [1, 1, 3, 3], [0.1] * 9)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="the_conv", **attrs)
    return make([node], *RELU, [w])


@pytest.mark.parametrize(
    "model, message",
    [
        (
            make([helper.make_node("Relu", ["nope"], ["y"], name="r")], *RELU),
            "node 'r' (Relu) reads 'nope', which is not a graph input, an initializer or the output of an "
            "earlier node",
        ),
        (
            make(
                [
                    helper.make_node("Relu", ["h"], ["y"], name="r2"),
                    helper.make_node("Relu", ["x"], ["h"], name="r1"),
                ],
                *RELU,
            ),
            "node 'r2' (Relu) reads 'h'",
        ),
        (
            make([helper.make_node("Reshape", ["x", ""], ["y"], name="r")], *RELU),
            "node 'r' (Reshape) takes 2 required inputs at opset 17, got ['x', '']",
        ),
        (
            make([helper.make_node("Relu", ["x"], ["x"], name="r")], *RELU),
            "node 'r' (Relu) writes 'x', which is already a graph input",
        ),
        (make([helper.make_node("Relu", ["x"], ["h"], name="r")], *RELU), "graph output 'y' is not produced"),
        (
            conv(pads=[-1, 0, 0, 0]),
            "node 'the_conv' (Conv): attribute pads=[-1, 0, 0, 0] must not be negative",
        ),
        (conv(strides=[0, 1]), "node 'the_conv' (Conv): attribute strides=[0, 1] must be positive"),
        (conv(dilations=[1, -2]), "attribute dilations=[1, -2] must be positive"),
        (conv(pads=[1, 1, 1]), "pads=[1, 1, 1] must hold a begin and an end per axis"),
        (
            make([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [2, -3])], [vi("y")]),
            "input 'x' declares a negative dim",
        ),
    ],
)
def test_malformed_graphs_are_refused_at_load(model: Any, message: str) -> None:
    with pytest.raises(OnnxError) as info:
        burn.onnx.load(model, backend="ndarray")
    assert message in str(info.value)


def test_a_valid_conv_still_runs() -> None:
    out = burn.onnx.load(conv(pads=[1, 1, 1, 1], strides=[2, 2]), backend="ndarray")(
        np.ones((1, 1, 4, 4), np.float32)
    )
    assert out.shape == (1, 1, 2, 2)


def test_run_time_sizes_use_the_models_limits() -> None:
    """A size known only at call time is checked against the limits the model was loaded with."""
    model = make(
        [helper.make_node("Expand", ["x", "shape"], ["y"], name="grow")],
        [vi("x", F, [1]), vi("shape", I64, [2])],
        [vi("y")],
    )
    small = burn.onnx.load(model, backend="ndarray", limits=burn.Limits(max_tensor_elements=100))
    assert small.program.limits.max_tensor_elements == 100
    x = np.ones(1, np.float32)
    assert small(x, np.array([10, 10])).shape == (10, 10)
    with pytest.raises(
        OnnxError, match=r"node 'grow' \(Expand\)'s output: 110 elements in one tensor, over the limit of 100"
    ):
        small(x, np.array([11, 10]))
    roomy = burn.onnx.load(model, backend="ndarray")
    with pytest.raises(
        OnnxError, match=r"node 'grow' \(Expand\)'s output: 1099511627776 elements in one tensor"
    ):
        roomy(x, np.array([1 << 20, 1 << 20]))
    with pytest.raises(
        OnnxError,
        match=r"node 'grow' \(Expand, opset \d+\) on inputs .*: negative dims in the target shape \[-1, 2\]",
    ):
        roomy(x, np.array([-1, 2]))


def test_other_failures_of_a_node_become_onnx_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    model = make([helper.make_node("Relu", ["x"], ["y"], name="the_relu")], [vi("x", F, [2, 3])], [vi("y")])

    def broken(ctx: Any, node: Any, inputs: Any) -> Any:
        table: dict[str, Any] = {}
        return table["missing"]  # a bug of an op: a raw KeyError

    monkeypatch.setitem(REGISTRY, "Relu", OpInfo("Relu", "math", "", broken, None))
    loaded = burn.onnx.load(model.SerializeToString(), backend="ndarray")  # (ops are looked up at load)
    with pytest.raises(OnnxError) as info:
        loaded(np.zeros((2, 3), np.float32))
    assert str(info.value) == (
        "<bytes>: node 'the_relu' (Relu, opset 17) on inputs (float32[2, 3]): KeyError: 'missing'"
    )
    assert (info.value.node, info.value.op_type, info.value.opset) == ("the_relu", "Relu", 17)
    assert isinstance(info.value.__cause__, KeyError)


# -- files ----------------------------------------------------------------------------------------
def test_files_that_are_not_regular_are_refused(tmp_path: Path) -> None:
    with pytest.raises(OnnxError, match=r"not a regular file \(a directory\)"):
        burn.onnx.load(tmp_path)
    path = tmp_path / "m.onnx"
    path.write_bytes(expand_fold(2, 2).SerializeToString())
    size = path.stat().st_size
    with pytest.raises(OnnxError, match=rf"m\.onnx: the file: {size} bytes, over the limit of {size - 1} "):
        burn.onnx.load(path, backend="ndarray", limits=burn.Limits(max_file_bytes=size - 1))
    with pytest.raises(OnnxError, match=r"<bytes>: the model's bytes: \d+ bytes, over the limit of 10 "):
        burn.onnx.load(path.read_bytes(), backend="ndarray", limits=burn.Limits(max_file_bytes=10))
    assert burn.onnx.load(path, backend="ndarray", limits=burn.Limits(max_file_bytes=size)) is not None
    with pytest.raises(TypeError, match="limits must be a burn.Limits"):
        burn.onnx.load(path, backend="ndarray", limits=123)  # type: ignore[arg-type]


def test_external_data_must_be_a_regular_file_next_to_the_model(tmp_path: Path) -> None:
    w = declared("w", [4])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "../outside.bin"), ("length", "16")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    model = make([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y")], [w])
    path = tmp_path / "ext.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(
        OnnxError,
        match=r"ext\.onnx: external data of initializer 'w' \('\.\./outside\.bin'\): the location must",
    ):
        burn.onnx.load(path, backend="ndarray")
    model.graph.initializer[0].external_data[0].value = "weights.bin"
    path.write_bytes(model.SerializeToString())
    os.mkfifo(tmp_path / "weights.bin")
    with pytest.raises(OnnxError, match=r"external data .*: not a regular file \(a FIFO\)"):
        burn.onnx.load(path, backend="ndarray")
    os.remove(tmp_path / "weights.bin")
    (tmp_path / "weights.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    np.testing.assert_array_equal(
        burn.onnx.load(path, backend="ndarray").run({})["y"].to_numpy(), [0, 1, 2, 3]
    )


def test_inspect_takes_limits() -> None:
    with pytest.raises(OnnxError, match="max_function_depth"):
        burn.onnx.inspect(function_bomb(40))
    assert burn.onnx.inspect(function_bomb(3), limits=burn.Limits(max_graph_nodes=4)).ops == {"Relu": 4}


# -- fuzz -----------------------------------------------------------------------------------------
def _base_models() -> list[tuple[Any, dict[str, np.ndarray]]]:
    """Small valid models that reach folding, shape computations and spatial ops."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 2, 6, 6)).astype(np.float32)
    cnn = make(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1]),
            helper.make_node("Relu", ["c"], ["r"], name="relu"),
            helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Shape", ["p"], ["s"], name="shape"),
            helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
            helper.make_node("Unsqueeze", ["n", "zero"], ["n1"], name="unsq"),
            helper.make_node("Concat", ["n1", "minus1"], ["target"], name="concat", axis=0),
            helper.make_node("Reshape", ["p", "target"], ["y"], name="reshape"),
        ],
        [vi("x", F, [1, 2, 6, 6])],
        [vi("y")],
        [
            helper.make_tensor("w", F, [3, 2, 3, 3], rng.normal(size=54).astype(np.float32)),
            helper.make_tensor("b", F, [3], [0.1, 0.2, 0.3]),
            ints("zero", [0]),
            ints("minus1", [-1]),
        ],
    )
    shapes = make(
        [
            const("c", np.arange(6, dtype=np.float32).reshape(2, 3)),
            helper.make_node("Expand", ["c", "eshape"], ["e"], name="expand"),
            helper.make_node("Tile", ["e", "reps"], ["t"], name="tile"),
            helper.make_node("Range", ["start", "limit", "delta"], ["rg"], name="range"),
            helper.make_node(
                "ConstantOfShape", ["cshape"], ["k"], name="cos", value=helper.make_tensor("v", F, [1], [2.0])
            ),
            helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad"),
            helper.make_node("Slice", ["xp", "st", "en", "ax"], ["xs"], name="slice"),
            helper.make_node("Add", ["xs", "t"], ["a"], name="add"),
            helper.make_node("Mul", ["a", "k"], ["m"], name="mul"),
            helper.make_node("Transpose", ["m"], ["tr"], name="transpose", perm=[1, 0]),
            helper.make_node("Cast", ["rg"], ["rgf"], name="cast", to=F),
            helper.make_node("ReduceSum", ["tr", "axes"], ["rs"], name="reduce", keepdims=0),
            helper.make_node("Add", ["rs", "rgf"], ["y"], name="add2"),
        ],
        [vi("x", F, [2, 3])],
        [vi("y")],
        [
            ints("eshape", [2, 3]),
            ints("reps", [1, 1]),
            ints("cshape", [2, 3]),
            ints("pads", [1, 1, 1, 1]),
            ints("st", [1, 1]),
            ints("en", [3, 4]),
            ints("ax", [0, 1]),
            ints("axes", [1]),
            helper.make_tensor("start", I64, [], [0]),
            helper.make_tensor("limit", I64, [], [3]),
            helper.make_tensor("delta", I64, [], [1]),
        ],
    )
    return [(cnn, {"x": x}), (shapes, {"x": rng.normal(size=(2, 3)).astype(np.float32)})]


BASES = _base_models()
TIGHT = burn.Limits(max_tensor_elements=1 << 20, max_folded_bytes=1 << 22, max_graph_nodes=200)
INTS = st.sampled_from([-(1 << 62), -3, -1, 0, 1, 2, 3, 7, 1 << 31, 1 << 62])
ATTRS = ["pads", "strides", "dilations", "kernel_shape", "axis", "perm", "group", "to", "keepdims", "start"]
OPS = [
    "Relu",
    "Add",
    "Expand",
    "Tile",
    "Concat",
    "Reshape",
    "Gather",
    "Transpose",
    "Pad",
    "Slice",
    "Conv",
    "MaxPool",
    "Range",
    "ConstantOfShape",
    "Squeeze",
    "Unsqueeze",
    "MatMul",
    "Cast",
    "Split",
    "Where",
]


@st.composite
def mutations(draw: st.DrawFn) -> tuple[int, list[tuple[str, Any]]]:
    base = draw(st.integers(0, len(BASES) - 1))
    kinds = [
        "attr",
        "drop_input",
        "rename_input",
        "rename_output",
        "init_dims",
        "init_values",
        "input_dims",
        "op",
        "swap",
    ]
    steps: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        index = draw(st.integers(0, 50))
        if kind == "attr":
            value = draw(st.one_of(INTS, st.lists(INTS, min_size=0, max_size=5)))
            steps.append((kind, (index, draw(st.sampled_from(ATTRS)), value)))
        elif kind in ("init_dims", "init_values", "input_dims"):
            steps.append((kind, (index, draw(st.lists(INTS, min_size=0, max_size=4)))))
        elif kind == "op":
            steps.append((kind, (index, draw(st.sampled_from(OPS)))))
        else:
            steps.append((kind, (index, draw(st.integers(0, 50)))))
    return base, steps


def _mutate(model: Any, steps: list[tuple[str, Any]]) -> Any:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    g = model.graph
    nodes, inits = g.node, g.initializer
    names = [o for n in nodes for o in n.output] + [i.name for i in g.input] + [t.name for t in inits]
    for kind, args in steps:
        node = nodes[args[0] % len(nodes)]
        if kind == "attr":
            _, name, value = args
            for a in list(node.attribute):
                if a.name == name:
                    node.attribute.remove(a)
            kind = onnx.AttributeProto.INTS if isinstance(value, list) else onnx.AttributeProto.INT
            node.attribute.append(helper.make_attribute(name, value, attr_type=kind))
        elif kind == "drop_input" and node.input:
            del node.input[args[1] % len(node.input)]
        elif kind == "rename_input" and node.input:
            node.input[args[1] % len(node.input)] = (names + ["ghost"])[args[1] % (len(names) + 1)]
        elif kind == "rename_output" and node.output:
            node.output[0] = (names + ["ghost"])[args[1] % (len(names) + 1)]
        elif kind == "init_dims" and inits:
            inits[args[0] % len(inits)].dims[:] = args[1]
        elif kind == "init_values" and inits:
            t = inits[args[0] % len(inits)]
            if t.data_type == I64 and args[1]:
                t.ClearField("raw_data")
                t.int64_data[:] = args[1]
                t.dims[:] = [len(args[1])] if t.dims else []
        elif kind == "input_dims":
            dims = g.input[0].type.tensor_type.shape.dim
            for d, v in zip(dims, args[1], strict=False):
                d.dim_value = v
        elif kind == "op":
            node.op_type = args[1]
        elif kind == "swap":
            other = nodes[args[1] % len(nodes)]
            a, b = onnx.NodeProto(), onnx.NodeProto()
            a.CopyFrom(node)
            b.CopyFrom(other)
            node.CopyFrom(b)
            other.CopyFrom(a)
    return model


def _feeds(model: Any, base: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Inputs of the declared shapes where they are small, so a model whose input dims were
    mutated still runs its graph; the base inputs otherwise."""
    feeds = {}
    for info in model.graph.input:
        dims = [d.dim_value if d.HasField("dim_value") else 2 for d in info.type.tensor_type.shape.dim]
        small = all(0 <= d <= 64 for d in dims) and int(np.prod(dims)) <= 4096
        feeds[info.name] = np.ones(dims, np.float32) if small else base[info.name]
    return feeds


# What must never escape: Python's own errors from deep inside an op or a fold.
RAW: tuple[type[BaseException], ...] = (KeyError, IndexError, ValueError, TypeError, StopIteration)
RAW += (MemoryError, OverflowError, AttributeError, ZeroDivisionError, AssertionError, RecursionError)


@settings(
    max_examples=200,
    deadline=5000,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutations())
def test_mutated_models_load_and_run_or_raise_burns_errors(case: tuple[int, list[tuple[str, Any]]]) -> None:
    base, steps = case
    model, feeds = BASES[base]
    mutated = _mutate(model, steps)
    feeds = _feeds(mutated, feeds)
    data = mutated.SerializeToString()
    try:
        loaded = burn.onnx.load(data, backend="ndarray", limits=TIGHT)
    except OnnxError:
        return  # UnsupportedOpError included
    except RAW as exc:  # noqa: B014 - the point: name what escaped
        raise AssertionError(f"load escaped with {type(exc).__name__}: {exc} ({steps})") from exc
    try:
        loaded.run(feeds)
    except BurnError as exc:
        assert isinstance(exc, OnnxError), exc  # node failures and input checks alike
    except RAW as exc:
        raise AssertionError(f"run escaped with {type(exc).__name__}: {exc} ({steps})") from exc
