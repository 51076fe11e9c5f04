"""burn.capture: tracing records every contract op the Tensor API calls, with real results,
params by path, host reads, and a Program that replays on a backend and holds no user object."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
import export_models as M  # noqa: E402

import burn  # noqa: E402
from burn.backend.contract import op_facts  # noqa: E402
from burn.backend.ir import DEVICE, CallIR, Program, TensorIR  # noqa: E402
from burn.capture import Capture, HostReadError, result_kinds, trace  # noqa: E402
from burn.errors import BackendMismatchError  # noqa: E402
from burn.foundations.dtype import DType  # noqa: E402
from burn.tensor import Tensor  # noqa: E402

B = burn.backend("ndarray")
DEV = B.default_device()
RNG = np.random.default_rng(11)


def _x(*shape: int) -> Tensor:
    return Tensor.from_data(RNG.normal(size=shape).astype(np.float32), DEV)


@pytest.mark.parametrize("build, example", [
    (M.resnet, lambda: _x(2, 3, 16, 16)),
    (M.gpt, lambda: Tensor.from_data(RNG.integers(0, 50, (2, 7)), DEV)),
    (M.bilstm, lambda: _x(2, 5, 6)),
])
def test_trace_results_equal_eager_and_replay_bitwise(build, example) -> None:
    model, x = build(DEV), example()
    t = trace(model, x)
    want = model(x).to_data().to_numpy()
    np.testing.assert_array_equal(t.outputs[0].to_data().to_numpy(), want)
    # every param is read, each recorded once (in the order first read)
    assert sorted(p for p, _ in t.program.params) == sorted(p for p, _ in model.named_params())
    assert t.program.host_reads == ()
    prims = {path: v._p for path, v in t.params.items()}
    (out,) = t.program.replay(B, [x._p], prims)
    np.testing.assert_array_equal(B.float_into_data(out).to_numpy(), want)


def test_recorded_values_have_the_kinds_and_shapes_the_backend_gives() -> None:
    model = M.gpt(DEV)
    ids = Tensor.from_data(RNG.integers(0, 50, (2, 5)), DEV)
    kinds = {}
    t = trace(model, ids)

    def check(call: CallIR, result: object) -> None:
        results = result if isinstance(result, tuple) else (result,)
        for ir, kind, r in zip(call.outputs, result_kinds(call.op), results, strict=False):
            kinds[call.op] = kind
            if kind == "bool":
                assert ir.dtype is DType.BOOL
            else:
                assert getattr(B, f"{kind}_get_dtype")(r) is ir.dtype, call
            assert tuple(getattr(B, f"{kind}_shape")(r)) == ir.shape, call

    t.program.replay(B, [ids._p], {p: v._p for p, v in t.params.items()}, on_call=check)
    assert kinds["bool_from_data"] == "bool" and kinds["int_arange"] == "int"
    assert kinds["embedding"] == "float"


def test_program_holds_constants_only() -> None:
    model = M.bilstm(DEV)
    t = trace(model, _x(2, 3, 6))
    data = pickle.dumps(t.program)  # values, constants, dtypes, slices, arrays: nothing of the caller's
    assert b"burn_ndarray" not in data and b"export_models" not in data
    again = pickle.loads(data)
    assert again.ops() == t.program.ops()
    full = next(c for c in t.program.calls if c.op == "float_full")
    assert DEVICE in full.args and full.args[0] == (2, 8)
    assert "lstm_sequence" in t.program.ops()  # each direction one op (nn.Lstm)


def test_each_op_is_recorded_once_at_the_level_the_tensor_api_calls() -> None:
    x = _x(4, 6)
    t = trace(lambda v: burn.activation.softmax(v, 1), x)
    assert [c.op for c in t.program.calls] == ["softmax"]  # its composition runs inside the inner backend
    assert str(t.program.calls[0]) == "t1 = softmax(t0, 1)  # float32[4, 6]"


def test_host_reads_are_recorded_or_refused_by_op_name() -> None:
    x = _x(3)
    t = trace(lambda v: v * v.sum().item(), x)
    assert t.program.host_reads == ("float_into_data",)
    np.testing.assert_allclose(t.outputs[0].to_data().to_numpy(), (x * x.sum().item()).to_data().to_numpy())
    with pytest.raises(HostReadError, match=r"int_into_data: .*back to the host.*for a test") as info:
        trace(lambda v: v + float(v.argmax(0).tolist()[0]), x, host_reads="error", why=" for a test")
    assert info.value.op == "int_into_data"


def test_mixed_backends_and_closed_over_tensors_are_errors() -> None:
    x = _x(2, 2)
    w = _x(2, 2)
    with pytest.raises(BackendMismatchError, match="closes over"):
        trace(lambda v: v.matmul(w), x)
    with pytest.raises(ValueError, match="no tensor argument"):
        trace(lambda: 1)


def test_module_arguments_are_prefixed() -> None:
    model = M.bilstm(DEV)
    t = trace(lambda m, v: m(v), model, _x(1, 2, 6))
    assert all(p.startswith("arg0.lstm.") or p.startswith("arg0.head.") for p, _ in t.program.params)


def test_result_kinds_follow_the_facts_declared_at_the_ops() -> None:
    assert result_kinds("float_into_int") == ("int",)
    assert result_kinds("int_into_float") == ("float",)
    assert result_kinds("int_lower_elem") == ("bool",)
    assert result_kinds("float_is_nan") == ("bool",)
    assert result_kinds("float_sort_with_indices") == ("float", "int")
    assert result_kinds("bool_argwhere") == ("int",)
    assert result_kinds("int_arange") == ("int",)
    assert result_kinds("bool_reshape") == ("bool",)
    assert all(result_kinds(op) for op, f in op_facts().items() if f.returns in ("P", "tuple"))


def test_capture_wraps_every_computing_op() -> None:
    cap = Capture(B)
    for op, f in op_facts().items():
        if f.returns in ("P", "tuple"):
            assert getattr(cap, op).__name__ == op
    assert "buffer_reuse" not in cap.capabilities.features


def test_program_str_and_replay_checks() -> None:
    x, y = TensorIR(0, (2,), DType.F32), TensorIR(1, (2,), DType.F32)
    w = TensorIR(2, (2,), DType.F32)
    prog = Program((x,), (("w", w),), (CallIR("float_add", (x, w), (), (y,)),), (y,))
    assert "param w = t2: float32[2]" in str(prog)
    with pytest.raises(KeyError, match="'w'"):
        prog.replay(B, [_x(2)._p], {})
    with pytest.raises(ValueError, match="1 inputs expected"):
        prog.replay(B, [], {})
