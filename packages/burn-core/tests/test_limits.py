"""The input-limits policy (`burn.Limits`): defaults, validation, messages."""

from __future__ import annotations

from dataclasses import fields

import pytest

import burn
from burn.foundations.limits import _UNITS, DEFAULT_LIMITS, resolve_limits


def test_every_limit_has_a_unit_for_its_messages() -> None:
    assert {f.name for f in fields(burn.Limits)} == _UNITS.keys()


def test_defaults_hold_a_70b_checkpoint() -> None:
    limits = burn.Limits()
    assert limits.max_total_elements >= 70e9
    assert limits.max_tensor_elements >= 128_256 * 8192  # a large vocabulary's embedding
    assert limits.max_file_bytes >= 140e9  # 70B params in 16 bits, one file


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "8"])
def test_a_limit_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(ValueError, match="Limits.max_rank must be a positive int"):
        burn.Limits(max_rank=bad)  # type: ignore[arg-type]


def test_refusal_names_what_the_value_and_the_field_to_raise() -> None:
    message = burn.Limits(max_tensors=10).refusal("max_tensors", 11, "model.pt")
    assert message == (
        "model.pt: 11 tensors, over the limit of 10 (raise it with limits=burn.Limits(max_tensors=...))"
    )
    assert burn.Limits(max_tensors=10).exceeds("max_tensors", 11)
    assert not burn.Limits(max_tensors=10).exceeds("max_tensors", 10)


def test_resolve_limits() -> None:
    assert resolve_limits(None) is DEFAULT_LIMITS
    custom = DEFAULT_LIMITS.replace(max_depth=4)
    assert resolve_limits(custom) is custom and custom.max_depth == 4
    with pytest.raises(TypeError, match="load_pytorch.limits must be a burn.Limits, got dict"):
        resolve_limits({"max_depth": 4}, "load_pytorch.limits")  # type: ignore[arg-type]
