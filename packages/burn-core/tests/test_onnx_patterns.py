"""`burn.onnx.patterns`: the written-out GELU (erf and tanh forms) and scaled dot-product
attention become one fused node at load, give what the file's own nodes give (onnxruntime and
``fuse=False``), gradients included, and chains that are not exactly the pattern stay as written."""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (the reference)")
pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import burn  # noqa: E402
import burn.onnx  # noqa: E402
from burn.onnx.patterns import ATTENTION, CONV_ACTIVATION  # noqa: E402

RNG = np.random.default_rng(7)
F = TensorProto.FLOAT


def _model(nodes: list, inputs: dict[str, tuple[int, ...]], consts: dict[str, np.ndarray]) -> bytes:
    """`consts` as ``Constant`` nodes, as exporters write them (a float initializer is a param,
    which training may change: no pattern reads one as its constant)."""
    constants = [
        helper.make_node("Constant", [], [k], value=numpy_helper.from_array(np.asarray(v, np.float32)))
        for k, v in consts.items()
    ]
    graph = helper.make_graph(
        constants + nodes,
        "g",
        [helper.make_tensor_value_info(k, F, s) for k, s in inputs.items()],
        [helper.make_empty_tensor_value_info("y")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def _erf_gelu(halve_first: bool = False, root: float = math.sqrt(2)) -> bytes:
    n = helper.make_node
    nodes = [n("Div", ["x", "root"], ["d"]), n("Erf", ["d"], ["e"]), n("Add", ["e", "one"], ["a"])]
    if halve_first:
        nodes += [n("Mul", ["x", "half"], ["h"]), n("Mul", ["h", "a"], ["y"])]
    else:
        nodes += [n("Mul", ["x", "a"], ["m"]), n("Mul", ["m", "half"], ["y"])]
    return _model(nodes, {"x": (3, 40)}, {"root": root, "one": 1.0, "half": 0.5})


def _tanh_gelu() -> bytes:
    n = helper.make_node
    nodes = [
        n("Mul", ["x", "half"], ["h"]),
        n("Pow", ["x", "three"], ["p"]),
        n("Mul", ["p", "c"], ["m"]),
        n("Add", ["x", "m"], ["a"]),
        n("Mul", ["a", "k"], ["s"]),
        n("Tanh", ["s"], ["t"]),
        n("Add", ["t", "one"], ["u"]),
        n("Mul", ["h", "u"], ["y"]),
    ]
    consts = {"half": 0.5, "three": 3.0, "c": 0.044715, "k": math.sqrt(2 / math.pi), "one": 1.0}
    return _model(nodes, {"x": (3, 40)}, consts)


def _attention(mask: np.ndarray | None = None, casts: int = 1, q_batch: int = 2) -> bytes:
    """Q [q_batch, 2, 5, 4] over K^T [2, 2, 4, 6] and V [2, 2, 6, 3] (the transformers export)."""
    n = helper.make_node
    nodes = [n("MatMul", ["q", "kt"], ["s"]), n("Mul", ["s", "scale"], ["z"])]
    consts: dict[str, np.ndarray] = {"scale": np.float32(0.5)}
    scores = "z"
    if mask is not None:
        nodes.append(n("Add", ["z", "mask"], ["za"]))
        consts["mask"] = mask
        scores = "za"
    nodes.append(n("Softmax", [scores], ["w0"], axis=-1))
    for i in range(casts):
        nodes.append(n("Cast", [f"w{i}"], [f"w{i + 1}"], to=F))
    nodes.append(n("MatMul", [f"w{casts}", "v"], ["y"]))
    return _model(nodes, {"q": (q_batch, 2, 5, 4), "kt": (2, 2, 4, 6), "v": (2, 2, 6, 3)}, consts)


def _causal(lowest: float) -> np.ndarray:
    return np.triu(np.full((5, 6), lowest, np.float32), 2).reshape(1, 1, 5, 6)


def _run(data: bytes, feeds: dict[str, np.ndarray], backend: str = "ndarray", fuse: bool = True):
    model = burn.onnx.load(data, backend=backend, fuse=fuse)
    tensors = {k: burn.Tensor.from_data(v, backend=model.backend) for k, v in feeds.items()}
    return model, tensors, model.run(tensors)["y"]


def _check(data: bytes, feeds: dict[str, np.ndarray], fused: str | None) -> None:
    model, _, y = _run(data, feeds)
    ops = [node.op_type for node in model.program.nodes]
    if fused is None:
        assert "Gelu" not in ops and ATTENTION not in ops, ops
    else:
        assert ops == [fused], ops
    expected = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-6)
    written = _run(data, feeds, fuse=False)[2].to_numpy()
    np.testing.assert_allclose(y.to_numpy(), written, rtol=1e-5, atol=1e-6)


X = {"x": (RNG.normal(size=(3, 40)) * 3).astype(np.float32)}


def _qkv(q_batch: int = 2) -> dict[str, np.ndarray]:
    return {
        "q": RNG.normal(size=(q_batch, 2, 5, 4)).astype(np.float32),
        "kt": RNG.normal(size=(2, 2, 4, 6)).astype(np.float32),
        "v": RNG.normal(size=(2, 2, 6, 3)).astype(np.float32),
    }


@pytest.mark.parametrize("halve_first", [False, True])
def test_erf_gelu_is_one_gelu(halve_first: bool) -> None:
    _check(_erf_gelu(halve_first), X, "Gelu")


def test_tanh_gelu_is_one_gelu() -> None:
    _check(_tanh_gelu(), X, "Gelu")


def test_a_gelu_with_another_constant_stays_as_written() -> None:
    _check(_erf_gelu(root=1.5), X, None)


def test_a_gelu_reading_a_param_stays_as_written() -> None:
    model = onnx.load_from_string(_erf_gelu())
    half = model.graph.node.pop(2)  # the Constant "half" becomes a float initializer: a param
    model.graph.initializer.append(numpy_helper.from_array(np.float32(0.5), half.output[0]))
    _check(model.SerializeToString(), X, None)


@pytest.mark.parametrize("casts", [0, 2])
def test_attention_is_one_node(casts: int) -> None:
    _check(_attention(casts=casts), _qkv(), ATTENTION)


@pytest.mark.parametrize("lowest", [-np.inf, np.finfo(np.float32).min])
def test_attention_with_an_additive_causal_mask(lowest: float) -> None:
    _check(_attention(_causal(lowest)), _qkv(), ATTENTION)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_a_mask_that_is_not_a_bool_mask_stays_as_written() -> None:
    soft = _causal(-np.inf)
    soft[..., 0, 0] = -2.0  # a bias, not "do not attend"
    _check(_attention(soft), _qkv(), None)
    whole_row = _causal(-np.inf)
    whole_row[..., 1, :] = -np.inf  # softmax gives NaN there, attention 0: not the same op
    model, _, _ = _run(_attention(whole_row), _qkv())
    assert ATTENTION not in [node.op_type for node in model.program.nodes]


def test_operands_attention_does_not_take_run_the_written_chain() -> None:
    # Q's batch of 1 broadcasts against K's 2 in MatMul; `attention` wants equal leading dims
    _check(_attention(q_batch=1), _qkv(q_batch=1), ATTENTION)


def test_fused_attention_gradients_equal_the_written_ones() -> None:
    data, feeds = _attention(_causal(-np.inf)), _qkv()
    grads = {}
    for fuse in (True, False):
        model, tensors, _ = _run(data, feeds, "autodiff(ndarray)", fuse)
        inputs = {k: t.require_grad() for k, t in tensors.items()}
        y = model.run(inputs)["y"]
        g = (y * y).sum().backward()
        grads[fuse] = {k: t.grad(g).to_numpy() for k, t in inputs.items()}
    for k in feeds:
        np.testing.assert_allclose(grads[True][k], grads[False][k], rtol=1e-5, atol=1e-6, err_msg=k)



def test_tanh_gelu_with_the_cube_as_products_and_the_halving_last() -> None:
    n = helper.make_node
    nodes = [
        n("Mul", ["x", "x"], ["sq"]),
        n("Mul", ["sq", "x"], ["p"]),
        n("Mul", ["c", "p"], ["m"]),
        n("Add", ["m", "x"], ["a"]),
        n("Mul", ["k", "a"], ["s"]),
        n("Tanh", ["s"], ["t"]),
        n("Add", ["one", "t"], ["u"]),
        n("Mul", ["x", "u"], ["xu"]),
        n("Mul", ["xu", "half"], ["y"]),
    ]
    consts = {"half": 0.5, "c": 0.044715, "k": math.sqrt(2 / math.pi), "one": 1.0}
    _check(_model(nodes, {"x": (3, 40)}, consts), X, "Gelu")


def _padded_conv(pads: list[int], value: float = 0.0, auto_pad: str = "VALID", readers: int = 1) -> bytes:
    """``Pad`` (int64 pads, a constant value) -> ``Conv`` (3x3, stride 2, a float weight constant
    read as an initializer would be), and with `readers` 2 a ``Relu`` reading the padded value too."""
    n = helper.make_node
    w = RNG.normal(size=(4, 3 + pads[1] + pads[5], 3, 3)).astype(np.float32)
    nodes = [
        n("Constant", [], ["pads"], value=numpy_helper.from_array(np.array(pads, np.int64))),
        n("Constant", [], ["w"], value=numpy_helper.from_array(w)),
        n("Pad", ["x", "pads", "value"], ["p"], mode="constant"),
        n("Conv", ["p", "w"], ["c"], strides=[2, 2], auto_pad=auto_pad),
    ]
    if readers == 2:
        nodes += [n("ReduceSum", ["p"], ["s"], keepdims=0), n("Add", ["c", "s"], ["y"])]
    else:
        nodes += [n("Identity", ["c"], ["y"])]
    return _model(nodes, {"x": (2, 3, 9, 8)}, {"value": value})


PADDED = {"x": RNG.normal(size=(2, 3, 9, 8)).astype(np.float32)}


@pytest.mark.parametrize("pads", [[0, 0, 0, 0, 0, 0, 1, 1], [0, 0, 2, 1, 0, 0, 0, 3]])
def test_a_zero_pad_before_a_conv_becomes_its_pads(pads: list[int]) -> None:
    data = _padded_conv(pads)
    model, _, y = _run(data, PADDED)
    ops = [node.op_type for node in model.program.nodes]
    assert "Pad" not in ops and "Conv" in ops, ops
    conv = next(node for node in model.program.nodes if node.op_type == "Conv")
    assert conv.attr("pads") == pads[2:4] + pads[6:8]
    expected = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, PADDED)[0]
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-5)
    assert np.array_equal(y.to_numpy(), _run(data, PADDED, fuse=False)[2].to_numpy())


