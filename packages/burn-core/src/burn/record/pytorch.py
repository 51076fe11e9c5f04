"""Load a PyTorch ``state_dict`` saved as safetensors into a burn module.

The PyTorch key of each burn param is its path with the field renamed by the table below (by
the class of the module that owns the field; ``BatchNorm1d``/``BatchNorm2d`` match
``BatchNorm``), after your regex remaps have been applied to the file's keys:

=============================  ===============  ===================  ==========================
burn layer (owner class)       burn field       PyTorch field        conversion
=============================  ===============  ===================  ==========================
Linear                         weight           weight               transposed: burn stores
                                                                     ``[d_in, d_out]``, PyTorch
                                                                     ``[out, in]``
Linear, Conv*, Embedding       bias / weight    bias / weight        none (same layouts)
BatchNorm                      gamma / beta     weight / bias        none
BatchNorm                      running_mean     running_mean         none
BatchNorm                      running_var      running_var          none
LayerNorm, GroupNorm,          gamma / beta     weight / bias        none
InstanceNorm, RmsNorm
=============================  ===============  ===================  ==========================

PyTorch's ``num_batches_tracked`` buffers are skipped. Other fields keep their names. Pass
``layer_fields`` to extend or override the table for your own layers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from burn.record._io import read_file
from burn.record._tree import tensor_data
from burn.record.encodings import read_safetensors_header
from burn.record.errors import RecordError
from burn.record.items import ParamRecord

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.module.base import Module

M = TypeVar("M", bound="Module")

_NORM = {"gamma": "weight", "beta": "bias"}
LAYER_FIELDS: dict[str, dict[str, str]] = {
    "Linear": {},
    "BatchNorm": dict(_NORM),
    "LayerNorm": dict(_NORM),
    "GroupNorm": dict(_NORM),
    "InstanceNorm": dict(_NORM),
    "RmsNorm": dict(_NORM),
}
"""Owner class name -> {burn field: PyTorch field} (fields not listed keep their name)."""

TRANSPOSED: frozenset[tuple[str, str]] = frozenset({("Linear", "weight")})
"""(owner class, burn field) pairs whose 2-D tensors PyTorch stores transposed."""

SKIP_KEYS: tuple[str, ...] = (r"(^|\.)num_batches_tracked$",)


def load_pytorch_safetensors(
    path: str | os.PathLike[str],
    module: M,
    *,
    key_remap: Iterable[tuple[str, str]] = (),
    layer_fields: Mapping[str, Mapping[str, str]] | None = None,
    transpose_linear: bool = True,
    skip_keys: Iterable[str] = SKIP_KEYS,
    strict: bool = True,
    allow_partial: bool = False,
    device: Device | None = None,
) -> M:
    """`module` with its params read from a PyTorch state dict saved with safetensors.

    Args:
        path: the ``.safetensors`` file (e.g. from ``safetensors.torch.save_file(model.state_dict(), path)``).
        module: the burn module to fill (built with lazy params, no initializer runs).
        key_remap: ``(regex, replacement)`` pairs applied in order to every key of the file with
            ``re.sub`` before matching, e.g. ``[(r"^encoder\\.layer\\.(\\d+)", r"layers.\\1")]``.
        layer_fields: extra entries for the field-name table (owner class name -> {burn: torch}).
        transpose_linear: transpose Linear weights (PyTorch ``[out, in]`` -> burn ``[in, out]``).
        skip_keys: regexes of file keys to ignore (default: ``num_batches_tracked``).
        strict, allow_partial, device: as in `Module.load_record`.

    Returns:
        A new module; params keep their ParamIds (the file has none). Values are converted to
        each param's dtype.

    Raises:
        RecordError: malformed file, or keys / shapes that do not fit (each missing param is
            listed with the PyTorch key it was looked up as).

    Example:
        >>> model = load_pytorch_safetensors("resnet.safetensors", ResNetConfig().init(device),
        ...                                  key_remap=[(r"^fc\\.", "head.")])  # doctest: +SKIP
    """
    from burn.module.persistence import _load, as_module_record

    source = str(path)
    buf = read_file(Path(path))
    try:
        entries, _, data_start = read_safetensors_header(buf)
    except RecordError as err:
        raise err.with_source(source) from err.__cause__
    remaps = [(re.compile(pattern), repl) for pattern, repl in key_remap]
    skips = [re.compile(pattern) for pattern in skip_keys]
    table = {name: dict(fields) for name, fields in LAYER_FIELDS.items()}
    for name, fields in (layer_fields or {}).items():
        table.setdefault(name, {}).update(fields)

    tensors: dict[str, Any] = {}
    for key, (dtype, shape, count, begin, end) in entries.items():
        new_key = key
        for pattern, repl in remaps:
            new_key = pattern.sub(repl, new_key)
        if any(p.search(new_key) for p in skips):
            continue
        if new_key in tensors:
            raise RecordError(
                f"two keys of the file map to {new_key!r} after key_remap", source=source, path=key
            )
        data = tensor_data(buf[data_start + begin : data_start + end], dtype, shape, count, key)
        tensors[new_key] = data

    record: dict[str, ParamRecord] = {}
    looked_up: dict[str, str] = {}
    for burn_path, (owner, field) in _param_owners(module).items():
        layer = _layer_name(owner, table)
        torch_field = table.get(layer, {}).get(field, field) if layer else field
        torch_key = burn_path[: len(burn_path) - len(field)] + torch_field
        looked_up[burn_path] = torch_key
        data = tensors.pop(torch_key, None)
        if data is None:
            continue
        value: Any = data
        if transpose_linear and layer and (layer, field) in TRANSPOSED and len(data.shape) == 2:
            value = data.array.T  # a view: made contiguous when this param is loaded, not before
        record[burn_path] = ParamRecord(None, value)
    for key, data in tensors.items():  # left over: unexpected keys, reported under their own names
        record.setdefault(key, ParamRecord(None, data))
    try:
        # The tensors view our own buffer of the file: the backend may adopt them without a copy.
        return _load(module, as_module_record(record), strict, allow_partial, device, adopt=True)
    except RecordError as err:
        missing = [p for p in looked_up if p not in record]
        detail = ""
        if missing:
            detail = " (PyTorch keys looked up: " + ", ".join(f"{p} <- {looked_up[p]}" for p in missing) + ")"
        raise RecordError(err.reason + detail, source=source, path=err.path) from err


def _layer_name(owner: Any, table: Mapping[str, Any]) -> str | None:
    for cls in type(owner).__mro__:
        name = cls.__name__
        if name in table:
            return name
        base = re.sub(r"\d+d$", "", name)  # BatchNorm2d -> BatchNorm
        if base in table:
            return base
    return None


def _param_owners(module: Module) -> dict[str, tuple[Any, str]]:
    """Each param path -> (the module that holds it, the path relative to that module), in the
    same depth-first order as `Module.visit`."""
    from burn.module.base import Module
    from burn.module.param import Param

    owners: dict[str, tuple[Any, str]] = {}

    def walk(value: Any, path: str, owner: Any, rel: str) -> None:
        if isinstance(value, Param):
            owners[path] = (owner, rel)
        elif isinstance(value, Module):
            for name, child in vars(value).items():
                walk(child, f"{path}.{name}" if path else name, value, name)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}.{i}", owner, f"{rel}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}", owner, f"{rel}.{key}")

    walk(module, "", None, "")
    return owners
