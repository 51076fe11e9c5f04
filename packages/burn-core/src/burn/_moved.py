"""Old import paths of modules that moved, kept working.

When modules move (the op-family layout, issue 33), code written against the old paths, users'
and third-party backends', must keep importing. A package registers a table ``{old: [new, ...]}``
with `register`; importing an old name then gives a module whose attributes are looked up in the
new modules in order (the first that has the name wins), imported on first use. Nothing is
copied, so ``old.X is new.X``.

Example:
    >>> import burn.backend.float_ops as old
    >>> from burn.backend.ops.float import FloatOps
    >>> old.FloatOps is FloatOps
    True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Mapping, Sequence
from typing import Any

_TABLE: dict[str, tuple[str, ...]] = {}


class _Moved(types.ModuleType):
    """A module standing for an old path: every attribute comes from the new modules."""

    __targets__: tuple[str, ...]

    def __getattr__(self, name: str) -> Any:
        for target in self.__targets__:
            module = importlib.import_module(target)
            if hasattr(module, name):
                return getattr(module, name)
        moved = ", ".join(self.__targets__)
        raise AttributeError(f"module {self.__name__!r} (moved to {moved}) has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for target in self.__targets__:
            names.update(n for n in dir(importlib.import_module(target)) if not n.startswith("__"))
        return sorted(names)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _TABLE:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        targets = _TABLE[spec.name]
        if len(targets) == 1:  # the module itself: `import old as m; m.X` and isinstance checks agree
            return importlib.import_module(targets[0])
        module = _Moved(spec.name, f"Moved to {', '.join(targets)}.")
        module.__targets__ = targets
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


_FINDER = _Finder()


def register(table: Mapping[str, str | Sequence[str]]) -> None:
    """Keep each old module path of `table` importable, standing for its new module(s).

    Args:
        table: old dotted path -> the new module, or the new modules to look names up in.
    """
    for old, new in table.items():
        _TABLE[old] = (new,) if isinstance(new, str) else tuple(new)
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)


_OPS = "burn.backend.ops."
register({
    "burn.backend.float_ops": _OPS + "float",
    "burn.backend.int_ops": _OPS + "int",
    "burn.backend.bool_ops": _OPS + "bool",
    "burn.backend.math_ops": (_OPS + "float", _OPS + "int"),
    "burn.backend.layout_ops": (_OPS + "kinds", _OPS + "float", _OPS + "int", _OPS + "bool"),
    "burn.backend.reuse_ops": _OPS + "float",
    "burn.backend.optim_ops": _OPS + "optim",
    "burn.backend.activation_ops": _OPS + "activation",
    "burn.backend.loss_ops": _OPS + "loss",
    "burn.backend.rnn_ops": _OPS + "rnn",
    "burn.backend.module_ops": (_OPS + "conv", _OPS + "pool", _OPS + "sampling", _OPS + "embedding"),
    "burn.backend.module_ops_3d": ("burn.backend.windows", _OPS + "conv", _OPS + "pool"),
    "burn.backend.module_ops_deform": _OPS + "conv",
    "burn.backend.module_ops_fold": _OPS + "conv",
    "burn.backend.module_ops_sampling": _OPS + "sampling",
    "burn.backend.xp.float_ops": "burn.backend.xp.float",
    "burn.backend.xp.int_ops": "burn.backend.xp.int",
    "burn.backend.xp.bool_ops": "burn.backend.xp.bool",
    "burn.backend.xp.interpolate": "burn.backend.xp.sampling",
    "burn.tensor._ownership": "burn.foundations.ownership",
})

# The Tensor layer's functional ops: one module per op family under `burn.tensor.module`.
_MODULE = "burn.tensor.module."
register({
    "burn.tensor.module_3d": (_MODULE + "conv", _MODULE + "pool", _MODULE + "_padding"),
    "burn.tensor.module_loss": _MODULE + "loss",
    "burn.tensor.module_rnn": _MODULE + "rnn",
    "burn.tensor.module_sampling": (_MODULE + "sampling", _MODULE + "linear", _MODULE + "loss"),
    "burn.tensor.module_window": _MODULE + "conv",
})
