"""Load a PyTorch ``state_dict`` into a burn module: from a ``torch.save`` checkpoint
(`load_pytorch`: ``.pt`` / ``.pth``, read by `burn.record.pytorch_pickle` without torch and
without running code) or from safetensors (`load_pytorch_safetensors`). Both feed one path,
`load_state_dict`, so both map keys the same way.

And back: `pytorch_state_dict` is a burn module's state dict under PyTorch's names and layouts
(through the same adapters, each rule inverted), `save_pytorch` writes it as ``torch.save`` does
(`burn.record.pytorch_writer`, without torch) and `save_pytorch_safetensors` as safetensors.

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType, from_numpy_dtype, to_numpy_dtype
from burn.foundations.limits import Limits, resolve_limits
from burn.record._io import PositionWriter, atomic_write, read_file
from burn.record._tree import TensorRef, tensor_data
from burn.record.encodings import read_safetensors_header, write_safetensors
from burn.record.errors import RecordError
from burn.record.items import ParamRecord, TensorLike
from burn.record.pytorch_adapters import (
    ADAPTERS,
    SKIP_KEYS,
    Source,
    adapters_with,
    take,
    torch_sources,
    torch_state,
)
from burn.record.pytorch_pickle import TorchTensor, open_checkpoint
from burn.record.pytorch_quantized import expand_quantized
from burn.record.pytorch_writer import write_checkpoint

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
    limits: Limits | None = None,
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
        limits: the bounds on what the file may declare (`burn.Limits`; default: the defaults):
            its size, its tensors' ranks and elements, each and in all, checked before they are
            read. A FIFO, device or directory is refused before it is opened.

    Returns:
        A new module; params keep their ParamIds (the file has none). Values are converted to
        each param's dtype.

    Raises:
        RecordError: malformed file, a limit broken (the message names the field to raise), or
            keys / shapes that do not fit (each missing param is listed with the PyTorch key it
            was looked up as).

    Example:
        >>> model = load_pytorch_safetensors("resnet.safetensors", ResNetConfig().init(device),
        ...                                  key_remap=[(r"^fc\\.", "head.")])  # doctest: +SKIP
    """
    source = str(path)
    limits = resolve_limits(limits, "load_pytorch_safetensors(limits=)")
    buf = read_file(Path(path), limits)
    try:
        entries, _, data_start = read_safetensors_header(buf, limits)
    except RecordError as err:
        raise err.with_source(source) from err.__cause__
    tensors = {
        key: tensor_data(buf[data_start + begin : data_start + end], dtype, shape, count, key)
        for key, (dtype, shape, count, begin, end) in entries.items()
    }
    # The tensors view our own buffer of the file: the backend may adopt them without a copy.
    return load_state_dict(
        tensors,
        module,
        source=source,
        key_remap=key_remap,
        layer_fields=layer_fields,
        transpose_linear=transpose_linear,
        skip_keys=skip_keys,
        strict=strict,
        allow_partial=allow_partial,
        device=device,
    )


def load_pytorch(
    path: str | os.PathLike[str],
    module: M,
    *,
    key: str | Sequence[str] | None = None,
    key_remap: Iterable[tuple[str, str]] = (),
    layer_fields: Mapping[str, Mapping[str, str]] | None = None,
    transpose_linear: bool = True,
    skip_keys: Iterable[str] = SKIP_KEYS,
    strict: bool = True,
    allow_partial: bool = False,
    device: Device | None = None,
    limits: Limits | None = None,
) -> M:
    """`module` with its params read from a PyTorch checkpoint written by ``torch.save``.

    Reads the zip format (the default since PyTorch 1.6) and the legacy one
    (``_use_new_zipfile_serialization=False``) without importing torch and without running code
    from the file: the pickle inside may name only tensor rebuilds, storages, dtypes, ordered
    dicts and plain containers; any other global is refused (`RecordError` naming it) before
    anything is called. Each tensor's bytes are read from the file when its param is loaded,
    one at a time, so loading needs about the model's size in memory plus one tensor.

    Args:
        path: the ``.pt`` / ``.pth`` file (e.g. from ``torch.save(model.state_dict(), path)``).
        module: the burn module to fill (built with lazy params, no initializer runs).
        key: where the state dict is in a checkpoint that holds more than one (``"model"`` of
            ``{"model": ..., "optimizer": ..., "epoch": 3}``; a sequence of keys reaches into
            nested dicts). Without it: the saved object itself if it is a state dict, else its
            one top-level value that is (the error lists the top-level keys when there are
            several or none).
        key_remap, layer_fields, transpose_linear, skip_keys: as in `load_pytorch_safetensors`
            (the same layer adapters map both formats).
        strict, allow_partial, device: as in `Module.load_record`.
        limits: the bounds on what the file may declare (`burn.Limits`; default: the defaults):
            its size, its pickle's bytes, opcodes, memo entries, object nodes (shared references
            counted as copies) and nesting, its tensors' ranks and elements, each and in all.
            Checked before anything is unpickled or read; a FIFO, device or directory is refused
            before it is opened.

    Returns:
        A new module; params keep their ParamIds (the file has none). Values are converted to
        each param's dtype (float16, bfloat16, float64, ints and bool are read). Quantized
        tensors (``torch.ao.quantization`` models, qint8 / quint8, per tensor or per channel)
        load into burn's quantized layers (`burn.record.pytorch_quantized`).

    Raises:
        RecordError: naming the file: not a checkpoint, a truncated or corrupted one, a
            forbidden global in its pickle, a missing storage record, sizes that disagree, a
            limit broken (the message names the field to raise), no single state dict, or keys /
            shapes that do not fit the module.

    Example:
        >>> model = load_pytorch("checkpoint.pt", ResNetConfig().init(device), key="model",
        ...                      key_remap=[(r"^fc\\.", "head.")])  # doctest: +SKIP
    """
    source = str(path)
    with open_checkpoint(path, limits=limits) as checkpoint:
        try:
            tensors = expand_quantized(checkpoint.state_dict(key))
        except RecordError as err:
            raise err.with_source(source) from err
        return load_state_dict(
            tensors,
            module,
            source=source,
            key_remap=key_remap,
            layer_fields=layer_fields,
            transpose_linear=transpose_linear,
            skip_keys=skip_keys,
            strict=strict,
            allow_partial=allow_partial,
            device=device,
        )


