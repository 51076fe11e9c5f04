"""Old import paths of modules that moved (the op-family layout) keep importing the same objects."""

from __future__ import annotations

import importlib

import pytest

import burn._moved as moved


@pytest.mark.parametrize("old", sorted(moved._TABLE))
def test_every_old_path_imports_what_moved(old: str) -> None:
    module = importlib.import_module(old)
    targets = moved._TABLE[old]
    if len(targets) == 1:
        assert module is importlib.import_module(targets[0])
    else:
        names = dir(module)
        assert names, f"{old} stands for nothing"
        name = next(n for n in names if not n.startswith("_"))
        assert getattr(module, name) is next(
            getattr(m, name) for m in map(importlib.import_module, targets) if hasattr(m, name)
        )


def test_names_a_third_party_backend_imports_are_the_same_objects() -> None:
    from burn.backend.module_ops import InterpolateMode, conv_nd  # noqa: F401  (one of several targets)
    from burn.backend.ops.conv import conv_nd as new_conv_nd
    from burn.foundations.data import TensorData
    from burn.foundations.dtype import DType
    from burn.tensor.data import TensorData as OldTensorData
    from burn.tensor.dtype import DType as OldDType

    assert OldDType is DType and OldTensorData is TensorData and conv_nd is new_conv_nd


def test_an_unknown_name_under_an_old_path_is_an_import_error() -> None:
    with pytest.raises(ImportError, match="nothing_here"):
        from burn.backend.module_ops import nothing_here  # noqa: F401
