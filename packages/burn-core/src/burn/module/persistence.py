"""Module <-> record: what `Module.into_record`, `load_record`, `save_file` and `load_file` do.

Saving hands the params' own tensors to the recorder (no copy); the recorder converts them one at
a time while writing. Loading converts each recorded tensor to its param's dtype and device in
turn, so no second copy of the model is built, and lazy params are replaced without running
their initializers (a model built with lazy params only to load weights never initializes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from burn.foundations.dtype import DType
from burn.foundations.kind import Bool, Float, Int, Kind
from burn.module.param import Param, ParamId
from burn.record.errors import RecordError
from burn.record.items import ModuleRecord, ParamRecord, host_data, is_tensor, tensor_type

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device
    from burn.module.base import Module
    from burn.record.recorder import Recorder

M = TypeVar("M", bound="Module")


def into_record(module: Module) -> ModuleRecord:
    """The module's params by path, each as its id and its own tensor (not copied).

    Lazy params are initialized (their values are what gets saved).
    """
    params: dict[str, ParamRecord] = {}
    module.visit(lambda path, param: params.__setitem__(path, ParamRecord(str(param.id), param.val())))
    return ModuleRecord(params)


@dataclass
class RecordCheck:
    """How a module record fits a module: keys only one side has, and params whose recorded
    shape or kind differs from the module's."""

    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    mismatched: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.unexpected or self.mismatched)

    def describe(self) -> str:
        parts = []
        if self.missing:
            parts.append(f"missing keys (in the module, not the record): {', '.join(self.missing)}")
        if self.unexpected:
            parts.append(f"unexpected keys (in the record, not the module): {', '.join(self.unexpected)}")
        if self.mismatched:
            parts.append("mismatches: " + "; ".join(f"{p}: {why}" for p, why in self.mismatched.items()))
        return "; ".join(parts) or "the record fits the module"


def check_record(module: Module, record: Any) -> RecordCheck:
    """Compare a module record with a module by path, shape and kind (runs no initializer).

    Example:
        >>> check = check_record(model, model.into_record())  # doctest: +SKIP
        >>> check.ok  # doctest: +SKIP
        True
    """
    record = as_module_record(record)
    check = RecordCheck()
    params = dict(module.named_params())
    for path, param in params.items():
        rec = record.get(path)
        if rec is None:
            check.missing.append(path)
            continue
        dtype, shape = rec.dtype, rec.shape
        if shape != param.shape:
            check.mismatched[path] = f"record shape {list(shape)} vs module shape {list(param.shape)}"
        elif _kind_of(dtype) is not param.kind:
            check.mismatched[path] = (
                f"record dtype {dtype.value} ({_kind_of(dtype).name}) vs module kind {param.kind.name}"
            )
    check.unexpected = [path for path in record if path not in params]
    return check


def load_record(
    module: M, record: Any, *, strict: bool = True, allow_partial: bool = False, device: Device | None = None
) -> M:
    """A new module holding the record's params, with the record's ParamIds.

    Args:
        record: a `ModuleRecord` (or a mapping of path -> `ParamRecord` / tensor / `TensorData`).
        strict: unexpected keys (in the record, not the module) are an error; ``False`` ignores them.
        allow_partial: load what matches by path, shape and kind; other params keep their current
            value (lazy ones stay lazy). Without it, missing keys and mismatches are errors.
        device: put every param there (default: each param's own device).

    Each param keeps its dtype when it is initialized; a lazy one gets its backend's default dtype
    for its kind. Autodiff params come back as fresh graph leaves with the same require_grad.

    Raises:
        RecordError: listing every missing / unexpected key and every shape or kind mismatch.
    """
    return _load(module, as_module_record(record), strict, allow_partial, device, adopt=False)


def _load(
    module: M, record: ModuleRecord, strict: bool, allow_partial: bool, device: Device | None, *, adopt: bool
) -> M:
    """`load_record`; with `adopt`, the record is private to the caller (`load_file`), so its
    arrays (views into the file's buffer) are handed to the backend without a copy."""
    check = check_record(module, record)
    problems = (not allow_partial and (check.missing or check.mismatched)) or (strict and check.unexpected)
    if problems:
        hints = []
        if check.missing or check.mismatched:
            hints.append("allow_partial=True loads what matches")
        if check.unexpected:
            hints.append("strict=False ignores unexpected keys")
        if any(path.rpartition(".")[2] == "scales" for path in check.unexpected):
            # A quantized layer's params: the module must be quantized the same way first.
            hints.append(
                "the record holds quantized layers: load it into burn.quantization.quantize(model, scheme) "
                "with the scheme it was saved with"
            )
        first = (check.missing or check.unexpected or list(check.mismatched))[0]
        raise RecordError(
            f"record does not fit {type(module).__name__}: {check.describe()} ({'; '.join(hints)})",
            path=first,
        )
    skip = set(check.mismatched)

    def load(path: str, param: Param) -> Param:
        rec = record.get(path)
        if rec is None or path in skip:
            return param if device is None else param.to_device(device)
        try:
            tensor = _param_tensor(rec.tensor, param, device, adopt)
            pid = param.id if rec.id is None else ParamId.parse(rec.id)
        except RecordError as err:
            raise RecordError(err.reason, source=err.source, path=path) from err.__cause__
        except (ValueError, TypeError) as exc:  # DTypeError, DeviceError, a bad id...
            raise RecordError(f"cannot load into the module: {exc}", path=path) from exc
        return Param(pid, tensor, param.require_grad)

    return module.map(load)