class _LazyParamRecord(ParamRecord):
    """A param read from a checkpoint only when its tensor is asked for (by the load), cut and
    transposed by its adapter rule; shape and dtype come from the metadata, without a read."""

    __slots__ = ("_source", "_where", "_path", "_shape", "_dtype")

    def __init__(self, source: TorchTensor, where: Source | None, path: str) -> None:
        self.id = None
        self._source = source
        self._where = where
        self._path = path
        self._dtype = source.dtype
        if where is not None and (where.part or where.transpose):
            # `take` on a zero-stride stand-in: the same shape rules and errors, no memory.
            stand_in = np.lib.stride_tricks.as_strided(
                np.zeros(1, np.uint8), source.shape, (0,) * len(source.shape)
            )
            self._shape = tuple(take(_Data(stand_in), where, path).shape)
        else:
            self._shape = source.shape

    @property
    def tensor(self) -> TensorLike:  # type: ignore[override]
        data = self._source.read()
        if self._where is not None and (self._where.part or self._where.transpose):
            return take(data, self._where, self._path)  # type: ignore[no-any-return]
        return data

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> DType:
        return self._dtype


class _Data(NamedTuple):
    """What `take` reads: an object with ``.array``."""

    array: np.ndarray


def load_state_dict(
    tensors: Mapping[str, TensorData | TorchTensor],
    module: M,
    *,
    source: str,
    key_remap: Iterable[tuple[str, str]] = (),
    layer_fields: Mapping[str, Mapping[str, str]] | None = None,
    transpose_linear: bool = True,
    skip_keys: Iterable[str] = SKIP_KEYS,
    strict: bool = True,
    allow_partial: bool = False,
    device: Device | None = None,
) -> M:
    """The path both formats share: `tensors` (PyTorch key -> `TensorData` already in memory,
    or a `TorchTensor` read when its param is loaded) remapped, matched to `module`'s params
    through the layer adapters, and loaded. Errors name `source`.

    The `TensorData` values must be private to the caller (the backend adopts them unchanged).
    """
    from burn.module.persistence import _load, as_module_record

    remaps = [(re.compile(pattern), repl) for pattern, repl in key_remap]
    skips = [re.compile(pattern) for pattern in skip_keys]
    try:
        sources = torch_sources(module, adapters_with(layer_fields, transpose_linear=transpose_linear))
    except RecordError as err:
        raise err.with_source(source) from err

    renamed: dict[str, TensorData | TorchTensor] = {}
    for key, value in tensors.items():
        new_key = key
        for pattern, repl in remaps:
            new_key = pattern.sub(repl, new_key)
        if any(p.search(new_key) for p in skips):
            continue
        if new_key in renamed:
            raise RecordError(
                f"two keys of the file map to {new_key!r} after key_remap", source=source, path=key
            )
        renamed[new_key] = value

    record: dict[str, ParamRecord] = {}
    looked_up: dict[str, str] = {}
    used: set[str] = set()
    try:
        for burn_path, where in sources.items():
            looked_up[burn_path] = where.key
            found = renamed.get(where.key)
            if found is None:
                continue
            used.add(where.key)
            record[burn_path] = _param_record(found, where, burn_path)
        for key, value in renamed.items():  # left over: unexpected keys, reported under their own names
            if key not in used:
                record.setdefault(key, _param_record(value, None, key))
    except RecordError as err:
        raise err.with_source(source) from err
    try:
        return _load(module, as_module_record(record), strict, allow_partial, device, adopt=True)
    except RecordError as err:
        missing = [p for p in looked_up if p not in record]
        detail = ""
        if missing:
            detail = " (PyTorch keys looked up: " + ", ".join(f"{p} <- {looked_up[p]}" for p in missing) + ")"
        raise RecordError(err.reason + detail, source=err.source or source, path=err.path) from err


