"""No pickle anywhere: the record and optim sources import no code-executing deserializer, and
every recorder saves and loads (module and nested optimizer-like records) with pickle disabled."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest
from test_record_support import backend, make_net

import burn
from burn import record

UNSAFE_MODULES = {
    "pickle",
    "_pickle",
    "cPickle",
    "marshal",
    "shelve",
    "dill",
    "cloudpickle",
    "joblib",
    "copyreg",
}
SOURCES = [Path(burn.__file__).parent / sub for sub in ("record", "optim")]


def _python_files() -> list[Path]:
    files = [f for root in SOURCES for f in sorted(root.rglob("*.py"))]
    assert len(files) > 10
    return files


# The one reader of foreign pickles: PyTorch checkpoints (burn.record.load_pytorch). It may import
# `pickle` only to subclass its Unpickler with an allow-list `find_class` (checked below).
RESTRICTED_UNPICKLER = "pytorch_pickle.py"


@pytest.mark.parametrize("path", _python_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sources_import_no_unsafe_deserializer(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    allowed = {"pickle", "pickletools"} if path.name == RESTRICTED_UNPICKLER else set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module.split(".")[0]]
        assert not (UNSAFE_MODULES - allowed) & set(names), f"{path}:{node.lineno} imports {names}"
        if isinstance(node, ast.keyword) and node.arg == "allow_pickle":
            assert isinstance(node.value, ast.Constant) and node.value.value is False, f"{path}:{node.lineno}"
        if isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            assert name not in {"__import__", "eval", "exec"}, f"{path}:{node.lineno} uses {name}"


@pytest.mark.parametrize("recorder_cls", record.ALL_RECORDERS, ids=lambda c: c.__name__)
def test_round_trips_with_pickle_disabled(recorder_cls, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("pickle was used")

    for name in ("load", "loads", "dump", "dumps", "Unpickler", "Pickler"):
        monkeypatch.setattr(pickle, name, refuse)
    B = backend("ndarray")  # noqa: N806
    net = make_net(B)
    state = {"step": 3, "m": burn.Tensor.from_data(np.arange(4.0, dtype=np.float32), backend=B), "name": "x"}
    recorder = recorder_cls()
    for rec, template in ((net.into_record(), net), (state, None)):
        saved = recorder.record(rec, tmp_path / "r") if recorder.extension else recorder.record(rec)
        loaded = recorder.load(saved, template=template)
        assert list(loaded) == list(rec)


def test_the_restricted_unpickler_only_subclasses_pickle() -> None:
    """pytorch_pickle.py uses `pickle` for one thing: an Unpickler subclass whose `find_class` and
    `persistent_load` it overrides. It never calls pickle's load/loads, nor the base find_class."""
    path = Path(burn.__file__).parent / "record" / RESTRICTED_UNPICKLER
    tree = ast.parse(path.read_text(), str(path))
    uses = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "pickle"
    }
    assert uses <= {"Unpickler", "UnpicklingError"}, uses
    unpicklers = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Attribute) and b.attr == "Unpickler" for b in node.bases)
    ]
    assert len(unpicklers) == 1
    methods = {n.name for n in unpicklers[0].body if isinstance(n, ast.FunctionDef)}
    assert {"find_class", "persistent_load"} <= methods
    assert "super().find_class" not in ast.unparse(unpicklers[0])
