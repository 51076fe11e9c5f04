"""Batch transforms on the device: a `burn.data.transforms` pipeline run as burn tensor ops on an
uploaded ``(N, C, H, W)`` batch (``DataLoader(..., device_transform=...)``).

The random parameters are drawn on the host, from each image's own generator, by the very methods
the NumPy path uses (`RandomCrop.corners`, `RandomHorizontalFlip.flips`, `RandomApply.draws`,
`RandomChoice.picks`), in the same order; the
device only moves and computes pixels. So the batch equals the NumPy pipeline's, bit for bit for
the geometric transforms (gathers and selections copy values), and for `Normalize` to the
rounding of the device's float32 division (exact on ndarray and on pocl).

What runs where: a crop (with any padding, `pad_if_needed` included) is one ``select`` of the
flattened batch with the source index of every output pixel, computed on the host from the
padded axes' source rows and columns (``np.pad`` of the index ranges, so "edge" and "reflect"
padding follow NumPy's own definition); constant padding is a ``mask_fill`` of the positions
outside the image; a flip is ``flip`` and ``mask_where`` on the drawn images; `ToFloat` and
`Normalize` are a cast and float32 arithmetic; `RandomApply` and `RandomChoice` transform each
drawn group of images together (``select``) and put them back in place. An Int tensor is taken
as uint8 pixels (0..255, scaled by 1/255 as `ToFloat` does), a Float one as float32 pixels.

Example:
    >>> import numpy as np, burn
    >>> from burn.data import transforms as T
    >>> t = T.Compose([T.RandomCrop(4, padding=1), T.RandomHorizontalFlip(), T.Normalize([0.5], [0.2])])
    >>> images = np.arange(2 * 4 * 4, dtype=np.uint8).reshape(2, 1, 4, 4)
    >>> def rngs():
    ...     return [np.random.default_rng([0, 0, i]) for i in range(2)]
    >>> x = burn.Tensor.from_data(images, dtype="uint8", backend="ndarray")  # doctest: +SKIP
    >>> out = apply_on_device(t, x, rngs())  # doctest: +SKIP
    >>> np.array_equal(out.to_numpy(), t.apply_batch(images, rngs()))  # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from burn.data.transforms import (
    CenterCrop,
    Compose,
    Normalize,
    RandomApply,
    RandomChoice,
    RandomCrop,
    RandomHorizontalFlip,
    ToFloat,
)

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["apply_on_device", "check_device_transform", "supports_device"]

_LEAVES = (RandomCrop, CenterCrop, RandomHorizontalFlip, ToFloat, Normalize)  # vertical flip: a subclass


def _unsupported(transform: object) -> object | None:
    """The first transform in `transform` without a device form, None when every one has it."""
    if isinstance(transform, Compose | RandomChoice):
        for t in transform.transforms:
            found = _unsupported(t)
            if found is not None:
                return found
        return None
    if isinstance(transform, RandomApply):
        return _unsupported(transform.transform)
    return None if isinstance(transform, _LEAVES) else transform


def supports_device(transform: object) -> bool:
    """Whether `transform` runs on the device: `RandomCrop`, `CenterCrop`, the flips, `ToFloat`,
    `Normalize`, and `Compose`, `RandomApply` and `RandomChoice` of them.

    Example:
        >>> from burn.data import transforms as T
        >>> supports_device(T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip()]))
        True
        >>> supports_device(T.ColorJitter(brightness=0.2))
        False
    """
    return _unsupported(transform) is None


def check_device_transform(transform: object) -> None:
    """A TypeError naming the first transform of `transform` that has no device form."""
    found = _unsupported(transform)
    if found is not None:
        raise TypeError(
            f"device_transform: {found!r} has no device form (the device runs RandomCrop, CenterCrop, "
            "RandomHorizontalFlip, RandomVerticalFlip, ToFloat, Normalize, and Compose, RandomApply "
            "and RandomChoice of them); "
            "run it in the workers with transform= instead"
        )


def apply_on_device(transform: Any, images: Tensor, rngs: Sequence[np.random.Generator]) -> Tensor:
    """`transform` applied to the ``(N, C, H, W)`` batch `images` on its device, image ``i``'s
    random parameters drawn from ``rngs[i]`` as ``transform.apply_batch`` draws them.

    Args:
        transform: a pipeline `supports_device` accepts.
        images: an Int (uint8 pixel values) or Float (float32 pixels) tensor of rank 4.
        rngs: one generator per image.

    Returns:
        The transformed batch: Int when no transform made floats of it, else Float.

    Example:
        >>> import numpy as np, burn
        >>> from burn.data import transforms as T
        >>> x = burn.Tensor.from_data(np.ones((2, 3, 4, 4), np.float32), backend="ndarray")  # doctest: +SKIP
        >>> gens = [np.random.default_rng(i) for i in range(2)]
        >>> apply_on_device(T.CenterCrop(2), x, gens).shape  # doctest: +SKIP
        (2, 3, 2, 2)
    """
    check_device_transform(transform)
    if len(images.shape) != 4:
        raise ValueError(
            f"device_transform: expected an (N, C, H, W) batch of images, got shape {images.shape}"
        )
    if images.shape[0] != len(rngs):
        raise ValueError(f"device_transform: {images.shape[0]} images but {len(rngs)} generators")
    return _apply(transform, images, rngs)


def _apply(transform: Any, x: Tensor, rngs: Sequence[np.random.Generator]) -> Tensor:
    if isinstance(transform, Compose):
        for t in transform.transforms:
            x = _apply(t, x, rngs)
        return x
    if isinstance(transform, RandomApply):
        chosen = transform.draws(rngs)
        if not chosen.any():
            return x
        return _by_group(x, np.where(chosen, 1, 0), [None, transform.transform], rngs, "RandomApply")
    if isinstance(transform, RandomChoice):
        return _by_group(x, transform.picks(rngs), list(transform.transforms), rngs, "RandomChoice")
    if isinstance(transform, RandomCrop):
        return _random_crop(transform, x, rngs)
    if isinstance(transform, CenterCrop):
        return _center_crop(transform, x)
    if isinstance(transform, RandomHorizontalFlip):  # and RandomVerticalFlip
        return _flip(transform, x, rngs)
    if isinstance(transform, Normalize):
        return _normalize(transform, x)
    return _to_float(x)  # ToFloat


def _by_group(
    x: Tensor,
    groups: NDArray[np.intp],
    transforms: list[Any],
    rngs: Sequence[np.random.Generator],
    owner: str,
) -> Tensor:
    """Image ``i`` through ``transforms[groups[i]]`` (None: left as it is), the images of each
    group transformed together as the NumPy path does, then put back in their places."""
    from burn.tensor.tensor import Tensor

    parts, order = [], []
    for number in np.unique(groups):
        chosen = np.flatnonzero(groups == number)
        if chosen.size == len(rngs):  # one group: no selection, no merge
            return x if transforms[number] is None else _apply(transforms[number], x, rngs)
        rows = x.select(0, Tensor.from_data(chosen.astype(np.int64), x.device, dtype=x.backend.int_dtype))
        t = transforms[number]
        parts.append(rows if t is None else _apply(t, rows, [rngs[k] for k in chosen.tolist()]))
        order.append(chosen)
    first = parts[0]
    if any(p.shape[1:] != first.shape[1:] or p.dtype != first.dtype for p in parts):
        shapes = ", ".join(f"{p.dtype} {tuple(p.shape[1:])}" for p in parts)
        raise ValueError(f"{owner}: the transformed and untouched images differ in shape or dtype ({shapes})")
    inverse = np.empty(len(rngs), np.int64)
    inverse[np.concatenate(order)] = np.arange(len(rngs))
    stacked = Tensor.cat(parts, 0)
    return stacked.select(0, Tensor.from_data(inverse, x.device, dtype=x.backend.int_dtype))


# --------------------------------------------------------------------------- geometry


def _source_index(n: int, pads: Sequence[tuple[int, int]], mode: str) -> NDArray[np.int64]:
    """For each position of an axis of `n` pixels padded by each ``(before, after)`` of `pads` in
    turn, the source pixel it copies, -1 for a constant fill: NumPy's padding applied to the
    index range itself, so the modes mean exactly what they mean for `numpy.pad`."""
    index = np.arange(n, dtype=np.int64)
    for before, after in pads:
        if mode == "constant":
            index = np.pad(index, (before, after), mode="constant", constant_values=-1)
        else:
            index = np.pad(index, (before, after), mode=mode)  # type: ignore[call-overload]
    return index


def _gather_window(x: Tensor, rows: NDArray[np.int64], cols: NDArray[np.int64], fill: Any) -> Tensor:
    """``out[n, c, i, j] = x[n, c, rows[n, i], cols[n, j]]``, `fill` where a row or column is -1.

    One ``select`` over the flattened batch with every output pixel's source index, computed on
    the host: on pocl (load average 7 to 8 on 2 cores, best / median of 9) a ``select`` of a
    CIFAR batch's 393K uint8 pixels took 1.2 / 5.3 ms, a ``gather`` of as many 14 / 18 ms, and
    the crop needed two gathers (rows, then columns).
    """
    from burn.foundations.dtype import DType
    from burn.tensor.tensor import Tensor

    n, c, height, width = x.shape
    h, w = rows.shape[1], cols.shape[1]
    device = x.device
    backend = x.backend
    small = n * c * height * width < 2**31 and backend.capabilities.supports(DType.I32)
    index_dtype: np.dtype[Any] = np.dtype(np.int32 if small else np.int64)
    flat = (
        (np.arange(n * c, dtype=index_dtype) * (height * width)).reshape(n, c, 1, 1)
        + (np.maximum(rows, 0).astype(index_dtype) * width)[:, None, :, None]
        + np.maximum(cols, 0).astype(index_dtype)[:, None, None, :]
    )
    index = Tensor.from_data(flat.reshape(-1), device, dtype=DType.I32 if small else backend.int_dtype)
    out = x.reshape((-1,)).select(0, index).reshape((n, c, h, w))
    outside = (rows < 0)[:, :, None] | (cols < 0)[:, None, :]
    if outside.any():
        out = out.mask_fill(Tensor.from_data(outside.reshape(n, 1, h, w), device), fill)
    return out


def _fill_value(x: Tensor, fill: float) -> Any:
    """`fill` as NumPy's padding writes it into the batch's pixels (uint8 for an Int tensor)."""
    from burn.foundations.kind import Int

    if x.kind is Int:
        return int(np.full((), fill, dtype=np.uint8))
    return float(np.float32(fill))


def _random_crop(t: RandomCrop, x: Tensor, rngs: Sequence[np.random.Generator]) -> Tensor:
    _, _, height, width = x.shape
    padded_h, padded_w, extra = t.padded_size(height, width, shape=tuple(x.shape[1:]))
    left, top, right, bottom = t.padding
    row_pads, col_pads = [(top, bottom)], [(left, right)]
    if extra is not None:
        row_pads.append((extra[1], extra[3]))
        col_pads.append((extra[0], extra[2]))
    row_src = _source_index(height, row_pads, t.padding_mode)
    col_src = _source_index(width, col_pads, t.padding_mode)
    assert row_src.size == padded_h and col_src.size == padded_w
    corners = t.corners(padded_h, padded_w, rngs)  # the host draws, as the NumPy path does
    h, w = t.size
    rows = row_src[corners[:, :1] + np.arange(h)]
    cols = col_src[corners[:, 1:] + np.arange(w)]
    return _gather_window(x, rows, cols, _fill_value(x, t.fill))


def _center_crop(t: CenterCrop, x: Tensor) -> Tensor:
    n, _, height, width = x.shape
    h, w = t.size
    if height < h or width < w:
        raise ValueError(f"CenterCrop: size {t.size} is larger than the image, shape {tuple(x.shape[1:])}")
    top = int(round((height - h) / 2.0))
    left = int(round((width - w) / 2.0))
    rows = np.broadcast_to(np.arange(top, top + h, dtype=np.int64), (n, h))
    cols = np.broadcast_to(np.arange(left, left + w, dtype=np.int64), (n, w))
    return _gather_window(x, rows, cols, 0)


def _flip(t: RandomHorizontalFlip, x: Tensor, rngs: Sequence[np.random.Generator]) -> Tensor:
    from burn.tensor.tensor import Tensor

    chosen = t.flips(rngs)
    axis = t._axis + 1  # the image's axis, in the batch
    if not chosen.any():
        return x
    flipped = x.flip([axis])
    if chosen.all():
        return flipped
    mask = Tensor.from_data(chosen.reshape(-1, 1, 1, 1), x.device)
    return x.mask_where(mask, flipped)


# --------------------------------------------------------------------------- values


def _to_float(x: Tensor) -> Tensor:
    """ToFloat: uint8 values (an Int tensor) to float32 in [0, 1]; float32 as it is."""
    from burn.foundations.dtype import DType
    from burn.foundations.kind import Int

    if x.kind is Int:
        return x.cast(DType.F32) / np.float32(255.0)
    return x


def _normalize(t: Normalize, x: Tensor) -> Tensor:
    """``(x - mean[c]) / std[c]`` in float32, after ToFloat's scaling for uint8: the NumPy
    path's operations in its order, so float32 rounding matches."""
    from burn.tensor.tensor import Tensor

    channels = x.shape[1]
    if t.mean.size not in (1, channels):
        raise ValueError(
            f"Normalize: {t.mean.size} mean/std values for an image of {channels} channels "
            f"(shape {tuple(x.shape[1:])})"
        )
    x = _to_float(x)
    mean = Tensor.from_data(t.mean.reshape(1, -1, 1, 1), x.device, dtype=x.dtype)
    std = Tensor.from_data(t.std.reshape(1, -1, 1, 1), x.device, dtype=x.dtype)
    return (x - mean) / std
