"""Run the Python code blocks of the documentation (``docs/**/*.md`` and the root README.md).

Each page's ```` ```python ```` blocks run in order in one namespace, in a temporary working
directory. A page whose blocks use a backend that is not installed is skipped with the reason;
a block that uses ``opencl`` or ``cuda`` is skipped alone when that backend cannot run here (the
blocks after it must not depend on it). A block preceded by ``<!-- skip: reason -->`` is not run.

The docs live in the source checkout, not in the installed package: without them this module
is skipped.
"""

from __future__ import annotations

import importlib.util
import io
import re
import sys
import tokenize
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

import burn
import burn.plugins

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
TEMPLATE_SRC = ROOT / "examples" / "plugin-template" / "src"

if not DOCS.is_dir():
    pytest.skip(f"no docs folder at {DOCS} (an installed burn-core)", allow_module_level=True)

# Backend names the docs may use -> the module that provides them.
BACKEND_MODULES = {
    "ndarray": "burn_ndarray",
    "autodiff": "burn_autodiff",
    "fusion": "burn_fusion",
    "opencl": "burn_opencl",
    "cuda": "burn_cuda",
    "template": "burn_template",
}
OPTIONAL = frozenset({"opencl", "cuda"})  # hardware backends: skip the block, not the page
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.M | re.S)
_SKIP = re.compile(r"<!--\s*skip:\s*(.+?)\s*-->\s*$")
_NAME = re.compile(r"\b(" + "|".join(BACKEND_MODULES) + r")\b")


@dataclass(frozen=True)
class Block:
    """One ```python block of a page."""

    line: int
    code: str
    skip: str | None  # the reason of a preceding `<!-- skip: ... -->`, or None

    def backends(self) -> set[str]:
        """Backend names the block uses: in its string literals and imports (never its comments)."""
        found = {name for name, module in BACKEND_MODULES.items() if re.search(rf"\b{module}\b", self.code)}
        tokens = tokenize.generate_tokens(io.StringIO(self.code).readline)
        for tok in tokens:
            if tok.type == tokenize.STRING:
                found.update(_NAME.findall(tok.string))
        return found


def blocks(page: Path) -> list[Block]:
    """The ```python blocks of `page`, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        marker = _SKIP.search(before[-1]) if before else None
        line = text.count("\n", 0, match.start()) + 2
        found.append(Block(line, match.group(1), marker.group(1) if marker else None))
    return found


def pages() -> list[Path]:
    found = sorted(DOCS.rglob("*.md"))
    readme = ROOT / "README.md"
    return ([readme] if readme.is_file() else []) + found


def _installed(name: str) -> bool:
    if name == "template" and TEMPLATE_SRC.is_dir():
        return True  # run from the checkout's source when not installed (see _use_template_source)
    return importlib.util.find_spec(BACKEND_MODULES[name]) is not None


def _unavailable(name: str) -> str | None:
    """Why the optional backend `name` cannot run here, or None."""
    if not _installed(name):
        return f"{BACKEND_MODULES[name]} is not installed"
    import burn

    rows = {info.name: info for info in burn.backends()}
    info = rows.get(name)
    if info is None or info.status != "available":
        return f"backend {name!r} is not available here: {info.reason if info else 'not registered'}"
    return None


def _use_template_source(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("burn_template") is None:
        monkeypatch.syspath_prepend(str(TEMPLATE_SRC))


PAGES = [p for p in pages() if blocks(p)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_code_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page_blocks = blocks(page)
    needed = set().union(*(b.backends() for b in page_blocks if b.skip is None)) - OPTIONAL
    missing = sorted(BACKEND_MODULES[n] for n in needed if not _installed(n))
    if missing:
        pytest.skip(f"{page.name} needs {', '.join(missing)}, not installed")
    if "template" in needed:
        _use_template_source(monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BURN_BACKEND", raising=False)
    # A real module, so that classes the page defines (dataclasses, configs) can find it.
    module = types.ModuleType(f"_burn_docs_{page.stem.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    before = {info.name for info in burn.backends()}
    try:
        for block in page_blocks:
            reasons = [r for n in sorted(block.backends() & OPTIONAL) if (r := _unavailable(n))]
            if block.skip is not None or reasons:
                continue
            code = compile(block.code, f"{page.relative_to(ROOT)}:{block.line}", "exec")
            exec(code, module.__dict__)  # noqa: S102 - the docs are this repository's own code
    finally:
        # A page may register plugins at run time (the plugin guide does): later tests must see
        # the installed set only.
        added = {info.name for info in burn.backends()} - before
        if "template" in added and "burn_template.plugin" in sys.modules:
            burn.plugins.unregister(sys.modules["burn_template.plugin"])
        assert {info.name for info in burn.backends()} == before, f"{page.name} left plugins registered"


def test_skip_marker_is_read(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- skip: needs a GPU -->\n```python\nraise SystemExit\n```\n"
                    "```python\nx = 'autodiff(ndarray)'  # opencl in a comment\n```\n")
    first, second = blocks(page)
    assert first.skip == "needs a GPU" and second.skip is None
    assert second.backends() == {"autodiff", "ndarray"} and second.line == 8
