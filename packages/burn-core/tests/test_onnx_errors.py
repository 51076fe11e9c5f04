"""ONNX import errors (each names the file, the node, the op), ``burn onnx inspect``, and the
import guide: its op table is the code's, its ONNX examples run."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
from onnx import TensorProto, helper  # noqa: E402

import burn  # noqa: E402
import burn.onnx  # noqa: E402
from burn.cli import main  # noqa: E402
from burn.errors import KindError, ShapeError  # noqa: E402
from burn.onnx import OnnxError, UnsupportedOpError  # noqa: E402
from burn.onnx.ops import BEGIN, END, read_counts, render_table  # noqa: E402
from burn.onnx.table import write_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "guides" / "import-models.md"
COUNTS = Path(__file__).resolve().parent / "onnx_node_counts.txt"  # the node suite's, per op


def small_model(op: str = "Relu", opset: int = 17, domain: str = "") -> bytes:
    """``y = op(relu(x))`` with ``x: float[2, 3]``."""
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="first_relu"),
        helper.make_node(op, ["h"], ["y"], name="the_node", domain=domain),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=imports).SerializeToString()  # type: ignore[no-any-return]


def test_unsupported_op_names_it_its_node_and_the_opset() -> None:
    with pytest.raises(UnsupportedOpError) as info:
        burn.onnx.load(small_model("DeformConv"), backend="ndarray")
    message = str(info.value)
    assert "'DeformConv' (node 'the_node', opset 17)" in message
    assert "supported ops:" in message and "Conv" in message and "LSTM" in message
    assert info.value.ops == [("DeformConv", "the_node")] and info.value.opset == 17


def test_custom_domain_ops_are_unsupported(tmp_path: Path) -> None:
    path = tmp_path / "custom.onnx"
    path.write_bytes(small_model("FusedGelu", domain="com.microsoft"))
    with pytest.raises(
        UnsupportedOpError, match=r"custom\.onnx: unsupported ONNX op 'com\.microsoft\.FusedGelu'"
    ):
        burn.onnx.load(path, backend="ndarray")


@pytest.mark.parametrize(
    "content, reason",
    [(b"", "not an ONNX model"), (b"this is not protobuf at all \xff\xfe", "not"), (None, "truncated")],
)
def test_bad_files_name_the_path(tmp_path: Path, content: bytes | None, reason: str) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(content if content is not None else small_model()[:-7])
    with pytest.raises(OnnxError) as info:
        burn.onnx.load(path, backend="ndarray")
    assert str(info.value).startswith(f"{path}: ")
    assert info.value.source == str(path)


def test_missing_file_and_old_opset(tmp_path: Path) -> None:
    with pytest.raises(OnnxError, match=r"nowhere\.onnx: no such file"):
        burn.onnx.load(tmp_path / "nowhere.onnx")
    old = tmp_path / "old.onnx"
    old.write_bytes(small_model(opset=11))
    assert burn.onnx.load(old, backend="ndarray").program.opset == 13  # converted (test_onnx_semantics)
    # an op the converter has no schema for at opset 11: the conversion fails, the load names the file
    old.write_bytes(small_model("NoSuchOp", opset=11))
    with pytest.raises(OnnxError, match=r"old\.onnx: opset 11 is older than 13.*could not convert it"):
        burn.onnx.load(old, backend="ndarray")


def test_without_the_onnx_package_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(OnnxError, match=re.escape("pip install 'burn-core[onnx]'")):
        burn.onnx.load(b"whatever")


def test_inputs_are_checked() -> None:
    model = burn.onnx.load(small_model("Sigmoid"), backend="ndarray")
    b = burn.backend("ndarray")
    with pytest.raises(OnnxError, match="missing: x"):
        model.run({})
    with pytest.raises(OnnxError, match="unknown: z"):
        model.run({"x": np.zeros((2, 3), np.float32), "z": 1})
    with pytest.raises(ShapeError, match=r"input 'x' must have shape x: float32\[2, 3\], got \[3, 2\]"):
        model(burn.Tensor.zeros((3, 2), backend=b))
    with pytest.raises(KindError, match="input 'x' must be a Float tensor"):
        model(burn.Tensor.zeros((2, 3), kind=burn.Int, backend=b))
    with pytest.raises(OnnxError, match="input 'x' must be a Float tensor"):  # both kinds of error
        model(burn.Tensor.zeros((2, 3), kind=burn.Int, backend=b))
    out = model(np.full((2, 3), -1.0, np.float32))
    np.testing.assert_allclose(out.to_numpy(), np.full((2, 3), 0.5))


def test_errors_while_running_name_the_node() -> None:
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="bad_reshape")]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("shape", TensorProto.INT64, [2], [4, -1])],
    )
    model = burn.onnx.load(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), backend="ndarray"
    )
    assert model(np.zeros((4, 3), np.float32)).shape == (4, 3)
    with pytest.raises(OnnxError) as info:
        model(np.zeros((3, 3), np.float32))
    assert str(info.value) == (
        "<ModelProto>: node 'bad_reshape' (Reshape, opset 17) on inputs (float32[3, 3], host int64[2]): "
        "cannot reshape (3, 3) to [4, -1]"
    )
    assert (info.value.node, info.value.op_type, info.value.opset) == ("bad_reshape", "Reshape", 17)
    # a failure of burn's own shape check keeps its type too: an OnnxShapeError is a ShapeError
    matmul = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"], name="mm")], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)],
    )
    mm = burn.onnx.load(
        helper.make_model(matmul, opset_imports=[helper.make_opsetid("", 13)]), backend="ndarray"
    )
    with pytest.raises(ShapeError) as shape_info:
        mm(np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32))
    assert isinstance(shape_info.value, OnnxError) and shape_info.value.opset == 13
    want = "<ModelProto>: node 'mm' (MatMul, opset 13) on inputs (float32[2, 3], "
    assert str(shape_info.value).startswith(want)


# -- burn onnx inspect ----------------------------------------------------------------------------
def test_inspect_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = tmp_path / "good.onnx", tmp_path / "bad.onnx"
    good.write_bytes(small_model("Sigmoid"))
    bad.write_bytes(small_model("DeformConv"))
    assert main(["onnx", "inspect", str(good)]) == 0
    out = capsys.readouterr().out
    assert f"{good}: opset 17" in out and "x: float32[2, 3]" in out
    assert re.search(r"Relu\s+1\s+supported", out) and "every op is supported" in out
    assert main(["onnx", "inspect", str(good), str(bad), str(tmp_path / "none.onnx")]) == 1
    captured = capsys.readouterr()
    assert re.search(r"DeformConv\s+1\s+NOT SUPPORTED", captured.out)
    assert "none.onnx: no such file" in captured.err
    report = burn.onnx.inspect(small_model("DeformConv"))
    assert report.ops == {"Relu": 1, "DeformConv": 1}
    assert report.unsupported == ["DeformConv"] and not report.ok


# -- the guide ------------------------------------------------------------------------------------
def _guide() -> str:
    if not GUIDE.is_file():
        pytest.skip(f"no guide at {GUIDE} (an installed burn-core)")
    return GUIDE.read_text(encoding="utf-8")


def test_guide_table_is_generated_from_the_op_table() -> None:
    text = _guide()
    counts = read_counts(COUNTS.read_text(encoding="utf-8"))
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    assert text[start:stop].strip() == render_table(counts).strip(), (
        "docs/guides/import-models.md is out of date: run python -m burn.onnx.table "
        "--counts packages/burn-core/tests/onnx_node_counts.txt docs/guides/import-models.md"
    )
    assert write_table(GUIDE, check=True, counts=counts)
    for op in ("Conv", "BatchNormalization", "LSTM", "Trilu", "LayerNormalization", "Range"):
        assert f"`{op}`" in render_table()
    # each op with node cases shows its count, from the suite's counts file
    passed, cases = counts["Conv"]
    assert f"`Conv` {passed}/{cases}" in text and cases >= 1


def test_guide_onnx_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ONNX section's code blocks need torch and onnx, which the docs test environments do
    not have: they are marked skipped there and run here, in order, in one namespace."""
    pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    section = _guide().split("## ONNX models", 1)[1]
    blocks = re.findall(r"<!-- skip: (.*?) -->\s*```python\n(.*?)^```", section, re.S | re.M)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "_onnx_guide"}
    for reason, code in blocks:
        assert "test_onnx_errors.py" in reason
        exec(compile(code, str(GUIDE), "exec"), namespace)  # noqa: S102 - this repository's own docs