@pytest.mark.parametrize(
    ("pads", "value", "readers"),
    [
        ([0, 0, 0, 0, 0, 0, 1, 1], 1.5, 1),  # not zeros
        ([0, 1, 0, 0, 0, 0, 1, 1], 0.0, 1),  # a channel pad
        ([0, 0, 0, 0, 0, 0, 1, 1], 0.0, 2),  # the padded value is read elsewhere too
    ],
)
def test_other_pads_before_a_conv_stay_as_written(pads: list[int], value: float, readers: int) -> None:
    data = _padded_conv(pads, value, readers=readers)
    model, _, y = _run(data, PADDED)
    assert "Pad" in [node.op_type for node in model.program.nodes]
    expected = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, PADDED)[0]
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-5)


# -- Conv -> activation ----------------------------------------------------------------------------
def _conv_act(act: list, pads: list[int] | None = None, extra_reader: bool = False) -> bytes:
    """``Conv`` (a 3x3 weight and bias constant, stride 2, `pads`) -> the `act` nodes (``act``
    reads ``c`` and writes ``y``); with `extra_reader` the conv output is also added to ``y``."""
    n = helper.make_node
    w = RNG.normal(size=(4, 3, 3, 3)).astype(np.float32)
    b = RNG.normal(size=(4,)).astype(np.float32)
    nodes = [
        n("Constant", [], ["w"], value=numpy_helper.from_array(w)),
        n("Constant", [], ["b"], value=numpy_helper.from_array(b)),
        n("Conv", ["x", "w", "b"], ["c"], strides=[2, 2], pads=pads or [1, 1, 1, 1]),
        *act,
    ]
    if extra_reader:
        nodes[-1].output[0] = "a"
        nodes.append(n("Add", ["a", "c"], ["y"]))
    return _model(nodes, {"x": (2, 3, 9, 8)}, {"zero": 0.0, "six": 6.0})


