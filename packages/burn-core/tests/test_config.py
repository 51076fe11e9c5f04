"""@burn.config: defaults, builders, JSON round trips, validation errors naming the field."""

from __future__ import annotations

import json
from typing import Literal

import pytest

from burn.errors import ConfigError
from burn.module.config import config


@config
class InnerConfig:
    size: int
    rate: float = 0.5
    kernel: tuple[int, int] = (3, 3)
    mode: Literal["nearest", "bilinear"] = "nearest"


@config
class OuterConfig:
    inner: InnerConfig
    name: str = "model"
    layers: list[int] | None = None
    extra: dict[str, float] | None = None


def test_defaults_builders_and_equality() -> None:
    cfg = OuterConfig(InnerConfig(4))
    assert cfg.inner.rate == 0.5 and cfg.name == "model"
    changed = cfg.with_name("other")
    assert changed.name == "other" and cfg.name == "model"
    assert changed != cfg


def test_json_round_trip_keeps_tuples_and_nested_configs(tmp_path) -> None:
    cfg = OuterConfig(InnerConfig(4, kernel=(5, 1), mode="bilinear"), layers=[1, 2], extra={"a": 1.5})
    again = OuterConfig.from_json(cfg.to_json())
    assert again == cfg
    assert isinstance(again.inner, InnerConfig) and again.inner.kernel == (5, 1)
    path = tmp_path / "config.json"
    cfg.save(path)
    assert json.loads(path.read_text())["inner"]["kernel"] == [5, 1]
    assert OuterConfig.load(path) == cfg


def test_int_is_accepted_for_float_but_not_bool_for_int() -> None:
    assert InnerConfig(2, rate=1).rate == 1
    with pytest.raises(ConfigError, match=r"InnerConfig.size: expected int, got bool"):
        InnerConfig(True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"inner": {"size": 1.5}}', r"InnerConfig\.size: expected int"),
        ('{"inner": {"size": 1}, "bogus": 2}', r"unknown field\(s\) 'bogus'"),
        ("{}", r"missing required field 'inner'"),
        ('{"inner": {"size": 1, "mode": "cubic"}}', r"InnerConfig\.mode"),
        ('{"inner": {"size": 1, "kernel": [1]}}', r"InnerConfig\.kernel"),
        ('{"inner": {"size": 1}, "layers": ["a"]}', r"OuterConfig\.layers"),
        ("[1, 2]", r"expected a JSON object"),
        ("{not json", r"invalid JSON"),
    ],
)
def test_bad_input_names_the_field(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        OuterConfig.from_json(text)


def test_load_errors_name_the_file(tmp_path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"inner": {"size": "x"}}')
    with pytest.raises(ConfigError, match=r"bad\.json"):
        OuterConfig.load(path)
    with pytest.raises(ConfigError, match=r"cannot read"):
        OuterConfig.load(tmp_path / "missing.json")


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path) -> None:
    path = tmp_path / "c.json"
    InnerConfig(1).save(path)
    InnerConfig(2).save(path)
    assert InnerConfig.load(path).size == 2
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


def test_user_post_init_still_runs() -> None:
    calls = []

    @config
    class WithPost:
        n: int = 1

        def __post_init__(self) -> None:
            calls.append(self.n)

    WithPost(3)
    assert calls == [3]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, r"InnerConfig: missing required field\(s\) 'size'"),
        ((1,), {"bogus": 2}, r"InnerConfig: unknown field\(s\) 'bogus' \(fields: size, rate, kernel, mode\)"),
        ((1,), {"size": 2}, r"field\(s\) 'size' given twice"),
        ((1, 0.5, (3, 3), "nearest", 9), {}, r"at most 4 positional field\(s\), got 5"),
        (("4",), {}, r"InnerConfig\.size: expected int, got str '4'"),
    ],
)
def test_bad_constructor_calls_raise_config_error_naming_the_field(args, kwargs, message) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        InnerConfig(*args, **kwargs)
    if "expected int" not in message:
        assert isinstance(info.value, TypeError), "a bad call stays a TypeError too"


def test_layer_configs_name_missing_and_unknown_fields() -> None:
    from burn import nn

    with pytest.raises(ConfigError, match=r"LinearConfig: missing required field\(s\) 'd_output'"):
        nn.LinearConfig(16)
    with pytest.raises(ConfigError, match=r"Conv2dConfig: unknown field\(s\) 'kernel'"):
        nn.Conv2dConfig((1, 2), kernel=(3, 3))
    with pytest.raises(ConfigError, match=r"LinearConfig\.bias: expected bool, got str"):
        nn.LinearConfig(16, 32, bias="yes")
    with pytest.raises(ConfigError, match=r"LinearConfig: unknown field\(s\) 'd_in'"):
        nn.LinearConfig.from_json('{"d_in": 16, "d_output": 32}')
