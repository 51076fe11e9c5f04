"""Load a PyTorch ``state_dict`` saved as safetensors into a burn module.

The PyTorch key of each burn param comes from the layer adapters of
`burn.record.pytorch_adapters` (the table of ``docs/guides/pytorch-weights.md`` is generated from
them), after your regex remaps have been applied to the file's keys: `Linear` weights are
transposed (burn ``[d_in, d_out]``, PyTorch ``[out, in]``), norms' ``gamma``/``beta`` are
PyTorch's ``weight``/``bias``, `MultiHeadAttention` takes its query/key/value projections from
row blocks of PyTorch's packed ``in_proj_weight``/``in_proj_bias``, the recurrent layers take
their gates from ``weight_ih_l<k>[_reverse]`` and friends (PyTorch's gate order: LSTM ``i, f,
g, o``, GRU ``r, z, n``), and the transformer layers map PyTorch's ``linear1``/``linear2``/
``norm1``/``norm2``/``self_attn`` names (the norms by `norm_first`: see the guide).

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
from burn.record.pytorch_adapters import ADAPTERS, SKIP_KEYS, adapters_with, take, torch_sources

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.module.base import Module

M = TypeVar("M", bound="Module")

LAYER_FIELDS: dict[str, dict[str, str]] = {
    a.layer: {r.burn: r.torch for r in a.rules if "." not in r.burn and r.part is None and not r.sets}
    for a in ADAPTERS
    if a.layer in ("Linear", "BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "RmsNorm")
}
"""Owner class name -> {burn field: PyTorch field} of the simple layers (a view of `ADAPTERS`)."""

TRANSPOSED: frozenset[tuple[str, str]] = frozenset({("Linear", "weight")})
"""(owner class, burn field) pairs whose 2-D tensors PyTorch stores transposed."""


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
        layer_fields: extra renames by layer class (owner class name -> {burn field: torch field}),
            taking precedence over the built-in adapters.
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
    try:
        sources = torch_sources(module, adapters_with(layer_fields, transpose_linear=transpose_linear))
    except RecordError as err:
        raise err.with_source(source) from err

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
    used: set[str] = set()
    for burn_path, where in sources.items():
        looked_up[burn_path] = where.key
        found = tensors.get(where.key)
        if found is None:
            continue
        used.add(where.key)
        try:
            value: Any = take(found, where, burn_path) if where.part or where.transpose else found
        except RecordError as err:
            raise err.with_source(source) from err
        record[burn_path] = ParamRecord(None, value)
    for key, data in tensors.items():  # left over: unexpected keys, reported under their own names
        if key not in used:
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