def save_file(module: Module, path: str | os.PathLike[str], recorder: Recorder | None = None) -> Path:
    """Save the module's params with `recorder` (default: NamedMpkFileRecorder, full precision);
    the recorder adds its extension. Returns the path written."""
    from burn.record.recorder import default_recorder

    recorder = recorder if recorder is not None else default_recorder()
    return recorder.record(into_record(module), path)  # type: ignore[no-any-return]


_LOAD_OPTIONS = frozenset({"strict", "allow_partial", "limits"})


def load_file(
    module: M,
    path: str | os.PathLike[str] | bytes | bytearray | memoryview,
    recorder: Recorder | None = None,
    device: Device | None = None,
    **options: Any,
) -> M:
    """Load params saved by `save_file` (same recorder) into `module`, on `device` (default:
    where each param is). Options: ``strict``, ``allow_partial`` (see `load_record`) and
    ``limits`` (a `burn.Limits` for what the file may declare, see `Recorder.load`).

    Build the module with lazy params (as `Config.init` does) and no initializer runs."""
    from burn.record.recorder import default_recorder

    unknown = set(options) - _LOAD_OPTIONS
    if unknown:
        raise TypeError(
            f"load_file() got unexpected options {sorted(unknown)}; accepted: {sorted(_LOAD_OPTIONS)}"
        )
    recorder = recorder if recorder is not None else default_recorder()
    record = recorder.load(path, template=module, limits=options.get("limits"))
    if not isinstance(record, ModuleRecord):
        raise RecordError(
            f"the file holds a {type(record).__name__} record, not a module's params",
            source="<bytes>" if isinstance(path, (bytes, bytearray, memoryview)) else str(path),
        )
    # Tensors view the buffer read from the file: adopt them, unless that buffer is the caller's
    # own mutable memory (a bytearray they could write to later).
    adopt = not isinstance(path, (bytearray, memoryview))
    strict, allow_partial = options.get("strict", True), options.get("allow_partial", False)
    try:
        return _load(module, record, strict, allow_partial, device, adopt=adopt)
    except RecordError as err:  # name the file in fit errors too
        if isinstance(path, (bytes, bytearray, memoryview)):
            raise err.with_source("<bytes>") from err.__cause__
        raise err.with_source(str(recorder.file_path(path))) from err.__cause__


# -- helpers ------------------------------------------------------------------------------------
def as_module_record(record: Any) -> ModuleRecord:
    if isinstance(record, ModuleRecord):
        return record
    if isinstance(record, Mapping):
        params = {}
        for path, value in record.items():
            if isinstance(value, ParamRecord):
                params[path] = value
            elif is_tensor(value):
                params[path] = ParamRecord(None, value)
            else:
                raise RecordError(
                    f"expected a ParamRecord or tensor, got {type(value).__name__}", path=str(path)
                )
        return ModuleRecord(params)
    raise RecordError(
        f"load_record expects a module record (from into_record or a recorder), got {type(record).__name__}"
    )


def _kind_of(dtype: DType) -> Kind:
    return Kind.of(dtype)


def _param_tensor(source: Any, param: Param, device: Device | None, adopt: bool) -> Any:
    """`source` (a Tensor or TensorData) as a tensor of `param`'s dtype on the target device."""
    Tensor = tensor_type()
    target = device if device is not None else param.device
    owner: Backend | None = target.owner if target is not None else None
    dtype = _target_dtype(param, owner)
    if isinstance(source, Tensor) and owner is not None and source.backend is owner:
        tensor = source if source.device == target else source.to_device(target)
        return tensor if dtype is None or tensor.dtype is dtype else tensor.cast(dtype)
    data = host_data(source)
    if adopt and owner is not None and dtype is not None and owner.capabilities.supports(dtype):
        # `Tensor.from_data` would copy (it cannot know nobody else holds the array); converting
        # to another dtype allocates anyway. Either way each param is built on its own, in turn.
        from burn.tensor._base import wrap

        data = data.convert(dtype)
        kind = param.kind
        if kind is Float:
            return wrap(owner.float_from_data(data, target), owner, Float)
        if kind is Int:
            return wrap(owner.int_from_data(data, target), owner, Int)
        return wrap(owner.bool_from_data(data, target), owner, Bool)
    if dtype is None:
        return Tensor.from_data(data, device=target, kind=param.kind)
    return Tensor.from_data(data, device=target, dtype=dtype)


def _target_dtype(param: Param, owner: Backend | None) -> DType | None:
    # An initialized param keeps its dtype (float64 params in a float32 model stay float64);
    # reading a lazy param's dtype would run its initializer, so it gets the backend default.
    if param.is_initialized:
        dtype: DType = param.val().dtype
        if owner is None or owner.capabilities.supports(dtype):
            return dtype
    if owner is None:
        return None
    kind = param.kind
    if kind is Float:
        return owner.float_dtype
    if kind is Int:
        return owner.int_dtype
    return DType.BOOL if kind is Bool else None