def _param_record(value: TensorData | TorchTensor, where: Source | None, path: str) -> ParamRecord:
    if isinstance(value, TorchTensor):
        return _LazyParamRecord(value, where, path)
    if where is not None and (where.part or where.transpose):
        return ParamRecord(None, take(value, where, path))
    return ParamRecord(None, value)


# -- back to PyTorch ------------------------------------------------------------------------------
def pytorch_state_dict(
    module: Module,
    *,
    key_remap: Iterable[tuple[str, str]] = (),
    layer_fields: Mapping[str, Mapping[str, str]] | None = None,
    transpose_linear: bool = True,
    float_dtype: DType | str | None = None,
) -> dict[str, np.ndarray]:
    """`module`'s params as the ``state_dict`` of the equivalent ``torch.nn`` model: PyTorch's
    keys, layouts and buffers, as NumPy arrays (bfloat16 as ``ml_dtypes.bfloat16``).

    The inverse of what `load_pytorch` maps, through the same layer adapters: `Linear` weights
    transposed to ``[out, in]``, norms' ``gamma``/``beta`` as ``weight``/``bias``, the
    query/key/value projections of `MultiHeadAttention` packed into ``in_proj_weight`` /
    ``in_proj_bias``, recurrent gates packed into ``weight_ih_l<k>[_reverse]`` and friends in
    PyTorch's gate order, the transformer layers' PyTorch names, and ``num_batches_tracked``
    (int64 ``0``) beside each `BatchNorm`'s running statistics, since PyTorch's strict
    ``load_state_dict`` expects it. Params no adapter names keep their burn paths (`Conv2d`,
    `Embedding` and `BatchNorm`'s ``running_mean`` / ``running_var`` have PyTorch's names and
    layouts already).

    Args:
        module: the burn module (lazy params are initialized, as by a forward).
        key_remap: ``(regex, replacement)`` pairs applied in order to every PyTorch key with
            ``re.sub`` (the mirror of `load_pytorch`'s, which rewrites file keys to burn's), e.g.
            ``[(r"^", "model.")]`` to nest the state dict under ``model.``.
        layer_fields, transpose_linear: as in `load_pytorch_safetensors`; a file saved with some
            options loads back with the same ones.
        float_dtype: convert floating-point params to this dtype (``"float16"``,
            ``"bfloat16"``...); ints and bools are kept. Default: each param's own dtype.

    Returns:
        PyTorch key -> C-contiguous array, in the order of the module's params.

    Raises:
        RecordError: a layer with no PyTorch counterpart (a `Gru` with ``reset_after=False``, a
            `MultiHeadAttention` with a bias on some projections only), or two keys made equal by
            `key_remap`.

    Example:
        >>> import burn
        >>> from burn import nn
        >>> from burn.record import pytorch_state_dict
        >>> device = burn.backend("ndarray").default_device()
        >>> state = pytorch_state_dict(nn.LinearConfig(3, 2).init(device))
        >>> {key: value.shape for key, value in state.items()}
        {'weight': (2, 3), 'bias': (2,)}
    """
    table = adapters_with(layer_fields, transpose_linear=transpose_linear)
    state = torch_state(module, table)
    remaps = [(re.compile(pattern), repl) for pattern, repl in key_remap]
    target = None if float_dtype is None else to_numpy_dtype(DType.from_any(float_dtype))
    out: dict[str, np.ndarray] = {}
    for key, array in state.items():
        new_key = key
        for pattern, repl in remaps:
            new_key = pattern.sub(repl, new_key)
        if new_key in out:
            raise RecordError(f"two PyTorch keys map to {new_key!r} after key_remap", path=key)
        if target is not None and from_numpy_dtype(array.dtype).is_float:
            array = array.astype(target)
        out[new_key] = np.ascontiguousarray(array) if array.ndim else array
    return out