CONV_X = {"x": (RNG.normal(size=(2, 3, 9, 8)) * 2).astype(np.float32)}
_n = helper.make_node
ACTIVATION_NODES = {
    "relu": [_n("Relu", ["c"], ["y"])],
    "relu6": [_n("Clip", ["c", "zero", "six"], ["y"])],
    "hardswish": [_n("HardSwish", ["c"], ["y"])],
    "hardsigmoid": [_n("HardSigmoid", ["c"], ["y"], alpha=1 / 6)],
    "sigmoid": [_n("Sigmoid", ["c"], ["y"])],
    "silu": [_n("Sigmoid", ["c"], ["s"]), _n("Mul", ["c", "s"], ["y"])],
}


def _check_conv(data: bytes, fused: str | None) -> None:
    model, _, y = _run(data, CONV_X)
    nodes = model.program.nodes
    found = [node.attr("activation") for node in nodes if node.op_type == CONV_ACTIVATION]
    assert found == ([] if fused is None else [fused]), [node.op_type for node in nodes]
    expected = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, CONV_X)[0]
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-5)
    written = _run(data, CONV_X, fuse=False)[2].to_numpy()
    np.testing.assert_allclose(y.to_numpy(), written, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("activation", sorted(ACTIVATION_NODES))
def test_a_conv_read_by_an_activation_alone_is_one_node(activation: str) -> None:
    _check_conv(_conv_act(ACTIVATION_NODES[activation]), activation)


def test_asymmetric_conv_pads_and_an_activation() -> None:
    _check_conv(_conv_act(ACTIVATION_NODES["hardswish"], pads=[0, 1, 1, 0]), "hardswish")


@pytest.mark.parametrize(
    ("act", "extra_reader"),
    [
        ([_n("HardSigmoid", ["c"], ["y"])], False),  # ONNX's default alpha 0.2: not PyTorch's
        ([_n("Clip", ["c", "zero", "zero"], ["y"])], False),  # not [0, 6]
        ([_n("Relu", ["c"], ["y"])], True),  # the conv output is read elsewhere too
        # c * c + sigmoid(c): two readers of c, but not the SiLU's
        ([_n("Sigmoid", ["c"], ["s"]), _n("Mul", ["c", "c"], ["m"]), _n("Add", ["m", "s"], ["y"])], False),
    ],
    ids=["hardsigmoid-0.2", "clip-0-0", "two-readers", "not-silu"],
)
def test_other_conv_activation_pairs_stay_as_written(act: list, extra_reader: bool) -> None:
    _check_conv(_conv_act(act, extra_reader=extra_reader), None)


def test_a_zero_pad_a_conv_and_an_activation_are_one_node() -> None:
    data = _padded_conv([0, 0, 0, 0, 0, 0, 1, 1], readers=1)
    model = onnx.load_from_string(data)
    identity = next(node for node in model.graph.node if node.op_type == "Identity")
    identity.op_type = "Relu"
    data = model.SerializeToString()
    loaded, _, y = _run(data, PADDED)
    ops = [node.op_type for node in loaded.program.nodes]
    assert "Pad" not in ops and "Conv" not in ops and CONV_ACTIVATION in ops, ops
    expected = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, PADDED)[0]
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation", ["silu", "hardswish"])
def test_fused_conv_gradients_equal_the_written_ones(activation: str) -> None:
    data = _conv_act(ACTIVATION_NODES[activation], pads=[1, 0, 2, 1])
    grads = {}
    for fuse in (True, False):
        model, tensors, _ = _run(data, CONV_X, "autodiff(ndarray)", fuse)
        inputs = {k: t.require_grad() for k, t in tensors.items()}
        y = model.run(inputs)["y"]
        g = (y * y).sum().backward()
        grads[fuse] = inputs["x"].grad(g).to_numpy()
    np.testing.assert_allclose(grads[True], grads[False], rtol=1e-5, atol=1e-5)
