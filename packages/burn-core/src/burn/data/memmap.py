"""A dataset stored on disk as memory-mapped NumPy arrays: `write_memmap` and `MemmapDataset`.

The format is a folder holding one ``.npy`` file per field (item ``i`` of a field is row ``i`` of
its array; every row has the field's fixed shape and dtype) and ``index.json``::

    {"format": "burn-memmap", "version": 1, "length": 50000,
     "fields": [{"name": "image", "file": "image.npy", "dtype": "uint8", "shape": [3, 32, 32]}, ...]}

Reading opens the arrays with ``numpy.load(mmap_mode="r")``: only the rows read are paged in, so a
dataset larger than memory works, and worker processes share the operating system's page cache.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from burn.data.dataset import _position, check_dataset

FORMAT = "burn-memmap"
VERSION = 1
INDEX = "index.json"


def write_memmap(
    folder: str | os.PathLike[str],
    source: Any,
    *,
    fields: Sequence[str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Writes a dataset of fixed-shape NumPy fields to `folder`, for `MemmapDataset`.

    Everything is written into a temporary folder next to `folder`, flushed to disk, then renamed
    to `folder`: a crash leaves either no dataset or a complete one, never a partial one. With
    `overwrite`, an existing `folder` is replaced the same way (moved aside, then deleted).

    Args:
        folder: the folder to create.
        source: a mapping ``{field name: array}`` (arrays with the same number of rows), or a
            dataset whose items are tuples of arrays (or single arrays), written item by item so
            it need not fit in memory. The first item sets each field's shape and dtype.
        fields: the field names for a dataset source (default ``field0, field1, ...``).
        overwrite: replace an existing `folder`.

    Returns:
        The folder's path.

    Example:
        >>> import numpy as np, tempfile, os
        >>> folder = os.path.join(tempfile.mkdtemp(), "digits")
        >>> _ = write_memmap(folder, {"x": np.zeros((4, 2), np.float32), "y": np.arange(4)})
        >>> ds = MemmapDataset(folder)
        >>> len(ds), ds[3][1], ds.fields
        (4, np.int64(3), ('x', 'y'))
    """
    target = Path(folder)
    if target.exists() and not overwrite:
        raise FileExistsError(f"write_memmap: {target} already exists (pass overwrite=True to replace it)")
    target.parent.mkdir(parents=True, exist_ok=True)
    columns: Mapping[str, Any] | None = source if isinstance(source, Mapping) else None
    if columns is not None:
        if fields is not None:
            raise ValueError("write_memmap: fields= names a dataset's fields; a mapping names its own")
        names = [str(name) for name in columns]
        arrays = [np.asarray(a) for a in columns.values()]
        if not arrays:
            raise ValueError("write_memmap: the mapping has no fields")
        for name, array in zip(names, arrays, strict=True):
            if array.ndim == 0:
                raise ValueError(f"write_memmap: field {name!r} is a scalar; every field needs rows")
        lengths = {name: len(a) for name, a in zip(names, arrays, strict=True)}
        if len(set(lengths.values())) != 1:
            raise ValueError(f"write_memmap: fields must have the same number of rows, got {lengths}")
        length = len(arrays[0])
    else:
        dataset = check_dataset(source, "write_memmap: source")
        length = len(dataset)
        if length == 0:
            raise ValueError("write_memmap: the dataset is empty; its first item sets the fields")
        first = dataset[0]
        width = len(first) if isinstance(first, tuple | list) else 1
        names = list(fields) if fields is not None else [f"field{k}" for k in range(width)]
        if len(names) != width:
            raise ValueError(f"write_memmap: {len(names)} field names for items of {width} fields")
        arrays = [np.asarray(v) for v in (first if isinstance(first, tuple | list) else (first,))]
    for name in names:
        # the name becomes a file name: keep it to one plain path component
        if not name or name != Path(name).name or name.startswith("."):
            raise ValueError(f"write_memmap: field name {name!r} cannot be a file name in the folder")
    if len(set(names)) != len(names):
        raise ValueError(f"write_memmap: field names repeat: {names}")
    for name, array in zip(names, arrays, strict=True):
        if array.dtype.hasobject or array.dtype.fields is not None:
            raise TypeError(f"write_memmap: field {name!r} has dtype {array.dtype}; only plain numbers")

    staging = target.parent / f".{target.name}.tmp-{uuid.uuid4().hex}"
    staging.mkdir()
    try:
        spec: list[dict[str, Any]] = []
        for name, array in zip(names, arrays, strict=True):
            shape = array.shape[1:] if columns is not None else array.shape
            spec.append({"name": name, "file": f"{name}.npy", "dtype": array.dtype.str, "shape": list(shape)})
        outputs = [
            np.lib.format.open_memmap(
                staging / f["file"], mode="w+", dtype=np.dtype(f["dtype"]), shape=(length, *f["shape"])
            )
            for f in spec
        ]
        if columns is not None:
            for out, array in zip(outputs, arrays, strict=True):
                out[...] = array
        else:
            for i in range(length):
                item = dataset[i] if i else first
                values = item if isinstance(item, tuple | list) else (item,)
                if len(values) != len(outputs):
                    raise ValueError(
                        f"write_memmap: item {i} has {len(values)} fields, item 0 has {len(outputs)}"
                    )
                for f, out, value in zip(spec, outputs, values, strict=True):
                    value = np.asarray(value)
                    if value.shape != out.shape[1:]:
                        raise ValueError(
                            f"write_memmap: field {f['name']!r} of item {i} has shape {list(value.shape)}, "
                            f"item 0's has {f['shape']}: every item's field must have one shape"
                        )
                    out[i] = value
        for out in outputs:
            out.flush()
        outputs.clear()  # closes the maps before the rename
        index = {"format": FORMAT, "version": VERSION, "length": length, "fields": spec}
        (staging / INDEX).write_text(json.dumps(index, indent=1))
        for path in staging.iterdir():
            _fsync(path)
        _fsync(staging)
        if target.exists():
            old = target.parent / f".{target.name}.old-{uuid.uuid4().hex}"
            os.replace(target, old)
            os.replace(staging, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, target)
        _fsync(target.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot fsync a folder; the rename is still atomic
        pass
    finally:
        os.close(fd)


def _copy(row: Any) -> Any:
    """A row out of the map as an in-memory array (a scalar field's row is a NumPy scalar already)."""
    return np.array(row) if isinstance(row, np.ndarray) else row


class MemmapDataset:
    """A folder written by `write_memmap`, read through memory maps.

    Item ``i`` is the tuple of every field's row ``i`` (or that row alone for one field), copied
    out of the map. Pickling sends the folder's path, not the data: worker processes reopen it.

    Args:
        folder: the folder.
        fields: the fields to read, in this order (default: all, in the written order).

    Raises:
        FileNotFoundError: no such folder, or a file the index names is missing.
        ValueError: the index is not valid JSON or not this format, or a file's array does not
            match what the index says.

    Example:
        >>> import numpy as np, tempfile, os
        >>> folder = write_memmap(os.path.join(tempfile.mkdtemp(), "d"), {"a": np.arange(6).reshape(3, 2)})
        >>> MemmapDataset(folder)[1].tolist()
        [2, 3]
    """

    def __init__(self, folder: str | os.PathLike[str], fields: Sequence[str] | None = None) -> None:
        self.folder = Path(folder)
        self._requested = None if fields is None else tuple(fields)
        self._open()

    def _open(self) -> None:
        folder = self.folder
        if not folder.is_dir():
            raise FileNotFoundError(f"MemmapDataset: {folder} is not a folder")
        index_path = folder / INDEX
        if not index_path.is_file():
            raise FileNotFoundError(
                f"MemmapDataset: {folder} has no {INDEX}: not written by write_memmap (or not completely)"
            )
        try:
            index = json.loads(index_path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"MemmapDataset: {index_path} is not valid JSON: {error}") from None
        if not isinstance(index, dict) or index.get("format") != FORMAT:
            raise ValueError(f"MemmapDataset: {index_path} is not a {FORMAT} index")
        if index.get("version") != VERSION:
            raise ValueError(
                f"MemmapDataset: {index_path} has version {index.get('version')!r}; this reads {VERSION}"
            )
        try:
            length = int(index["length"])
            spec = {str(f["name"]): f for f in index["fields"]}
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(
                f"MemmapDataset: {index_path} lacks a valid 'length' or 'fields' ({error!r})"
            ) from None
        names = self._requested if self._requested is not None else tuple(spec)
        unknown = [n for n in names if n not in spec]
        if unknown:
            raise ValueError(f"MemmapDataset: {folder} has no field {unknown[0]!r}; it has {list(spec)}")
        if not names:
            raise ValueError("MemmapDataset: fields= is empty")
        arrays = []
        for name in names:
            f = spec[name]
            path = folder / str(f["file"])
            if path.parent != folder:
                raise ValueError(
                    f"MemmapDataset: field {name!r} names a file outside {folder}: {f['file']!r}"
                )
            if not path.is_file():
                raise FileNotFoundError(f"MemmapDataset: field {name!r}: {path} is missing")
            try:
                array = np.load(path, mmap_mode="r", allow_pickle=False)
            except ValueError as error:
                raise ValueError(
                    f"MemmapDataset: field {name!r}: {path} is not a .npy array ({error})"
                ) from None
            want_shape, want_dtype = (length, *f["shape"]), np.dtype(f["dtype"])
            if array.shape != want_shape or array.dtype != want_dtype:
                raise ValueError(
                    f"MemmapDataset: field {name!r}: {path} holds {array.dtype}{list(array.shape)}, "
                    f"the index says {want_dtype}{list(want_shape)}"
                )
            arrays.append(array)
        self.fields: tuple[str, ...] = tuple(names)
        self.arrays: tuple[np.ndarray, ...] = tuple(arrays)
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> Any:
        position = _position(index, self.length, "MemmapDataset")
        if len(self.arrays) == 1:
            return _copy(self.arrays[0][position])
        return tuple(_copy(a[position]) for a in self.arrays)

    def take(self, indices: Sequence[int] | np.ndarray) -> tuple[np.ndarray, ...]:
        """The rows at `indices`, one array per field, read from the maps in one go."""
        index = np.asarray(indices, dtype=np.int64)
        return tuple(np.asarray(a[index]) for a in self.arrays)

    def __getstate__(self) -> dict[str, Any]:
        # the maps pickle as their whole contents: send the path and reopen instead
        return {"folder": str(self.folder), "fields": self._requested}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.folder, self._requested = Path(state["folder"]), state["fields"]
        self._open()

    def __repr__(self) -> str:
        shapes = ", ".join(
            f"{n}: {a.dtype}{list(a.shape[1:])}" for n, a in zip(self.fields, self.arrays, strict=True)
        )
        return f"MemmapDataset({str(self.folder)!r}, {self.length} items, {shapes})"
