"""``burn ops``: which ops each default op is built from (`burn.backend.op_sources`).

The static reading of the defaults is checked against what they really call: a recording
backend (the minimal one, whose every op but the required ones is burn-core's default) logs each
contract op touched while a default runs, and everything it logs must be in the static answer.
The plugin guide's generated table must match the code; regenerate it with
``python packages/burn-core/tests/test_cli_ops.py``.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from burn import cli
from burn.backend import Backend, contract_ops, required_ops
from burn.backend.op_sources import markdown_table, op_sources, used_by
from burn.foundations.data import TensorData
from burn.plugins import registry

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "backend-plugin.md"
BEGIN, END = "<!-- burn ops --markdown: begin -->", "<!-- burn ops --markdown: end -->"


def test_every_default_names_only_contract_ops_and_rests_on_required_ones() -> None:
    ops, sources = contract_ops(), op_sources()
    assert set(sources) == set(ops)
    required = set(required_ops())
    for name, src in sources.items():
        assert set(src.calls) <= set(ops), name
        assert name not in src.calls, f"{name} lists itself"
        if src.kind == "required":
            assert src.calls == () and src.rests_on == (name,)
        else:
            assert set(src.rests_on) <= required, name
    # the three autodiff hooks are the only defaults built from nothing (identities on plain backends)
    empty = {n for n, s in sources.items() if s.kind == "default" and not s.calls}
    assert empty <= {"float_detach", "float_is_require_grad", "float_set_require_grad"}, empty


def test_known_sources() -> None:
    sources = op_sources()
    assert "float_max_dim" in sources["max_pool2d"].calls
    assert "float_argmax" in sources["max_pool2d"].rests_on  # float_max_dim's default
    assert sources["float_sort"].calls == ("float_sort_with_indices",)
    assert set(sources["float_mean_dim"].calls) >= {"float_sum_dim", "float_div_scalar"}
    assert "max_pool2d" in used_by("float_max_dim")
    # the kind of a `self._lop(kind, "select")` lookup is bound at the call site
    assert "float_select" in sources["float_select_assign"].rests_on
    assert "int_select" not in sources["float_select_assign"].rests_on


# -- the static answer against a recording backend --------------------------------------------
class _Recording:
    """Wraps a backend: every contract op looked up on it is logged (defaults run on it)."""

    def __init__(self, inner: Backend, log: set[str]) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_log", log)

    def __getattr__(self, name: str) -> Any:
        inner = object.__getattribute__(self, "_inner")
        impl = getattr(type(inner), name, None)
        if name in contract_ops():
            object.__getattribute__(self, "_log").add(name)
            if getattr(impl, "__burn_op__", None) != "default":
                return getattr(inner, name)  # a required op: the backend's own, not recorded inside
        if inspect.isfunction(impl):  # a default or a private helper: runs on the recorder
            return impl.__get__(self)
        return getattr(inner, name)


def _reachable(name: str) -> set[str]:
    sources, seen, todo = op_sources(), set(), [name]
    while todo:
        op = todo.pop()
        if op not in seen:
            seen.add(op)
            todo.extend(sources[op].calls)
    return seen


@pytest.fixture(scope="module")
def minimal() -> Any:
    from minimal_backend import Minimal

    return Minimal(float_dtype="float64")


def _f(b: Any, shape: tuple[int, ...]) -> Any:
    rng = np.random.default_rng(0)
    return b.float_from_data(TensorData(rng.standard_normal(shape)), b.default_device())


def _i(b: Any, values: Any) -> Any:
    return b.int_from_data(TensorData(np.asarray(values, dtype=np.int64)), b.default_device())


CALLS = {
    "max_pool2d": lambda b, m: b.max_pool2d(_f(m, (1, 2, 5, 5)), (3, 3), (2, 2), (1, 1), (1, 1)),
    "max_pool2d_with_indices": lambda b, m: b.max_pool2d_with_indices(
        _f(m, (1, 1, 4, 4)), (2, 2), (2, 2), (0, 0), (1, 1)
    ),
    "avg_pool2d": lambda b, m: b.avg_pool2d(_f(m, (1, 2, 5, 5)), (3, 3), (1, 1), (1, 1), False),
    "conv2d": lambda b, m: b.conv2d(
        _f(m, (1, 2, 5, 5)), _f(m, (3, 2, 3, 3)), _f(m, (3,)), (1, 1), (1, 1), (1, 1), 1
    ),
    "float_mean_dim": lambda b, m: b.float_mean_dim(_f(m, (3, 4)), 1),
    "softmax": lambda b, m: b.softmax(_f(m, (3, 4)), 1),
    "float_sort": lambda b, m: b.float_sort(_f(m, (6,)), 0, True),
    "float_select_assign": lambda b, m: b.float_select_assign(
        _f(m, (4, 3)), 0, _i(m, [1, 1, 2]), _f(m, (3, 3))
    ),
    "interpolate": lambda b, m: b.interpolate(_f(m, (1, 1, 4, 4)), (6, 3), "bilinear", False),
}


@pytest.mark.parametrize("op", sorted(CALLS))
def test_static_sources_cover_what_the_default_really_calls(minimal: Any, op: str) -> None:
    log: set[str] = set()
    CALLS[op](_Recording(minimal, log), minimal)  # inputs made on `minimal`: not recorded
    recorded = log - {op}
    assert recorded, f"nothing recorded for {op}"
    missing = recorded - _reachable(op)
    assert not missing, f"{op} called {sorted(missing)}, which `burn ops` does not list"


# -- the command ----------------------------------------------------------------------------
@pytest.fixture
def reg(monkeypatch: pytest.MonkeyPatch) -> registry.PluginRegistry:
    import minimal_backend

    monkeypatch.delenv("BURN_STRICT_PLUGINS", raising=False)
    r = registry.PluginRegistry(entry_points=lambda: [])
    monkeypatch.setattr(registry, "REGISTRY", r)
    r.register(minimal_backend)
    return r


def test_ops_explains_named_ops(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops", "max_pool2d", "float_max_dim"]) == 0
    out = capsys.readouterr().out
    block = out.split("\n\n")[0].splitlines()
    assert block[0] == "max_pool2d (default)"
    assert block[1].startswith("  built from: ") and "float_max_dim" in block[1]
    assert block[2].startswith("  rests on:   ") and "float_argmax" in block[2]
    assert re.search(r"^float_max_dim \(default\)\n  built from: float_argmax, float_gather$", out, re.M)
    assert "  used by:    " in out and "max_pool2d" in out.split("float_max_dim (default)")[1]


def test_ops_lists_every_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["DEFAULT", "OP", "BUILT", "FROM"]
    names = [line.split()[0] for line in lines[1:]]
    assert names == [n for n, s in op_sources().items() if s.kind == "default"]


def test_ops_marks_what_a_backend_overrides(reg: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops", "--backend", "minimal", "float_add", "max_pool2d"]) == 0
    out = capsys.readouterr().out
    assert "float_add (required)  [yours]" in out and "max_pool2d (default)  [default]" in out


def test_ops_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops", "--json", "float_sort"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [
        {
            "name": "float_sort",
            "kind": "default",
            "calls": ["float_sort_with_indices"],
            "rests_on": ["float_sort_with_indices"],
            "used_by": used_by("float_sort"),
        }
    ]


def test_ops_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops", "float_mx"]) == 1
    err = capsys.readouterr().err
    assert "not an op of the backend contract: float_mx" in err and "did you mean" in err


def _guide_table() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def test_the_plugin_guide_table_is_generated_from_the_code() -> None:
    if not GUIDE.exists():
        pytest.skip("the docs are not in this checkout")
    assert _guide_table() == markdown_table(), (
        "docs/guides/backend-plugin.md is out of date: run python packages/burn-core/tests/test_cli_ops.py"
    )


def _write_guide_table() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    GUIDE.write_text(f"{head}{BEGIN}\n{markdown_table()}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")


if __name__ == "__main__":
    _write_guide_table()
    sys.exit(0)
