"""The layout rules of issue 33, checked on the sources of every package of this checkout.

- An op family's file has the family's name in every layer that implements it: a method named
  like a contract op, in a layer's ``<family>.py``, belongs to that family (`op_facts`), and a
  layer's op files hold only family files and private helpers.
- No file is named by when it came (``_extra``, ``_more``) or split by rank (``_3d``).
- The contract never imports the Tensor package, and the Tensor layer imports no contract private.

The files are read, not imported, so the check runs in every environment (burn-core alone too).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from burn.backend.contract import families, op_facts

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ROOT / "packages"
# Layers whose modules are op families (besides helpers named by what they hold, which override
# no contract op).
LAYERS: list[str] = [
    "burn-core/src/burn/backend/ops",
    "burn-core/src/burn/backend/xp",
    "burn-core/src/burn/tensor/module",
    "burn-autodiff/src/burn_autodiff/ops",
    "burn-ndarray/src/burn_ndarray/ops",
    "burn-opencl/src/burn_opencl/ops",
    "burn-cuda/src/burn_cuda/ops",
]
FAMILIES = families()
ARRIVAL = re.compile(r"(_extra|_more|_new|_old|_v\d|_[123]d)$")


def _layer_files() -> list[Path]:
    out = []
    for folder in LAYERS:
        path = PACKAGES / folder
        if path.is_dir():
            out.extend(sorted(path.glob("*.py")))
    return out


def _methods(path: Path) -> list[str]:
    """Names defined in the classes of `path` (methods, and aliases such as ``x_owned = x``)."""
    tree = ast.parse(path.read_text())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names.append(item.name)
                elif isinstance(item, ast.Assign):
                    names.extend(t.id for t in item.targets if isinstance(t, ast.Name))
    return names


def test_every_op_layer_exists() -> None:
    missing = [folder for folder in LAYERS if not (PACKAGES / folder).is_dir()]
    assert not missing, f"layers without their ops folder: {missing}"


@pytest.mark.parametrize("path", _layer_files(), ids=lambda p: str(p.relative_to(PACKAGES)))
def test_an_op_lives_in_the_file_of_its_family(path: Path) -> None:
    facts = op_facts()
    stem = path.stem
    ops = [name for name in _methods(path) if name in facts]
    if stem in FAMILIES:
        wrong = {name: facts[name].family for name in ops if facts[name].family != stem}
        assert not wrong, f"{path.name} holds ops of other families: {wrong}"
    else:
        assert not ops, f"{path.name} is not a family file but overrides contract ops: {ops}"


def test_no_file_is_named_by_arrival_or_rank() -> None:
    names = [
        p.relative_to(PACKAGES) for p in PACKAGES.glob("*/src/**/*.py") if ARRIVAL.search(p.stem.lower())
    ] + [p.relative_to(PACKAGES) for p in PACKAGES.glob("*/tests/*.py") if ARRIVAL.search(p.stem.lower())]
    assert not names, f"files named by arrival or rank: {names}"


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names)
    return out


def test_the_contract_never_imports_the_tensor_package() -> None:
    src = PACKAGES / "burn-core/src/burn"
    bad = [
        (str(p.relative_to(src)), module)
        for folder in ("backend", "foundations")
        for p in sorted((src / folder).rglob("*.py"))
        for module, _ in _imports(p)
        if module == "burn.tensor" or module.startswith("burn.tensor.")
    ]
    assert not bad, f"contract modules importing the Tensor package: {bad}"


def test_the_tensor_layer_imports_no_contract_private() -> None:
    src = PACKAGES / "burn-core/src/burn/tensor"
    bad = []
    for p in sorted(src.rglob("*.py")):
        for module, names in _imports(p):
            if not module.startswith("burn.backend"):
                continue
            private = [n for n in names if n.startswith("_")]
            if any(part.startswith("_") for part in module.split(".")) or private:
                bad.append((str(p.relative_to(src)), module, private))
    assert not bad, f"Tensor-layer imports of contract privates: {bad}"


def test_every_contract_op_has_a_family_module() -> None:
    ops = PACKAGES / "burn-core/src/burn/backend/ops"
    assert sorted(p.stem for p in ops.glob("*.py") if p.stem in FAMILIES) == FAMILIES
