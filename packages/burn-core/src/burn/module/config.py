"""`@config`: dataclasses with JSON round trips and type validation, as Burn's ``Config``."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import os
import sys
import types
import typing
from collections.abc import Callable
from typing import (
    Any,
    BinaryIO,
    Literal,
    NoReturn,
    TypeVar,
    Union,
    dataclass_transform,
    get_args,
    get_origin,
    get_type_hints,
)

from burn.errors import ConfigError

C = TypeVar("C")

_MISSING = object()


class ConfigArgumentError(ConfigError, TypeError):
    """Bad constructor arguments for a config (missing, unknown or repeated fields).

    A `ConfigError` naming the fields, and a `TypeError` as Python's own message for a bad call
    would be, so ``except TypeError`` still catches it.
    """


@dataclass_transform()  # type checkers see configs as the dataclasses they are
def config(cls: type[C] | None = None, /, **dataclass_options: Any) -> Any:
    """Turn a class into a config: a dataclass whose fields are type-checked on creation, with
    ``to_json()``/``from_json()``, ``save(path)``/``load(path)``, ``to_dict()``/``from_dict()``
    and ``with_<field>(value)`` builders.

    Missing required fields, values of the wrong type and unknown keys raise `ConfigError` naming
    the field. Supported annotations: bool, int, float (ints accepted), str, None, unions and
    Optional, Literal, list[T], tuple[T, ...] and fixed tuples, dict[str, T], nested configs, Any.

    Example:
        >>> @config
        ... class LinearConfig:
        ...     d_input: int
        ...     d_output: int
        ...     bias: bool = True
        >>> cfg = LinearConfig(4, 2).with_bias(False)
        >>> LinearConfig.from_json(cfg.to_json()) == cfg
        True
        >>> LinearConfig.from_dict({"d_input": 4})
        Traceback (most recent call last):
        ...
        burn.errors.ConfigError: LinearConfig: missing required field 'd_output'
    """

    def wrap(klass: type[C]) -> type[C]:
        return _make_config(klass, dataclass_options)

    return wrap if cls is None else wrap(cls)


def is_config(obj: Any) -> bool:
    return getattr(obj, "__burn_config__", False) is True


def _not_a_layer(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    """A config of a layer called like the layer: a field given ``LinearConfig(...)`` without
    ``.init(...)``. The message names the field of the calling module that holds it (found in the
    caller's ``self``), instead of Python's "'LinearConfig' object is not callable"."""
    name = type(self).__name__
    where = ""
    owner = sys._getframe(1).f_locals.get("self")
    for field, value in (vars(owner) if hasattr(owner, "__dict__") else {}).items():
        keys = [key for key, item in _items_of(value) if item is self]
        if keys:
            shown = field if keys[0] is None else f"{field}[{keys[0]!r}]"
            where = f"field {shown!r} of {type(owner).__name__} holds a {name}, not the layer"
            break
    raise TypeError(
        f"{where or f'a {name} is a config, not a layer'}: call .init(...) on it to make the layer, "
        f"e.g. {name}(...).init(device) (a config describes a layer; its init() builds it)"
    )


def _items_of(value: Any) -> Any:
    """``(key, item)`` pairs of a dict, list or tuple; ``[(None, value)]`` for anything else."""
    if isinstance(value, dict):
        return value.items()
    if isinstance(value, (list, tuple)):
        return enumerate(value)
    return [(None, value)]


def _make_config(cls: type, options: dict[str, Any]) -> type:
    user_post_init = cls.__dict__.get("__post_init__")

    def __post_init__(self: Any) -> None:
        _validate(self)
        if user_post_init is not None:
            user_post_init(self)

    # Set before dataclass() runs: the generated __init__ only calls a __post_init__ it can see.
    cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
    data_cls: Any = dataclasses.dataclass(cls, **options)
    data_cls.__init__ = _checked_init(data_cls)
    data_cls.__burn_config__ = True  # type: ignore[attr-defined]
    # A layer's config called like the layer (a field not given .init()): say so, naming the field.
    has_call = any("__call__" in k.__dict__ for k in data_cls.__mro__)
    if callable(getattr(data_cls, "init", None)) and not has_call:
        data_cls.__call__ = _not_a_layer
    data_cls.to_dict = _to_dict  # type: ignore[attr-defined]
    data_cls.from_dict = classmethod(_from_dict)  # type: ignore[attr-defined]
    data_cls.to_json = _to_json  # type: ignore[attr-defined]
    data_cls.from_json = classmethod(_from_json)  # type: ignore[attr-defined]
    data_cls.save = _save  # type: ignore[attr-defined]
    data_cls.load = classmethod(_load)  # type: ignore[attr-defined]
    for field in dataclasses.fields(data_cls):
        name = f"with_{field.name}"
        if name not in cls.__dict__:
            setattr(data_cls, name, _builder(field.name))
    return data_cls


def _checked_init(cls: type) -> Callable[..., None]:
    """Wrap the dataclass ``__init__`` so a bad call raises `ConfigArgumentError` naming the
    fields (Python's own TypeError names only one missing argument, and no config)."""
    init: Callable[..., None] = cls.__init__  # type: ignore[misc]
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError:
            raise ConfigArgumentError(_bad_call(cls, args, kwargs)) from None
        init(self, *args, **kwargs)

    return __init__


def _bad_call(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    fields = [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
    names = [f.name for f in fields]
    problems = []
    if len(args) > len(names):
        problems.append(f"takes at most {len(names)} positional field(s), got {len(args)}")
    given = set(names[: len(args)])
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        problems.append(f"unknown field(s) {', '.join(map(repr, unknown))} (fields: {', '.join(names)})")
    twice = [k for k in kwargs if k in given]
    if twice:
        problems.append(f"field(s) {', '.join(map(repr, twice))} given twice")
    required = [
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [n for n in required if n not in given and n not in kwargs]
    if missing:
        problems.append(f"missing required field(s) {', '.join(map(repr, missing))}")
    return f"{cls.__name__}: {'; '.join(problems) or 'bad arguments'}"


def _builder(name: str) -> Callable[[Any, Any], Any]:
    def with_field(self: Any, value: Any) -> Any:
        return dataclasses.replace(self, **{name: value})

    with_field.__name__ = f"with_{name}"
    with_field.__doc__ = f"A copy with `{name}` set to `value`."
    return with_field


# -- (de)serialization -----------------------------------------------------------------------------
def _to_dict(self: Any) -> dict[str, Any]:
    """Plain JSON-ready data (nested configs become dicts, tuples lists)."""
    return {f.name: _encode(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _encode(value: Any) -> Any:
    if is_config(value):
        return value.to_dict()
    # Tagged-union values (e.g. `burn.nn.Initializer` variants) encode themselves.
    encode = getattr(type(value), "__config_encode__", None)
    if encode is not None:
        return encode(value)
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    return value


def _from_dict(cls: type[C], data: Any) -> C:
    if not isinstance(data, dict):
        raise ConfigError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{cls.__name__}: unknown field(s) {', '.join(map(repr, unknown))}")
    kwargs = {}
    for name, field in fields.items():
        if name in data:
            kwargs[name] = _decode(data[name], hints.get(name, Any), f"{cls.__name__}.{name}")
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{cls.__name__}: missing required field {name!r}")
    return cls(**kwargs)


def _decode(value: Any, annotation: Any, where: str) -> Any:
    """JSON data -> the annotated Python value (lists to tuples, dicts to nested configs)."""
    origin = get_origin(annotation)
    if isinstance(annotation, type) and is_config(annotation) and isinstance(value, dict):
        return annotation.from_dict(value)  # type: ignore[attr-defined]
    decode = getattr(annotation, "__config_decode__", None) if isinstance(annotation, type) else None
    if decode is not None:  # raises ConfigError on data it does not recognize
        return decode(value, where)
    if origin in (Union, types.UnionType):
        for option in get_args(annotation):
            try:
                decoded = _decode(value, option, where)
                _check(decoded, option, where)
                return decoded
            except ConfigError:
                continue
        return value
    if origin is tuple and isinstance(value, list):
        args = get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        if args and len(args) == len(value):
            pairs = enumerate(zip(value, args, strict=True))
            return tuple(_decode(v, a, f"{where}[{i}]") for i, (v, a) in pairs)
        return tuple(value)
    if origin is list and isinstance(value, list):
        (item,) = get_args(annotation) or (Any,)
        return [_decode(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict and isinstance(value, dict):
        args = get_args(annotation)
        item = args[1] if len(args) == 2 else Any
        return {k: _decode(v, item, f"{where}[{k!r}]") for k, v in value.items()}
    return value


def _to_json(self: Any, indent: int | None = 2) -> str:
    return json.dumps(self.to_dict(), indent=indent)


def _from_json(cls: type[C], text: str) -> C:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{cls.__name__}: invalid JSON: {exc}") from None
    return cls.from_dict(data)  # type: ignore[attr-defined,no-any-return]


def _save(self: Any, path: str | os.PathLike[str]) -> None:
    """Write the config as JSON, atomically (temp file, fsync, rename), with the user's umask."""
    from pathlib import Path

    from burn.record._io import atomic_write  # here: burn.record imports burn.module

    data = self.to_json().encode()

    def write(f: BinaryIO) -> None:
        f.write(data)

    atomic_write(Path(os.fspath(path)), write)


def _load(cls: type[C], path: str | os.PathLike[str]) -> C:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as exc:
        raise ConfigError(f"{cls.__name__}: cannot read {os.fspath(path)!r}: {exc.strerror}") from None
    try:
        return cls.from_json(text)  # type: ignore[attr-defined,no-any-return]
    except ConfigError as exc:
        raise ConfigError(f"{exc} (in {os.fspath(path)!r})") from None


# -- validation ------------------------------------------------------------------------------------
def _hints(cls: type) -> dict[str, Any]:
    try:
        return get_type_hints(cls)
    except (NameError, TypeError):
        return {}


def _validate(self: Any) -> None:
    hints = _hints(type(self))
    for field in dataclasses.fields(self):
        annotation = hints.get(field.name, Any)
        _check(getattr(self, field.name), annotation, f"{type(self).__name__}.{field.name}")


def _check(value: Any, annotation: Any, where: str) -> None:
    if not _matches(value, annotation):
        raise ConfigError(f"{where}: expected {_name(annotation)}, got {type(value).__name__} {value!r}")


def _matches(value: Any, annotation: Any) -> bool:
    if annotation is Any or annotation is typing.Any:
        return True
    if annotation is None or annotation is type(None):
        return value is None
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin in (Union, types.UnionType):
        return any(_matches(value, a) for a in args)
    if origin is Literal:
        return value in args
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is list:
        if not isinstance(value, list):
            return False
        return not args or all(_matches(v, args[0]) for v in value)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0]) for v in value)
        if not args:
            return True
        return len(args) == len(value) and all(_matches(v, a) for v, a in zip(value, args, strict=True))
    if origin is dict:
        if not isinstance(value, dict):
            return False
        return not args or all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items())
    if origin is not None:
        return isinstance(value, origin)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


def _name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")