def save_pytorch(
    module: Module,
    path: str | os.PathLike[str],
    *,
    key_remap: Iterable[tuple[str, str]] = (),
    layer_fields: Mapping[str, Mapping[str, str]] | None = None,
    transpose_linear: bool = True,
    float_dtype: DType | str | None = None,
) -> Path:
    """Write `module`'s `pytorch_state_dict` as ``torch.save(model.state_dict(), path)`` does,
    without torch: ``torch.load(path, weights_only=True)`` returns an ``OrderedDict`` of tensors
    that the equivalent ``torch.nn`` model loads with ``load_state_dict(..., strict=True)``.

    The file is written next to `path` and renamed over it once complete, so a failed save
    leaves any previous file untouched.

    Args:
        module: the burn module.
        path: the file to write (``.pt`` / ``.pth`` by convention; used as given).
        key_remap, layer_fields, transpose_linear, float_dtype: as in `pytorch_state_dict`.

    Returns:
        `path` as a `Path`.

    Raises:
        RecordError: naming the file: it cannot be written (a missing or read-only directory),
            or the module has no PyTorch counterpart (`pytorch_state_dict`).

    Example:
        >>> import burn, tempfile, pathlib
        >>> from burn import nn
        >>> from burn.record import load_pytorch, save_pytorch
        >>> device = burn.backend("ndarray").default_device()
        >>> model = nn.LinearConfig(3, 2).init(device)
        >>> path = save_pytorch(model, pathlib.Path(tempfile.mkdtemp()) / "linear.pt")
        >>> # in PyTorch: torch.nn.Linear(3, 2).load_state_dict(torch.load(path, weights_only=True))
        >>> back = load_pytorch(path, nn.LinearConfig(3, 2).init(device))
        >>> bool((back.weight.val() == model.weight.val()).all().into_scalar())
        True
    """
    options = dict(key_remap=key_remap, layer_fields=layer_fields, transpose_linear=transpose_linear)
    return _save_state(module, path, write_checkpoint, float_dtype=float_dtype, **options)


def save_pytorch_safetensors(
    module: Module,
    path: str | os.PathLike[str],
    *,
    key_remap: Iterable[tuple[str, str]] = (),
    layer_fields: Mapping[str, Mapping[str, str]] | None = None,
    transpose_linear: bool = True,
    float_dtype: DType | str | None = None,
) -> Path:
    """Write `module`'s `pytorch_state_dict` as a safetensors file, as
    ``safetensors.torch.save_file(model.state_dict(), path, metadata={"format": "pt"})`` does:
    ``safetensors.torch.load_file(path)`` gives a state dict the equivalent ``torch.nn`` model
    loads with ``strict=True`` (and Hugging Face loaders read the ``"format": "pt"`` metadata).

    Unlike `burn.record.SafetensorsFileRecorder` (burn's paths and layouts, with burn's metadata
    so that a burn module loads it back with its param ids), this file holds PyTorch's keys and
    layouts only; `load_pytorch_safetensors` loads it back into burn. Written atomically, like
    `save_pytorch`.

    Args:
        module: the burn module.
        path: the file to write (``.safetensors`` by convention; used as given).
        key_remap, layer_fields, transpose_linear, float_dtype: as in `pytorch_state_dict`.

    Returns:
        `path` as a `Path`.

    Raises:
        RecordError: as `save_pytorch`.

    Example:
        >>> import burn, tempfile, pathlib
        >>> from burn import nn
        >>> from burn.record import load_pytorch_safetensors, save_pytorch_safetensors
        >>> device = burn.backend("ndarray").default_device()
        >>> model = nn.LayerNormConfig(4).init(device)
        >>> path = save_pytorch_safetensors(model, pathlib.Path(tempfile.mkdtemp()) / "norm.safetensors")
        >>> back = load_pytorch_safetensors(path, nn.LayerNormConfig(4).init(device))
    """

    def write(f: Any, state: dict[str, np.ndarray]) -> None:
        refs = [
            TensorRef(array, from_numpy_dtype(array.dtype), tuple(array.shape), key)
            for key, array in state.items()
        ]
        write_safetensors(PositionWriter(f), refs, {"format": "pt"})

    options = dict(key_remap=key_remap, layer_fields=layer_fields, transpose_linear=transpose_linear)
    return _save_state(module, path, write, float_dtype=float_dtype, **options)


def _save_state(
    module: Module,
    path: str | os.PathLike[str],
    write: Callable[[Any, dict[str, np.ndarray]], None],
    **options: Any,
) -> Path:
    """`pytorch_state_dict(module, **options)` written by ``write(file, state)`` to `path`,
    atomically; errors become `RecordError`s naming the file."""
    target = Path(path)
    try:
        state = pytorch_state_dict(module, **options)
        atomic_write(target, lambda f: write(f, state))
    except RecordError as err:
        raise err.with_source(str(target)) from err
    except OSError as exc:
        raise RecordError(f"cannot write: {exc.strerror or exc}", source=str(target)) from exc
    return target
