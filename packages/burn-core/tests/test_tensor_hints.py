"""PyTorch habits get a pointer to the burn spelling, not a bare error (burn/tensor/_hints.py)."""

from __future__ import annotations

import copy
import pickle
import re
from typing import Any

import numpy as np
import pytest

from burn import Tensor
from burn.tensor._hints import PYTORCH_NAMES


@pytest.fixture
def x(ndarray_registered: None) -> Tensor:
    return Tensor.from_data([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x: x.mean(1), TypeError, r"Use x.mean_dim\(1\), which keeps the reduced dim"),
        (lambda x: x.sum(1), TypeError, r"Use x.sum_dim\(1\)"),
        (lambda x: x.sum(dim=0, keepdim=True), TypeError, r"got \(dim=0, keepdim=True\). Use x.sum_dim\(0\)"),
        (lambda x: x.mean(-1), TypeError, r"x.mean_dim\(-1\).squeeze\(-1\) drops it"),
        (lambda x: x.unsqueeze(0), TypeError, r"Use x.unsqueeze_dim\(0\) for PyTorch's x.unsqueeze\(0\)"),
        (
            lambda x: Tensor.zeros(2, 3),
            TypeError,
            r"the shape is one argument, a tuple: Tensor.zeros\(\(2, 3\)\)",
        ),
        (lambda x: Tensor.ones(4, 1), TypeError, r"Tensor.ones\(\(4, 1\)\)"),
        (lambda x: x.relu(), AttributeError, r"no attribute 'relu': burn.activation.relu\(x\)"),
        (lambda x: x.numpy(), AttributeError, r"no attribute 'numpy': x.to_numpy\(\)"),
        (lambda x: x.view(4), AttributeError, r"x.reshape\(shape\)"),
        (lambda x: x.masked_fill, AttributeError, r"x.mask_fill\(mask, value\)"),
    ],
)
def test_pytorch_habits_get_a_pointer(x: Tensor, call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call(x)


def test_the_burn_spellings_still_work(x: Tensor) -> None:
    assert x.sum().tolist() == [10.0] and x.mean().tolist() == [2.5]
    assert x.unsqueeze().shape == (1, 2, 2)
    assert x.mean_dim(1).squeeze(1).tolist() == [1.5, 3.5]
    assert Tensor.zeros((2, 3)).shape == (2, 3)


def test_unknown_names_keep_a_plain_attribute_error(x: Tensor) -> None:
    with pytest.raises(AttributeError, match=r"^'Tensor' object has no attribute 'resahpe'$") as info:
        x.resahpe  # noqa: B018
    assert info.value.name == "resahpe" and info.value.obj is x  # what Python's "Did you mean" uses
    # protocol probes see a plain AttributeError, and NumPy, copy and pickle work as before
    assert not hasattr(x, "__array_interface__") and not hasattr(x, "_repr_html_x")
    assert np.asarray(x).shape == (2, 2)
    assert copy.deepcopy(x).tolist() == pickle.loads(pickle.dumps(x)).tolist() == x.tolist()


def test_hints_never_shadow_a_real_method() -> None:
    real = [name for name in PYTORCH_NAMES if hasattr(Tensor, name)]
    assert not real, f"Tensor has {real}: drop them from PYTORCH_NAMES"
    for hint in PYTORCH_NAMES.values():  # every method a hint points to exists
        for method in re.findall(r"\bx\.(\w+)\(", hint):
            assert hasattr(Tensor, method), (hint, method)


def test_the_class_answers_pytorch_names_too(x: Tensor) -> None:
    assert not hasattr(Tensor, "relu")
    assert "relu" not in dir(x) and "numpy" not in dir(x) and "to_numpy" in dir(x)  # completion
    with pytest.raises(AttributeError, match=r"type object 'Tensor' has no attribute 'numpy': x.to_numpy"):
        Tensor.numpy  # noqa: B018


def test_tensor_keeps_the_generic_attribute_lookup() -> None:
    # A __getattr__ anywhere in Tensor's bases makes CPython route every attribute read of every
    # tensor through its getattr hook (about 3x slower per read; 0.2 us per small op).
    assert not any("__getattr__" in vars(cls) for cls in Tensor.__mro__)
    assert Tensor.__getattribute__ is object.__getattribute__
