"""Data augmentation: transforms for images (``(C, H, W)`` NumPy arrays) and token sequences.

A transform is a callable ``transform(item, rng) -> item``. ``rng`` is a
`numpy.random.Generator`; the data loader makes one per item from ``(seed, epoch, index)``, so an
item's augmentation depends on neither the worker count nor the order, and a resumed run is
bit-identical. Every random choice here comes from that ``rng``, never from NumPy's global state.

Images are ``(C, H, W)`` arrays of dtype ``uint8`` (values 0..255) or ``float32`` (values in
[0, 1] for the colour transforms; any range for the geometric ones). Each transform keeps the
dtype, except `Normalize` and `ToFloat`, which return ``float32``. Sequences are 1-D arrays.

When the item is a tuple or a list (``(image, label)``), an image or sequence transform
transforms its first element and passes the rest through unchanged; `Compose`, `Lambda`,
`RandomApply` and `RandomChoice` hand the whole item to the transforms they hold. No transform
modifies its input in place: one that leaves the image as it is may return the input array itself.

Batches: the image transforms, and `Compose`, `RandomApply` and `RandomChoice` of them, also
transform a stacked ``(N, C, H, W)`` batch at once with ``apply_batch(images, rngs)``, one
generator per image: each image's random draws come from its own generator in the order the
per-image call makes them, so the batch equals the per-image results stacked, bit for bit
(`supports_batch` tells whether a transform can). The `DataLoader`'s workers use it when they
can: the crop, flip and normalize of a CIFAR batch run as a few NumPy calls over the batch instead
of a dozen per image.

Example:
    >>> import numpy as np
    >>> from burn.data import transforms as T
    >>> train = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(),
    ...                    T.Normalize((0.49, 0.48, 0.45), (0.25, 0.24, 0.26))])
    >>> image = np.zeros((3, 32, 32), np.uint8)
    >>> x, label = train((image, 7), np.random.default_rng([0, 0, 0]))
    >>> x.shape, x.dtype, label
    ((3, 32, 32), dtype('float32'), 7)
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "CenterCrop",
    "ColorJitter",
    "Compose",
    "ImageTransform",
    "Lambda",
    "Normalize",
    "PadOrTruncate",
    "RandAugment",
    "RandomApply",
    "RandomChoice",
    "RandomCrop",
    "RandomErasing",
    "RandomHorizontalFlip",
    "RandomResizedCrop",
    "RandomSubsequence",
    "RandomTokenMask",
    "RandomVerticalFlip",
    "Resize",
    "SequenceTransform",
    "ToFloat",
    "Unbatchable",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_hue",
    "adjust_saturation",
    "hsv_to_rgb",
    "resize_bilinear",
    "rgb_to_hsv",
    "supports_batch",
]

Transform = Callable[[Any, np.random.Generator], Any]
Image = NDArray[Any]

_IMAGE_DTYPES = (np.dtype(np.uint8), np.dtype(np.float32))
# ITU-R 601-2 luma, the weights PIL and torchvision use for grayscale.
_LUMA = np.array([0.2989, 0.587, 0.114], np.float32)


# --------------------------------------------------------------------------- argument checks


def _probability(owner: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{owner}: {name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _positive_int(owner: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) <= 0:
        raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}")
    return int(value)


def _non_negative_int(owner: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise ValueError(f"{owner}: {name} must be an int >= 0, got {value!r}")
    return int(value)


def _size(owner: str, value: object, name: str = "size") -> tuple[int, int]:
    """An int ``s`` -> ``(s, s)``; a pair ``(h, w)`` -> itself; both positive."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value, value)
    if not isinstance(value, Sequence) or len(value) != 2:
        raise ValueError(f"{owner}: {name} must be an int or a pair (height, width), got {value!r}")
    return _positive_int(owner, f"{name}[0]", value[0]), _positive_int(owner, f"{name}[1]", value[1])


def _range(owner: str, name: str, value: object, low: float = 0.0) -> tuple[float, float]:
    """A pair ``(a, b)`` of reals with ``low <= a <= b``."""
    if (
        not isinstance(value, Sequence)
        or len(value) != 2
        or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)
    ):
        raise ValueError(f"{owner}: {name} must be a pair (min, max) of numbers, got {value!r}")
    a, b = float(value[0]), float(value[1])
    if not low <= a <= b:
        raise ValueError(f"{owner}: {name} must satisfy {low} <= min <= max, got {value!r}")
    return a, b


def _check_callable(owner: str, name: str, value: object) -> Transform:
    if not callable(value):
        got = type(value).__name__
        raise TypeError(f"{owner}: {name} must be a callable transform(item, rng), got {got}")
    return value


def _check_image(owner: str, image: object) -> Image:
    if not isinstance(image, np.ndarray):
        raise TypeError(f"{owner}: expected a (C, H, W) NumPy array, got {type(image).__name__}")
    if image.ndim != 3 or image.dtype not in _IMAGE_DTYPES:
        raise ValueError(
            f"{owner}: expected a (C, H, W) image of dtype uint8 or float32, got shape {image.shape} "
            f"dtype {image.dtype}"
        )
    return image


def _check_images(owner: str, images: object, rngs: Sequence[Any]) -> Image:
    """A stacked ``(N, C, H, W)`` batch of uint8 or float32 images with one generator per image."""
    if not isinstance(images, np.ndarray) or images.ndim != 4 or images.dtype not in _IMAGE_DTYPES:
        if isinstance(images, np.ndarray):
            got = f"shape {images.shape} dtype {images.dtype}"
        else:
            got = type(images).__name__
        raise ValueError(f"{owner}: expected an (N, C, H, W) batch of uint8 or float32 images, got {got}")
    if len(rngs) != images.shape[0]:
        raise ValueError(f"{owner}: {len(rngs)} generators for a batch of {images.shape[0]} images")
    return images


class Unbatchable(ValueError):
    """``apply_batch`` cannot give the per-image results stacked (they differ in shape or dtype
    from one image to the next); the caller transforms the images one by one instead."""


def _stack_results(owner: str, results: Sequence[Image]) -> Image:
    first = results[0]
    if any(r.shape != first.shape or r.dtype != first.dtype for r in results):
        raise Unbatchable(f"{owner}: the images' results differ in shape or dtype")
    return np.stack(results)


def _merge(owner: str, images: Image, chosen: NDArray[np.intp], results: Image) -> Image:
    """`images` with the rows `chosen` replaced by `results` (a new array)."""
    if results.shape[1:] != images.shape[1:] or results.dtype != images.dtype:
        raise Unbatchable(f"{owner}: transformed and untouched images differ in shape or dtype")
    out = images.copy()
    out[chosen] = results
    return out


def supports_batch(transform: object) -> bool:
    """Whether ``transform.apply_batch(images, rngs)`` gives the per-image results stacked.

    True for the image transforms and for `Compose`, `RandomApply` and `RandomChoice` holding only
    such transforms; False for `Lambda`, the sequence transforms and other callables.

    Example:
        >>> supports_batch(Compose([RandomCrop(32, padding=4), Normalize([0.5], [0.2])]))
        True
        >>> supports_batch(Lambda(lambda x: x))
        False
    """
    if isinstance(transform, ImageTransform):
        return True
    if isinstance(transform, Compose | RandomChoice):
        return all(supports_batch(t) for t in transform.transforms)
    if isinstance(transform, RandomApply):
        return supports_batch(transform.transform)
    return False


def _apply_batch(transform: Any, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
    """``transform.apply_batch(images, rngs)`` of a transform `supports_batch` accepted."""
    out: Image = transform.apply_batch(images, rngs)
    return out


def _check_rgb(owner: str, image: Image, what: str) -> None:
    if image.shape[0] != 3:
        raise ValueError(f"{owner}: {what} needs a 3-channel RGB image, got shape {image.shape}")


def _check_sequence(owner: str, seq: object) -> NDArray[Any]:
    if not isinstance(seq, np.ndarray) or seq.ndim != 1:
        shape = seq.shape if isinstance(seq, np.ndarray) else type(seq).__name__
        raise ValueError(f"{owner}: expected a 1-D NumPy array of tokens, got {shape}")
    return seq


def _on_first(item: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to the item, or to the first element of a tuple/list item (targets pass through)."""
    if isinstance(item, tuple):
        if not item:
            raise ValueError("an empty tuple item has no image or sequence to transform")
        return (fn(item[0]), *item[1:])
    if isinstance(item, list):
        if not item:
            raise ValueError("an empty list item has no image or sequence to transform")
        return [fn(item[0]), *item[1:]]
    return fn(item)


# --------------------------------------------------------------------------- pixel helpers


def _bound(image: Image) -> float:
    """The largest value of the image's range: 255 for uint8, 1 for float32."""
    return 255.0 if image.dtype == np.uint8 else 1.0


def _as_dtype(values: NDArray[Any], like: Image) -> Image:
    """Float results back to the dtype of ``like``: uint8 is rounded and clipped to 0..255."""
    if like.dtype == np.uint8:
        return np.clip(np.rint(values), 0, 255).astype(np.uint8)
    return values.astype(np.float32, copy=False)


def _blend(image: Image, other: NDArray[Any] | float, factor: float) -> Image:
    """``factor * image + (1 - factor) * other``, clipped to the image's range, in its dtype."""
    out = image.astype(np.float32) * np.float32(factor) + np.float32(1.0 - factor) * other
    return _as_dtype(np.clip(out, 0.0, _bound(image)), image)


def _grayscale(image: Image) -> NDArray[np.float32]:
    """The (1, H, W) luma of an RGB image (the image itself, as float32, for one channel)."""
    x = image.astype(np.float32)
    if image.shape[0] == 1:
        return x
    return np.tensordot(_LUMA, x, axes=(0, 0))[None]


def adjust_brightness(image: Image, factor: float) -> Image:
    """``clip(factor * x, 0, max)``: 0 gives black, 1 the image (max: 255 for uint8, else 1).

    Example:
        >>> import numpy as np
        >>> adjust_brightness(np.array([[[100, 200]]], np.uint8), 1.5).tolist()
        [[[150, 255]]]
    """
    return _blend(image, 0.0, factor)


def adjust_contrast(image: Image, factor: float) -> Image:
    """``clip(factor * x + (1 - factor) * m, 0, max)`` with ``m`` the mean grayscale of the image.

    Example:
        >>> import numpy as np
        >>> [round(float(v), 3) for v in adjust_contrast(np.array([[[0.2, 0.6]]], np.float32), 0.5).ravel()]
        [0.3, 0.5]
    """
    return _blend(image, float(_grayscale(image).mean()), factor)


def adjust_saturation(image: Image, factor: float) -> Image:
    """``clip(factor * x + (1 - factor) * gray(x), 0, max)`` per pixel: 0 gives the grayscale image.

    Example:
        >>> import numpy as np
        >>> gray = adjust_saturation(np.array([[[1.0]], [[0.0]], [[0.0]]], np.float32), 0.0)
        >>> [round(float(v), 4) for v in gray.ravel()]
        [0.2989, 0.2989, 0.2989]
    """
    return _blend(image, _grayscale(image), factor)


def rgb_to_hsv(rgb: NDArray[np.float32]) -> NDArray[np.float32]:
    """(3, H, W) RGB in [0, 1] -> (3, H, W) HSV in [0, 1] (hue as a fraction of a turn).

    Example:
        >>> import numpy as np
        >>> green = np.array([[[0.0]], [[1.0]], [[0.0]]], np.float32)
        >>> [round(float(v), 4) for v in rgb_to_hsv(green).ravel()]
        [0.3333, 1.0, 1.0]
    """
    r, g, b = rgb[0], rgb[1], rgb[2]
    maxc = rgb.max(axis=0)
    minc = rgb.min(axis=0)
    delta = maxc - minc
    grey = delta == 0
    safe = np.where(grey, np.float32(1.0), delta)
    s = np.where(maxc > 0, delta / np.where(maxc > 0, maxc, np.float32(1.0)), np.float32(0.0))
    # The hue sector is picked by which channel is the max (red first on ties, as colorsys does).
    h = np.where(
        maxc == r,
        (g - b) / safe,
        np.where(maxc == g, 2.0 + (b - r) / safe, 4.0 + (r - g) / safe),
    )
    h = np.where(grey, np.float32(0.0), (h / 6.0) % 1.0)
    return np.stack([h, s, maxc]).astype(np.float32, copy=False)


def hsv_to_rgb(hsv: NDArray[np.float32]) -> NDArray[np.float32]:
    """(3, H, W) HSV in [0, 1] -> (3, H, W) RGB in [0, 1]; the inverse of `rgb_to_hsv`.

    Example:
        >>> import numpy as np
        >>> dark_blue = np.array([[[2 / 3]], [[1.0]], [[0.5]]], np.float32)
        >>> [round(float(v), 4) for v in hsv_to_rgb(dark_blue).ravel()]
        [0.0, 0.0, 0.5]
    """
    h, s, v = hsv[0], hsv[1], hsv[2]
    h6 = (h % 1.0) * 6.0
    sector = np.floor(h6).astype(np.int64) % 6
    f = h6 - np.floor(h6)
    p = v * (1.0 - s)
    q = v * (1.0 - s * f)
    t = v * (1.0 - s * (1.0 - f))
    # Each sector of the hue circle takes (r, g, b) from a fixed arrangement of (v, t, p, q).
    choices = np.stack([v, q, p, p, t, v])  # r for sectors 0..5
    r = np.take_along_axis(choices, sector[None], axis=0)[0]
    choices = np.stack([t, v, v, q, p, p])
    g = np.take_along_axis(choices, sector[None], axis=0)[0]
    choices = np.stack([p, p, t, v, v, q])
    b = np.take_along_axis(choices, sector[None], axis=0)[0]
    return np.stack([r, g, b]).astype(np.float32, copy=False)


def adjust_hue(image: Image, shift: float) -> Image:
    """Rotate the hue by ``shift`` turns (in [-0.5, 0.5]) in HSV space; saturation and value kept.

    Example:
        >>> import numpy as np
        >>> adjust_hue(np.array([[[255]], [[0]], [[0]]], np.uint8), 1 / 3)[:, 0, 0].tolist()
        [0, 255, 0]
    """
    x = image.astype(np.float32) / np.float32(_bound(image))
    hsv = rgb_to_hsv(x)
    hsv[0] = (hsv[0] + np.float32(shift)) % 1.0
    return _as_dtype(hsv_to_rgb(hsv) * np.float32(_bound(image)), image)


def resize_bilinear(image: Image, size: tuple[int, int]) -> Image:
    """Bilinear resize of a (C, H, W) image to ``size = (h, w)``, pixel centres aligned.

    The sampling is that of ``torch.nn.functional.interpolate(mode="bilinear",
    align_corners=False)`` without antialiasing: output pixel ``i`` reads the input at
    ``(i + 0.5) * H / h - 0.5``, clamped to the edge. uint8 results are rounded.

    Example:
        >>> import numpy as np
        >>> resize_bilinear(np.array([[[0.0, 4.0]]], np.float32), (1, 4)).tolist()
        [[[0.0, 1.0, 3.0, 4.0]]]
    """
    in_h, in_w = image.shape[-2:]  # the last two axes: an image's, or a batch's images'
    out_h, out_w = size
    if (in_h, in_w) == (out_h, out_w):
        return image

    def taps(n_in: int, n_out: int) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float32]]:
        src = (np.arange(n_out, dtype=np.float32) + 0.5) * np.float32(n_in / n_out) - 0.5
        src = np.maximum(src, 0.0)
        lo = np.minimum(src.astype(np.intp), n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        return lo, hi, (src - lo).astype(np.float32)

    y0, y1, wy = taps(in_h, out_h)
    x0, x1, wx = taps(in_w, out_w)
    x = image.astype(np.float32)
    rows = x[..., y0, :] * (1.0 - wy)[:, None] + x[..., y1, :] * wy[:, None]
    out = rows[..., x0] * (1.0 - wx) + rows[..., x1] * wx
    return _as_dtype(out, image)


def _pad(image: Image, pad: tuple[int, int, int, int], mode: str, fill: float) -> Image:
    """Pads the last two axes (an image's, or a batch's images')."""
    left, top, right, bottom = pad
    if not any(pad):
        return image
    *lead, height, width = image.shape
    if mode == "constant":
        # a filled canvas and one copy: ~20x faster than np.pad on a CIFAR image
        out = np.full((*lead, top + height + bottom, left + width + right), fill, dtype=image.dtype)
        out[..., top : top + height, left : left + width] = image
        return out
    widths = ((0, 0),) * len(lead) + ((top, bottom), (left, right))
    return np.pad(image, widths, mode=mode)  # type: ignore[call-overload]


# --------------------------------------------------------------------------- composition


class Compose:
    """Apply transforms in order, each to the previous one's output, all with the same ``rng``.

    Args:
        transforms: callables ``t(item, rng) -> item``.

    Example:
        >>> import numpy as np
        >>> t = Compose([RandomHorizontalFlip(p=1.0), RandomVerticalFlip(p=1.0)])
        >>> t(np.arange(4, dtype=np.float32).reshape(1, 2, 2), np.random.default_rng(0))[0].tolist()
        [[3.0, 2.0], [1.0, 0.0]]
    """

    def __init__(self, transforms: Sequence[Transform]) -> None:
        if not isinstance(transforms, Sequence) or isinstance(transforms, str):
            got = type(transforms).__name__
            raise TypeError(f"Compose: transforms must be a list of transforms, got {got}")
        self.transforms = [
            _check_callable("Compose", f"transforms[{i}]", t) for i, t in enumerate(transforms)
        ]

    def __call__(self, item: Any, rng: np.random.Generator) -> Any:
        for t in self.transforms:
            item = t(item, rng)
        return item

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """Each transform's `apply_batch` in order (see `supports_batch`).

        Example:
            >>> import numpy as np
            >>> t = Compose([RandomCrop(4, padding=1), RandomHorizontalFlip()])
            >>> batch = np.zeros((5, 3, 4, 4), np.uint8)
            >>> t.apply_batch(batch, [np.random.default_rng(i) for i in range(5)]).shape
            (5, 3, 4, 4)
        """
        for t in self.transforms:
            if not supports_batch(t):
                raise TypeError(f"Compose.apply_batch: {t!r} does not transform batches (see supports_batch)")
            images = _apply_batch(t, images, rngs)
        return images

    def __repr__(self) -> str:
        return f"Compose({self.transforms!r})"


class Lambda:
    """Wrap a function as a transform: ``fn(item, rng)`` or ``fn(item)``.

    Which one is read from the signature (a function that takes two positional arguments gets the
    ``rng``); pass ``takes_rng`` to say it. The function receives the whole item (a tuple stays a
    tuple), and its random draws must come from ``rng`` for the loader's determinism to hold.

    Args:
        fn: the function.
        takes_rng: whether ``fn`` takes ``(item, rng)``; None: from its signature.

    Example:
        >>> import numpy as np
        >>> Lambda(lambda x: x * 2)(np.ones(2), np.random.default_rng(0)).tolist()
        [2.0, 2.0]
        >>> Lambda(lambda x, rng: x + rng.integers(1, 2))(np.zeros(1), np.random.default_rng(0)).tolist()
        [1.0]
    """

    def __init__(self, fn: Callable[..., Any], takes_rng: bool | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"Lambda: fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.takes_rng = self._takes_rng(fn) if takes_rng is None else bool(takes_rng)

    @staticmethod
    def _takes_rng(fn: Callable[..., Any]) -> bool:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            return False  # builtins without a signature: called with the item alone
        positional = [
            p
            for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
        return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)

    def __call__(self, item: Any, rng: np.random.Generator) -> Any:
        return self.fn(item, rng) if self.takes_rng else self.fn(item)

    def __repr__(self) -> str:
        return f"Lambda({self.fn!r})"


class RandomApply:
    """Apply ``transform`` with probability ``p``, else return the item unchanged.

    One uniform number is drawn from ``rng`` per call either way.

    Args:
        transform: a transform, or a list of them (composed).
        p: the probability of applying it.

    Example:
        >>> import numpy as np
        >>> t = RandomApply(Lambda(lambda x: -x), p=0.0)
        >>> t(np.ones(1), np.random.default_rng(0)).tolist()
        [1.0]
    """

    def __init__(self, transform: Transform | Sequence[Transform], p: float = 0.5) -> None:
        if isinstance(transform, Sequence) and not isinstance(transform, str):
            transform = Compose(transform)
        self.transform = _check_callable("RandomApply", "transform", transform)
        self.p = _probability("RandomApply", "p", p)

    def __call__(self, item: Any, rng: np.random.Generator) -> Any:
        return self.transform(item, rng) if rng.random() < self.p else item

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """The held transform's `apply_batch` on the images whose draw chose it."""
        if not supports_batch(self.transform):
            raise TypeError(f"RandomApply.apply_batch: {self.transform!r} does not transform batches")
        _check_images("RandomApply", images, rngs)
        chosen = np.flatnonzero(self.draws(rngs))
        if chosen.size == 0:
            return images
        results = _apply_batch(self.transform, images[chosen], [rngs[k] for k in chosen.tolist()])
        if chosen.size == len(rngs):
            return results
        return _merge("RandomApply", images, chosen, results)

    def draws(self, rngs: Sequence[np.random.Generator]) -> NDArray[np.bool_]:
        """Which images get the transform: one uniform draw from each image's generator, as
        ``__call__`` draws it."""
        return np.array([rng.random() < self.p for rng in rngs], dtype=bool).reshape(-1)


class RandomChoice:
    """Apply one of ``transforms``, picked at random (uniformly, or with probabilities ``p``).

    Args:
        transforms: the candidates (at least one).
        p: their probabilities (summing to 1), or None for uniform.

    Example:
        >>> import numpy as np
        >>> t = RandomChoice([Lambda(lambda x: x + 1), Lambda(lambda x: x - 1)], p=[1.0, 0.0])
        >>> t(np.zeros(1), np.random.default_rng(0)).tolist()
        [1.0]
    """

    def __init__(self, transforms: Sequence[Transform], p: Sequence[float] | None = None) -> None:
        if not isinstance(transforms, Sequence) or isinstance(transforms, str) or not transforms:
            raise ValueError(f"RandomChoice: transforms must be a non-empty list, got {transforms!r}")
        self.transforms = [
            _check_callable("RandomChoice", f"transforms[{i}]", t) for i, t in enumerate(transforms)
        ]
        self.p: NDArray[np.float64] | None = None
        if p is not None:
            probs = [_probability("RandomChoice", f"p[{i}]", v) for i, v in enumerate(p)]
            if len(probs) != len(self.transforms) or not math.isclose(sum(probs), 1.0, abs_tol=1e-6):
                raise ValueError(
                    f"RandomChoice: p must hold one probability per transform ({len(self.transforms)}) "
                    f"summing to 1, got {list(p)!r}"
                )
            self.p = np.asarray(probs) / sum(probs)

    def __call__(self, item: Any, rng: np.random.Generator) -> Any:
        return self.transforms[int(rng.choice(len(self.transforms), p=self.p))](item, rng)

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """Each image through its drawn transform's `apply_batch`, the images grouped by draw."""
        if not supports_batch(self):
            raise TypeError("RandomChoice.apply_batch: not every transform here transforms batches")
        _check_images("RandomChoice", images, rngs)
        picks = self.picks(rngs)
        out: Image | None = None
        for number in np.unique(picks):
            chosen = np.flatnonzero(picks == number)
            results = _apply_batch(
                self.transforms[number], images[chosen], [rngs[k] for k in chosen.tolist()]
            )
            if chosen.size == len(rngs):
                return results
            if out is None:
                out = np.empty((len(rngs), *results.shape[1:]), results.dtype)
            if results.shape[1:] != out.shape[1:] or results.dtype != out.dtype:
                raise Unbatchable("RandomChoice: the transforms' results differ in shape or dtype")
            out[chosen] = results
        assert out is not None
        return out

    def picks(self, rngs: Sequence[np.random.Generator]) -> NDArray[np.intp]:
        """The transform each image gets (its position in `transforms`), drawn from each image's
        generator as ``__call__`` draws it."""
        return np.array([int(rng.choice(len(self.transforms), p=self.p)) for rng in rngs], dtype=np.intp)


class ImageTransform:
    """Base of the image transforms: checks the image, and passes a tuple's target through.

    Subclasses implement ``apply(image, rng)`` on a checked (C, H, W) uint8 or float32 array.

    Example:
        >>> import numpy as np
        >>> class Invert(ImageTransform):
        ...     def apply(self, image, rng):
        ...         return 255 - image
        >>> x, label = Invert()((np.zeros((1, 1, 2), np.uint8), 4), np.random.default_rng(0))
        >>> x.tolist(), label
        ([[[255, 255]]], 4)
    """

    def __call__(self, item: Any, rng: np.random.Generator) -> Any:
        name = type(self).__name__
        return _on_first(item, lambda image: self.apply(_check_image(name, image), rng))

    def apply(self, image: Image, rng: np.random.Generator) -> Image:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """`apply` on each image of an ``(N, C, H, W)`` batch with its own generator, stacked.

        Subclasses whose work vectorizes over the batch override this (drawing from each
        image's generator what `apply` draws, in the same order), so the result stays the
        per-image results stacked, bit for bit.

        Example:
            >>> import numpy as np
            >>> batch = np.zeros((4, 3, 8, 8), np.uint8)
            >>> rngs = [np.random.default_rng(i) for i in range(4)]
            >>> ColorJitter(brightness=0.5).apply_batch(batch, rngs).shape
            (4, 3, 8, 8)
        """
        name = type(self).__name__
        _check_images(name, images, rngs)
        return _stack_results(name, [self.apply(images[k], rng) for k, rng in enumerate(rngs)])


class SequenceTransform:
    """Base of the sequence transforms: checks the 1-D array, and passes a tuple's target through.

    Subclasses implement ``apply(seq, rng)`` on a checked 1-D array.

    Example:
        >>> import numpy as np
        >>> class Reverse(SequenceTransform):
        ...     def apply(self, seq, rng):
        ...         return seq[::-1].copy()
        >>> Reverse()(np.array([1, 2, 3]), np.random.default_rng(0)).tolist()
        [3, 2, 1]
    """

    def __call__(self, item: Any, rng: np.random.Generator) -> Any:
        name = type(self).__name__
        return _on_first(item, lambda seq: self.apply(_check_sequence(name, seq), rng))

    def apply(self, seq: NDArray[Any], rng: np.random.Generator) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


# --------------------------------------------------------------------------- geometry


def _padding(owner: str, padding: object) -> tuple[int, int, int, int]:
    """torchvision's convention: an int (every side), (left/right, top/bottom) or (left, top, right,
    bottom)."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        p = _non_negative_int(owner, "padding", padding)
        return p, p, p, p
    if isinstance(padding, Sequence) and len(padding) in (2, 4):
        values = [_non_negative_int(owner, f"padding[{i}]", v) for i, v in enumerate(padding)]
        if len(values) == 2:
            return values[0], values[1], values[0], values[1]
        return values[0], values[1], values[2], values[3]
    raise ValueError(
        f"{owner}: padding must be an int, (left/right, top/bottom) or (left, top, right, bottom), "
        f"got {padding!r}"
    )


_PADDING_MODES = ("constant", "edge", "reflect")


class RandomCrop(ImageTransform):
    """Crop a random ``size`` window, after padding the image (CIFAR's ``RandomCrop(32, padding=4)``).

    The window's top-left corner is uniform over every position where it fits.

    Args:
        size: the output (h, w), or an int for a square.
        padding: pixels added first: an int for every side, (left/right, top/bottom), or
            (left, top, right, bottom).
        padding_mode: "constant" (``fill``), "edge" (repeat the border) or "reflect" (mirror
            without repeating the border, as `numpy.pad`'s "reflect").
        fill: the value of constant padding.
        pad_if_needed: pad images smaller than ``size`` (else they are an error).

    Example:
        >>> import numpy as np
        >>> out = RandomCrop(32, padding=4)(np.zeros((3, 32, 32), np.uint8), np.random.default_rng(0))
        >>> out.shape, out.dtype
        ((3, 32, 32), dtype('uint8'))
    """

    def __init__(
        self,
        size: int | tuple[int, int],
        padding: int | Sequence[int] = 0,
        padding_mode: str = "constant",
        fill: float = 0,
        pad_if_needed: bool = False,
    ) -> None:
        self.size = _size("RandomCrop", size)
        self.padding = _padding("RandomCrop", padding)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"RandomCrop: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}"
            )
        self.padding_mode = padding_mode
        self.fill = float(fill)
        self.pad_if_needed = bool(pad_if_needed)

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        padded = _pad(image, self.padding, self.padding_mode, self.fill)
        h, w = self.size
        _, height, width = padded.shape
        if self.pad_if_needed and (height < h or width < w):
            extra_h, extra_w = max(h - height, 0), max(w - width, 0)
            padded = _pad(padded, (extra_w, extra_h, extra_w, extra_h), self.padding_mode, self.fill)
            _, height, width = padded.shape
        if height < h or width < w:
            raise ValueError(
                f"RandomCrop: size {self.size} is larger than the padded image ({height}, {width}) "
                f"(image shape {image.shape}); pass pad_if_needed=True or a smaller size"
            )
        top = int(rng.integers(0, height - h + 1))
        left = int(rng.integers(0, width - w + 1))
        out = padded[:, top : top + h, left : left + w]
        return out.copy() if padded is image else out

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """The batch padded once, then each image's window copied out (its corner drawn as
        `apply` draws it)."""
        _check_images("RandomCrop", images, rngs)
        height, width = images.shape[-2:]
        height, width, extra = self.padded_size(height, width, shape=images.shape[1:])
        padded = _pad(images, self.padding, self.padding_mode, self.fill)
        if extra is not None:
            padded = _pad(padded, extra, self.padding_mode, self.fill)
        h, w = self.size
        corners = self.corners(height, width, rngs)
        # every window of every image as a view, then one gather of the drawn ones: (N, C, h, w)
        windows = np.lib.stride_tricks.sliding_window_view(padded, (h, w), axis=(2, 3))
        return windows[np.arange(len(rngs)), :, corners[:, 0], corners[:, 1]]


    def padded_size(
        self, height: int, width: int, shape: tuple[int, ...] | None = None
    ) -> tuple[int, int, tuple[int, int, int, int] | None]:
        """The (height, width) of an image of (`height`, `width`) once padded, and the second
        padding `pad_if_needed` adds (None when none); a ValueError when the crop does not fit."""
        left, top, right, bottom = self.padding
        height, width = height + top + bottom, width + left + right
        h, w = self.size
        extra = None
        if self.pad_if_needed and (height < h or width < w):
            extra_h, extra_w = max(h - height, 0), max(w - width, 0)
            extra = (extra_w, extra_h, extra_w, extra_h)
            height, width = height + 2 * extra_h, width + 2 * extra_w
        if height < h or width < w:
            raise ValueError(
                f"RandomCrop: size {self.size} is larger than the padded image ({height}, {width}) "
                f"(image shape {shape}); pass pad_if_needed=True or a smaller size"
            )
        return height, width, extra

    def corners(self, height: int, width: int, rngs: Sequence[np.random.Generator]) -> NDArray[np.intp]:
        """The (top, left) of each image's window in a padded (`height`, `width`) image, drawn from
        its generator as `apply` draws it: an ``(N, 2)`` array."""
        h, w = self.size
        return np.array(
            [(int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))) for rng in rngs],
            dtype=np.intp,
        ).reshape(-1, 2)


class CenterCrop(ImageTransform):
    """Crop the central ``size`` window (offsets rounded as torchvision does).

    Args:
        size: the output (h, w), or an int for a square; at most the image's size.

    Example:
        >>> import numpy as np
        >>> CenterCrop(2)(np.arange(16, dtype=np.uint8).reshape(1, 4, 4), None)[0].tolist()
        [[5, 6], [9, 10]]
    """

    def __init__(self, size: int | tuple[int, int]) -> None:
        self.size = _size("CenterCrop", size)

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        h, w = self.size
        _, height, width = image.shape
        if height < h or width < w:
            raise ValueError(f"CenterCrop: size {self.size} is larger than the image, shape {image.shape}")
        top = int(round((height - h) / 2.0))
        left = int(round((width - w) / 2.0))
        return image[:, top : top + h, left : left + w].copy()

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """One slice of the whole batch (the window is the same for every image)."""
        _check_images("CenterCrop", images, rngs)
        h, w = self.size
        height, width = images.shape[-2:]
        if height < h or width < w:
            raise ValueError(
                f"CenterCrop: size {self.size} is larger than the image, shape {images.shape[1:]}"
            )
        top = int(round((height - h) / 2.0))
        left = int(round((width - w) / 2.0))
        return images[..., top : top + h, left : left + w].copy()


class Resize(ImageTransform):
    """Bilinear resize (NumPy, no antialiasing; see `resize_bilinear`).

    Args:
        size: (h, w); or an int: the shorter side becomes ``size``, the aspect ratio kept (the
            longer side truncated, as torchvision does).

    Example:
        >>> import numpy as np
        >>> Resize((4, 6))(np.zeros((3, 2, 3), np.float32), None).shape
        (3, 4, 6)
    """

    def __init__(self, size: int | tuple[int, int]) -> None:
        if isinstance(size, numbers.Integral) and not isinstance(size, bool):
            self.size: int | tuple[int, int] = _positive_int("Resize", "size", size)
        else:
            self.size = _size("Resize", size)

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        return resize_bilinear(image, self._target(image.shape[-2:]))

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """`resize_bilinear` of the whole batch (one size for every image, no draws)."""
        _check_images("Resize", images, rngs)
        return resize_bilinear(images, self._target(images.shape[-2:]))

    def _target(self, shape: tuple[int, ...]) -> tuple[int, int]:
        if not isinstance(self.size, int):
            return self.size
        height, width = shape
        short, long = (height, width) if height <= width else (width, height)
        new_long = int(self.size * long / short)
        return (self.size, new_long) if height <= width else (new_long, self.size)


class RandomResizedCrop(ImageTransform):
    """Crop a random area and aspect ratio, then resize it to ``size`` (Inception-style).

    The window is drawn as torchvision draws it: up to 10 tries of an area fraction uniform in
    ``scale`` and a log-uniform aspect ratio (w/h) in ``ratio``, keeping the first that fits;
    otherwise the central crop of the whole image clamped to ``ratio``.

    Args:
        size: the output (h, w), or an int for a square.
        scale: the range of the crop's area as a fraction of the image's.
        ratio: the range of the crop's aspect ratio, width / height.

    Example:
        >>> import numpy as np
        >>> RandomResizedCrop(8)(np.zeros((3, 20, 30), np.uint8), np.random.default_rng(0)).shape
        (3, 8, 8)
    """

    def __init__(
        self,
        size: int | tuple[int, int],
        scale: tuple[float, float] = (0.08, 1.0),
        ratio: tuple[float, float] = (3 / 4, 4 / 3),
    ) -> None:
        self.size = _size("RandomResizedCrop", size)
        self.scale = _range("RandomResizedCrop", "scale", scale)
        if self.scale[1] <= 0 or self.scale[1] > 1:
            raise ValueError(f"RandomResizedCrop: scale must lie in (0, 1], got {scale!r}")
        self.ratio = _range("RandomResizedCrop", "ratio", ratio)
        if self.ratio[0] <= 0:
            raise ValueError(f"RandomResizedCrop: ratio must be positive, got {ratio!r}")

    def window(self, height: int, width: int, rng: np.random.Generator) -> tuple[int, int, int, int]:
        """The crop ``(top, left, h, w)`` for an image of ``(height, width)``."""
        area = height * width
        log_lo, log_hi = math.log(self.ratio[0]), math.log(self.ratio[1])
        for _ in range(10):
            target = area * rng.uniform(self.scale[0], self.scale[1])
            aspect = math.exp(rng.uniform(log_lo, log_hi))
            w = int(round(math.sqrt(target * aspect)))
            h = int(round(math.sqrt(target / aspect)))
            if 0 < w <= width and 0 < h <= height:
                top = int(rng.integers(0, height - h + 1))
                left = int(rng.integers(0, width - w + 1))
                return top, left, h, w
        in_ratio = width / height
        if in_ratio < self.ratio[0]:
            w, h = width, int(round(width / self.ratio[0]))
        elif in_ratio > self.ratio[1]:
            h, w = height, int(round(height * self.ratio[1]))
        else:
            h, w = height, width
        return (height - h) // 2, (width - w) // 2, h, w

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        top, left, h, w = self.window(image.shape[1], image.shape[2], rng)
        return resize_bilinear(image[:, top : top + h, left : left + w], self.size)


class RandomHorizontalFlip(ImageTransform):
    """Mirror the image left-right (``np.flip(image, axis=2)``) with probability ``p``.

    Example:
        >>> import numpy as np
        >>> RandomHorizontalFlip(p=1.0)(np.arange(3, dtype=np.uint8).reshape(1, 1, 3), None)[0].tolist()
        [[2, 1, 0]]
    """

    _axis = 2

    def __init__(self, p: float = 0.5) -> None:
        self.p = _probability(type(self).__name__, "p", p)

    def apply(self, image: Image, rng: np.random.Generator | None) -> Image:
        # p = 1 needs no draw (a fixed flip, e.g. test-time augmentation, may pass rng=None).
        if self.p == 1.0 or (self.p > 0.0 and rng is not None and rng.random() < self.p):
            return np.flip(image, axis=self._axis).copy()
        if self.p > 0.0 and rng is None:
            raise TypeError(f"{type(self).__name__}: rng is None; a random flip needs a numpy Generator")
        return image

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """The images whose draw says so flipped in one call; the others copied as they are."""
        _check_images(type(self).__name__, images, rngs)
        if self.p == 1.0:
            return np.flip(images, axis=self._axis + 1).copy()
        flipped = np.flatnonzero(self.flips(rngs))
        if flipped.size == 0:
            return images
        out = images.copy()
        out[flipped] = np.flip(images[flipped], axis=self._axis + 1)
        return out


    def flips(self, rngs: Sequence[np.random.Generator]) -> NDArray[np.bool_]:
        """Which images are flipped, drawn from each one's generator as `apply` draws it (no draw
        when `p` is 0 or 1)."""
        if self.p in (0.0, 1.0):
            return np.full(len(rngs), self.p == 1.0)
        return np.array([rng.random() < self.p for rng in rngs], dtype=bool).reshape(-1)


class RandomVerticalFlip(RandomHorizontalFlip):
    """Mirror the image top-bottom (``np.flip(image, axis=1)``) with probability ``p``.

    Example:
        >>> import numpy as np
        >>> RandomVerticalFlip(p=1.0)(np.arange(2, dtype=np.uint8).reshape(1, 2, 1), None)[0].tolist()
        [[1], [0]]
    """

    _axis = 1


# --------------------------------------------------------------------------- values


class ToFloat(ImageTransform):
    """uint8 (0..255) -> float32 in [0, 1]; a float32 image is returned as it is.

    Example:
        >>> import numpy as np
        >>> ToFloat()(np.array([[[0, 255]]], np.uint8), None).tolist()
        [[[0.0, 1.0]]]
    """

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        if image.dtype == np.uint8:
            return image.astype(np.float32) / np.float32(255.0)
        return image

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """The same arithmetic on the whole batch (no draws)."""
        return self.apply(_check_images("ToFloat", images, rngs), rngs[0] if rngs else None)  # type: ignore[arg-type]


class Normalize(ImageTransform):
    """``(x - mean[c]) / std[c]`` per channel; returns float32.

    A uint8 image is first scaled to [0, 1] (as `ToFloat`), so ``mean`` and ``std`` are in
    [0, 1] units for both dtypes (the usual ImageNet/CIFAR statistics).

    Args:
        mean: one value per channel (or one for all).
        std: one positive value per channel (or one for all).

    Example:
        >>> import numpy as np
        >>> Normalize([0.5], [0.25])(np.array([[[0.0, 1.0]]], np.float32), None).tolist()
        [[[-2.0, 2.0]]]
    """

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        self.mean = self._vector("mean", mean)
        self.std = self._vector("std", std)
        if self.mean.shape != self.std.shape:
            raise ValueError(f"Normalize: mean and std must have the same length, got {mean!r} and {std!r}")
        if np.any(self.std <= 0):
            raise ValueError(f"Normalize: std must be positive, got {std!r}")

    @staticmethod
    def _vector(name: str, value: object) -> NDArray[np.float32]:
        if isinstance(value, numbers.Real):
            value = [value]
        try:
            out = np.asarray(value, dtype=np.float32)
        except (TypeError, ValueError):
            raise ValueError(f"Normalize: {name} must be a list of numbers, got {value!r}") from None
        if out.ndim != 1 or out.size == 0 or not np.all(np.isfinite(out)):
            raise ValueError(f"Normalize: {name} must be a non-empty list of finite numbers, got {value!r}")
        return out

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        return self._normalize(image)

    def apply_batch(self, images: Image, rngs: Sequence[np.random.Generator]) -> Image:
        """The same arithmetic on the whole batch (no draws): the per-image results, bit for bit."""
        return self._normalize(_check_images("Normalize", images, rngs))

    def _normalize(self, image: Image) -> Image:
        """`image` (C, H, W) or a batch (N, C, H, W): the channel axis is the third from the end."""
        channels = image.shape[-3]
        if self.mean.size not in (1, channels):
            raise ValueError(
                f"Normalize: {self.mean.size} mean/std values for an image of {channels} channels "
                f"(shape {image.shape[-3:]})"
            )
        if image.dtype == np.uint8:
            x = image.astype(np.float32)
            x /= np.float32(255.0)
            x -= self.mean[:, None, None]
        else:
            x = image - self.mean[:, None, None]
        x /= self.std[:, None, None]  # in place on the new array: one allocation per call
        return x


def _jitter_range(
    name: str, value: object, center: float, bound: tuple[float, float]
) -> tuple[float, float] | None:
    """ColorJitter's argument: ``v`` -> ``[center - v, center + v]`` clipped to ``bound``; or a pair."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        v = float(value)
        if v < 0:
            raise ValueError(f"ColorJitter: {name} must be >= 0, got {value!r}")
        lo, hi = max(center - v, bound[0]), min(center + v, bound[1])
        if name == "hue" and v > 0.5:
            raise ValueError(f"ColorJitter: hue must lie in [0, 0.5], got {value!r}")
    else:
        lo, hi = _range("ColorJitter", name, value, low=bound[0])
        if hi > bound[1]:
            raise ValueError(f"ColorJitter: {name} must lie in [{bound[0]}, {bound[1]}], got {value!r}")
    return None if lo == hi == center else (lo, hi)


class ColorJitter(ImageTransform):
    """Random brightness, contrast, saturation and hue, applied in a random order.

    Each factor is drawn uniformly from its range: a number ``v`` means ``[max(0, 1 - v), 1 + v]``
    (for hue: ``[-v, v]``, ``v <= 0.5``), a pair gives the range itself. With ``M`` the range's
    maximum (255 for uint8, 1 for float32 images, which must lie in [0, 1]) and
    ``gray = 0.2989 R + 0.587 G + 0.114 B``:

    - brightness ``b``: ``clip(b * x, 0, M)``;
    - contrast ``c``: ``clip(c * x + (1 - c) * mean(gray), 0, M)`` (one mean over the image);
    - saturation ``s``: ``clip(s * x + (1 - s) * gray, 0, M)`` (gray per pixel; needs RGB);
    - hue ``h``: RGB -> HSV, ``H <- (H + h) mod 1``, HSV -> RGB (needs RGB).

    uint8 results are rounded to the nearest integer. The order is a random permutation of the
    four, as in torchvision; the formulas are those of torchvision's functional ops.

    Example:
        >>> import numpy as np
        >>> t = ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1)
        >>> t(np.full((3, 4, 4), 128, np.uint8), np.random.default_rng(0)).dtype
        dtype('uint8')
    """

    def __init__(
        self,
        brightness: float | tuple[float, float] = 0,
        contrast: float | tuple[float, float] = 0,
        saturation: float | tuple[float, float] = 0,
        hue: float | tuple[float, float] = 0,
    ) -> None:
        inf = float("inf")
        self.brightness = _jitter_range("brightness", brightness, 1.0, (0.0, inf))
        self.contrast = _jitter_range("contrast", contrast, 1.0, (0.0, inf))
        self.saturation = _jitter_range("saturation", saturation, 1.0, (0.0, inf))
        self.hue = _jitter_range("hue", hue, 0.0, (-0.5, 0.5))

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        if (self.saturation or self.hue) and image.shape[0] != 3:
            _check_rgb("ColorJitter", image, "saturation/hue")
        order = rng.permutation(4)
        ranges = (self.brightness, self.contrast, self.saturation, self.hue)
        factors = [None if r is None else float(rng.uniform(r[0], r[1])) for r in ranges]
        ops = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
        for i in order:
            factor = factors[i]
            if factor is not None:
                image = ops[i](image, factor)
        return image


class RandomErasing(ImageTransform):
    """With probability ``p``, fill a random rectangle (Cutout-like, Zhong et al. 2017).

    The rectangle is drawn as torchvision draws it: up to 10 tries of an area fraction uniform in
    ``scale`` and a log-uniform aspect ratio (h/w) in ``ratio``, keeping the first that fits
    strictly inside the image; when none fits the image is returned as it is.

    Args:
        p: the probability of erasing.
        scale: the range of the rectangle's area, as a fraction of the image's.
        ratio: the range of its aspect ratio, height / width.
        value: a number, one number per channel, or "random" (per-pixel noise: standard normal
            for float32 images, uniform 0..255 for uint8).

    Example:
        >>> import numpy as np
        >>> out = RandomErasing(p=1.0)(np.ones((3, 16, 16), np.float32), np.random.default_rng(0))
        >>> bool((out == 0).any()), bool((out == 1).any())
        (True, True)
    """

    def __init__(
        self,
        p: float = 0.5,
        scale: tuple[float, float] = (0.02, 0.33),
        ratio: tuple[float, float] = (0.3, 3.3),
        value: float | Sequence[float] | str = 0,
    ) -> None:
        self.p = _probability("RandomErasing", "p", p)
        self.scale = _range("RandomErasing", "scale", scale)
        if self.scale[1] > 1:
            raise ValueError(f"RandomErasing: scale must lie in [0, 1], got {scale!r}")
        self.ratio = _range("RandomErasing", "ratio", ratio)
        if self.ratio[0] <= 0:
            raise ValueError(f"RandomErasing: ratio must be positive, got {ratio!r}")
        if isinstance(value, str):
            if value != "random":
                raise ValueError(f"RandomErasing: value must be a number, a list or 'random', got {value!r}")
            self.value: str | NDArray[np.float64] = value
        else:
            try:
                self.value = np.atleast_1d(np.asarray(value, dtype=np.float64))
            except (TypeError, ValueError):
                raise ValueError(
                    f"RandomErasing: value must be a number, a list or 'random', got {value!r}"
                ) from None
            if self.value.ndim != 1:
                raise ValueError(f"RandomErasing: value must be a number or a flat list, got {value!r}")

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        if rng.random() >= self.p:
            return image
        channels, height, width = image.shape
        if isinstance(self.value, np.ndarray) and self.value.size not in (1, channels):
            raise ValueError(
                f"RandomErasing: {self.value.size} fill values for an image of {channels} channels "
                f"(shape {image.shape})"
            )
        area = height * width
        log_lo, log_hi = math.log(self.ratio[0]), math.log(self.ratio[1])
        for _ in range(10):
            erase = area * rng.uniform(self.scale[0], self.scale[1])
            aspect = math.exp(rng.uniform(log_lo, log_hi))
            h = int(round(math.sqrt(erase * aspect)))
            w = int(round(math.sqrt(erase / aspect)))
            if not (h < height and w < width):
                continue
            top = int(rng.integers(0, height - h + 1))
            left = int(rng.integers(0, width - w + 1))
            if isinstance(self.value, str):
                if image.dtype == np.uint8:
                    patch: NDArray[Any] = rng.integers(0, 256, size=(channels, h, w), dtype=np.uint8)
                else:
                    patch = rng.standard_normal(size=(channels, h, w), dtype=np.float32)
            else:
                patch = self.value.reshape(-1, 1, 1)
                if image.dtype == np.uint8:
                    patch = np.clip(np.rint(patch), 0, 255)
            out = image.copy()
            out[:, top : top + h, left : left + w] = patch
            return out
        return image


# --------------------------------------------------------------------------- RandAugment


def _affine_nearest(image: Image, matrix: NDArray[np.float64], fill: float) -> Image:
    """Warp by the 2x3 ``matrix`` mapping output (x, y) to input (x, y), about the image centre.

    Nearest-neighbour sampling (RandAugment's default); pixels mapped from outside get ``fill``.
    """
    _, height, width = image.shape
    cy, cx = (height - 1) / 2.0, (width - 1) / 2.0
    ys, xs = np.mgrid[0:height, 0:width]
    dx, dy = xs - cx, ys - cy
    src_x = np.rint(matrix[0, 0] * dx + matrix[0, 1] * dy + matrix[0, 2] + cx).astype(np.intp)
    src_y = np.rint(matrix[1, 0] * dx + matrix[1, 1] * dy + matrix[1, 2] + cy).astype(np.intp)
    inside = (src_x >= 0) & (src_x < width) & (src_y >= 0) & (src_y < height)
    out = image[:, np.clip(src_y, 0, height - 1), np.clip(src_x, 0, width - 1)]
    out[:, ~inside] = fill
    return out


def _shear(image: Image, amount: float, axis: str, fill: float) -> Image:
    # output x = input x + amount * y  ->  input x = output x - amount * y (and likewise for y)
    m = (
        np.array([[1.0, -amount, 0.0], [0.0, 1.0, 0.0]])
        if axis == "x"
        else np.array([[1.0, 0.0, 0.0], [-amount, 1.0, 0.0]])
    )
    return _affine_nearest(image, m, fill)


def _translate(image: Image, pixels: float, axis: str, fill: float) -> Image:
    shift = int(round(pixels))
    m = np.array([[1.0, 0.0, -shift if axis == "x" else 0.0], [0.0, 1.0, -shift if axis == "y" else 0.0]])
    return _affine_nearest(image, m, fill)


def _rotate(image: Image, degrees: float, fill: float) -> Image:
    # counter-clockwise on screen (y down); the matrix is the inverse rotation
    t = math.radians(degrees)
    c, s = math.cos(t), math.sin(t)
    return _affine_nearest(image, np.array([[c, -s, 0.0], [s, c, 0.0]]), fill)


def _sharpness(image: Image, factor: float) -> Image:
    """Blend with PIL's SMOOTH kernel ((1 1 1; 1 5 1; 1 1 1) / 13) on the interior; borders kept."""
    x = image.astype(np.float32)
    if min(image.shape[1:]) < 3:
        return image
    blurred = x.copy()
    window = sum(x[:, i : x.shape[1] - 2 + i, j : x.shape[2] - 2 + j] for i in range(3) for j in range(3))
    blurred[:, 1:-1, 1:-1] = (window + 4.0 * x[:, 1:-1, 1:-1]) / 13.0
    if image.dtype == np.uint8:
        blurred = np.rint(blurred)
    return _blend(image, blurred, factor)


def _to_uint8(image: Image) -> NDArray[np.uint8]:
    if image.dtype == np.uint8:
        return image
    return np.clip(np.rint(image * 255.0), 0, 255).astype(np.uint8)


def _from_uint8(values: NDArray[np.uint8], like: Image) -> Image:
    return values if like.dtype == np.uint8 else values.astype(np.float32) / np.float32(255.0)


def _posterize(image: Image, bits: int) -> Image:
    mask = np.uint8((0xFF << (8 - bits)) & 0xFF)
    return _from_uint8(_to_uint8(image) & mask, image)


def _solarize(image: Image, threshold: float) -> Image:
    """Invert every value at or above ``threshold`` (given in 0..255 units)."""
    bound = _bound(image)
    t = threshold if image.dtype == np.uint8 else threshold / 255.0
    return np.where(image >= t, (bound - image).astype(image.dtype), image)


def _autocontrast(image: Image) -> Image:
    """Stretch each channel's [min, max] to the full range (a constant channel is kept)."""
    x = image.astype(np.float32)
    lo = x.min(axis=(1, 2), keepdims=True)
    hi = x.max(axis=(1, 2), keepdims=True)
    flat = hi <= lo
    scale = np.where(flat, 1.0, _bound(image) / np.where(flat, 1.0, hi - lo))
    out = np.where(flat, x, (x - lo) * scale)
    return _as_dtype(np.clip(out, 0.0, _bound(image)), image)


def _equalize(image: Image) -> Image:
    """Histogram equalization per channel, PIL's algorithm, on the image's 8-bit values."""
    values = _to_uint8(image)
    out = np.empty_like(values)
    for c in range(values.shape[0]):  # a loop over channels, each a vectorized lookup table
        hist = np.bincount(values[c].ravel(), minlength=256)
        last = hist[np.flatnonzero(hist)[-1]]
        step = (hist.sum() - last) // 255
        if step == 0:
            out[c] = values[c]
            continue
        lut = (np.cumsum(hist) + step // 2) // step
        lut = np.clip(np.concatenate([[0], lut[:-1]]), 0, 255).astype(np.uint8)
        out[c] = lut[values[c]]
    return _from_uint8(out, image)


class RandAugment(ImageTransform):
    """RandAugment (Cubuk et al. 2019): ``num_ops`` ops drawn uniformly, all at one ``magnitude``.

    The op list and magnitude scales follow the paper's policy as torchvision implements it
    (``num_magnitude_bins`` bins, magnitude ``m`` the ``m``-th bin; signed ops get a random sign):

    - ``identity``: the image;
    - ``shear_x``, ``shear_y``: shear by up to 0.3 (``x += 0.3 * y``);
    - ``translate_x``, ``translate_y``: shift by up to 150/331 of the width / height, whole pixels;
    - ``rotate``: rotate by up to 30 degrees about the centre;
    - ``brightness``, ``contrast``: `adjust_brightness`, `adjust_contrast` by ``1 +- 0.9``;
    - ``color``: `adjust_saturation` by ``1 +- 0.9`` (the image itself for 1 channel);
    - ``sharpness``: blend with a 3x3 smoothing (PIL's SMOOTH kernel) by ``1 +- 0.9``;
    - ``posterize``: keep 8 down to 4 high bits;
    - ``solarize``: invert values at or above a threshold from 255 down to 0 (0..255 units);
    - ``autocontrast``: stretch each channel to the full range;
    - ``equalize``: histogram equalization per channel.

    Geometric ops use nearest-neighbour sampling on the NumPy grid (vectorized) and fill the
    uncovered pixels with ``fill``. Float32 images must lie in [0, 1]; posterize and equalize work
    on their 8-bit quantization. Images have 1 or 3 channels.

    Args:
        num_ops: ops applied in sequence per image.
        magnitude: the bin index, 0 .. ``num_magnitude_bins - 1``.
        num_magnitude_bins: how many magnitudes the scales are divided into.
        fill: the value of pixels uncovered by shear, translate and rotate.

    Example:
        >>> import numpy as np
        >>> out = RandAugment()(np.zeros((3, 8, 8), np.uint8), np.random.default_rng(0))
        >>> out.shape, out.dtype
        ((3, 8, 8), dtype('uint8'))
    """

    OPS = (
        "identity",
        "shear_x",
        "shear_y",
        "translate_x",
        "translate_y",
        "rotate",
        "brightness",
        "color",
        "contrast",
        "sharpness",
        "posterize",
        "solarize",
        "autocontrast",
        "equalize",
    )

    def __init__(
        self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31, fill: float = 0
    ) -> None:
        self.num_ops = _non_negative_int("RandAugment", "num_ops", num_ops)
        self.num_magnitude_bins = _positive_int("RandAugment", "num_magnitude_bins", num_magnitude_bins)
        if self.num_magnitude_bins < 2:
            raise ValueError(f"RandAugment: num_magnitude_bins must be >= 2, got {num_magnitude_bins!r}")
        self.magnitude = _non_negative_int("RandAugment", "magnitude", magnitude)
        if self.magnitude >= self.num_magnitude_bins:
            raise ValueError(
                f"RandAugment: magnitude must be < num_magnitude_bins ({self.num_magnitude_bins}), "
                f"got {magnitude!r}"
            )
        self.fill = float(fill)

    def _level(self, top: float) -> float:
        """The magnitude's value on a linear scale from 0 to ``top``."""
        return top * self.magnitude / (self.num_magnitude_bins - 1)

    def apply_op(self, image: Image, op: str, sign: float) -> Image:
        """Apply the named op at this policy's magnitude, ``sign`` (+-1) for the signed ones."""
        _, height, width = image.shape
        if op == "identity":
            return image
        if op in ("shear_x", "shear_y"):
            return _shear(image, sign * self._level(0.3), op[-1], self.fill)
        if op == "translate_x":
            return _translate(image, sign * self._level(150.0 / 331.0 * width), "x", self.fill)
        if op == "translate_y":
            return _translate(image, sign * self._level(150.0 / 331.0 * height), "y", self.fill)
        if op == "rotate":
            return _rotate(image, sign * self._level(30.0), self.fill)
        factor = 1.0 + sign * self._level(0.9)
        if op == "brightness":
            return adjust_brightness(image, factor)
        if op == "color":
            return image if image.shape[0] == 1 else adjust_saturation(image, factor)
        if op == "contrast":
            return adjust_contrast(image, factor)
        if op == "sharpness":
            return _sharpness(image, factor)
        if op == "posterize":
            return _posterize(image, 8 - int(round(self.magnitude / ((self.num_magnitude_bins - 1) / 4))))
        if op == "solarize":
            return _solarize(image, 255.0 - self._level(255.0))
        if op == "autocontrast":
            return _autocontrast(image)
        if op == "equalize":
            return _equalize(image)
        raise ValueError(f"RandAugment: unknown op {op!r}; the ops are {self.OPS}")

    def apply(self, image: Image, rng: np.random.Generator) -> Image:
        if image.shape[0] not in (1, 3):
            raise ValueError(f"RandAugment: expected a 1- or 3-channel image, got shape {image.shape}")
        for _ in range(self.num_ops):
            op = self.OPS[int(rng.integers(len(self.OPS)))]
            sign = -1.0 if rng.random() < 0.5 else 1.0
            image = self.apply_op(image, op, sign)
        return image


# --------------------------------------------------------------------------- sequences


class RandomTokenMask(SequenceTransform):
    """BERT's masked-language-model corruption of a 1-D integer token array.

    Each token (other than ``special_ids``) is selected with probability ``p``. A selected token
    becomes ``mask_id`` with probability ``mask_fraction``, a random id in ``[0, vocab_size)``
    with probability ``random_fraction``, and stays as it is otherwise (BERT: 0.8 / 0.1 / 0.1).

    Returns ``(masked, labels)``: ``labels`` holds the original id at selected positions and
    ``ignore_index`` elsewhere (the loss's ignore value). For a tuple item ``(tokens, *rest)`` the
    result is ``(masked, labels, *rest)``. With ``return_labels=False``: the masked array alone
    (in place of the tokens).

    Args:
        p: the probability of selecting each token.
        mask_id: the id of the mask token.
        vocab_size: the vocabulary size, for the random replacements (required when
            ``random_fraction > 0``).
        mask_fraction: the share of selected tokens replaced by ``mask_id``.
        random_fraction: the share replaced by a random id.
        special_ids: ids never selected (padding, CLS, SEP...).
        ignore_index: the label of unselected positions.
        return_labels: also return the labels.

    Example:
        >>> import numpy as np
        >>> masked, labels = RandomTokenMask(1.0, mask_id=0, random_fraction=0.0, mask_fraction=1.0)(
        ...     np.array([5, 6, 7]), np.random.default_rng(0))
        >>> masked.tolist(), labels.tolist()
        ([0, 0, 0], [5, 6, 7])
    """

    def __init__(
        self,
        p: float,
        mask_id: int,
        vocab_size: int | None = None,
        *,
        mask_fraction: float = 0.8,
        random_fraction: float = 0.1,
        special_ids: Sequence[int] = (),
        ignore_index: int = -100,
        return_labels: bool = True,
    ) -> None:
        self.p = _probability("RandomTokenMask", "p", p)
        self.mask_id = _non_negative_int("RandomTokenMask", "mask_id", mask_id)
        self.mask_fraction = _probability("RandomTokenMask", "mask_fraction", mask_fraction)
        self.random_fraction = _probability("RandomTokenMask", "random_fraction", random_fraction)
        if self.mask_fraction + self.random_fraction > 1.0 + 1e-9:
            raise ValueError(
                f"RandomTokenMask: mask_fraction + random_fraction must be <= 1, got "
                f"{mask_fraction!r} + {random_fraction!r}"
            )
        if vocab_size is None:
            if self.random_fraction > 0:
                raise ValueError(
                    "RandomTokenMask: random_fraction > 0 replaces tokens by random ids: pass vocab_size= "
                    "(or random_fraction=0.0)"
                )
            self.vocab_size: int | None = None
        else:
            self.vocab_size = _positive_int("RandomTokenMask", "vocab_size", vocab_size)
            if self.mask_id >= self.vocab_size:
                raise ValueError(f"RandomTokenMask: mask_id {mask_id} is not below vocab_size {vocab_size}")
        self.special_ids = np.asarray(
            [_non_negative_int("RandomTokenMask", f"special_ids[{i}]", v) for i, v in enumerate(special_ids)],
            dtype=np.int64,
        )
        self.ignore_index = int(ignore_index)
        self.return_labels = bool(return_labels)

    def __call__(self, item: Any, rng: np.random.Generator) -> Any:
        if self.return_labels and isinstance(item, (tuple, list)) and item:
            masked, labels = self.apply(_check_sequence("RandomTokenMask", item[0]), rng)
            out = (masked, labels, *item[1:])
            return out if isinstance(item, tuple) else list(out)
        return super().__call__(item, rng)

    def apply(self, seq: NDArray[Any], rng: np.random.Generator) -> Any:
        if not np.issubdtype(seq.dtype, np.integer):
            raise ValueError(f"RandomTokenMask: expected integer token ids, got dtype {seq.dtype}")
        n = seq.shape[0]
        # Fixed draws per call (selection, branch, random ids) whatever is selected.
        selected = np.asarray(rng.random(n) < self.p)
        if self.special_ids.size:
            selected &= ~np.isin(seq, self.special_ids)
        branch = rng.random(n)
        masked = seq.copy()
        masked[selected & (branch < self.mask_fraction)] = self.mask_id
        if self.vocab_size is not None:
            random_ids = np.asarray(rng.integers(0, self.vocab_size, size=n))
            upper = self.mask_fraction + self.random_fraction
            replace = selected & (branch >= self.mask_fraction) & (branch < upper)
            masked[replace] = random_ids[replace]
        if not self.return_labels:
            return masked
        labels = np.full(n, self.ignore_index, dtype=np.int64)
        labels[selected] = seq[selected]
        return masked, labels


class RandomSubsequence(SequenceTransform):
    """A random window of ``length`` consecutive elements; a shorter sequence is returned whole.

    Example:
        >>> import numpy as np
        >>> out = RandomSubsequence(3)(np.arange(10), np.random.default_rng(0))
        >>> len(out), bool(np.all(np.diff(out) == 1))
        (3, True)
    """

    def __init__(self, length: int) -> None:
        self.length = _positive_int("RandomSubsequence", "length", length)

    def apply(self, seq: NDArray[Any], rng: np.random.Generator) -> Any:
        n = seq.shape[0]
        if n <= self.length:
            return seq
        start = int(rng.integers(0, n - self.length + 1))
        return seq[start : start + self.length].copy()


class PadOrTruncate(SequenceTransform):
    """Make a 1-D sequence exactly ``length`` long: cut the end, or append ``pad_id``.

    Args:
        length: the output length.
        pad_id: the padding value.
        side: where to pad and cut, "right" (the end) or "left" (the start).

    Example:
        >>> import numpy as np
        >>> PadOrTruncate(4, pad_id=0)(np.array([7, 8]), None).tolist()
        [7, 8, 0, 0]
    """

    def __init__(self, length: int, pad_id: float = 0, side: str = "right") -> None:
        self.length = _positive_int("PadOrTruncate", "length", length)
        if side not in ("right", "left"):
            raise ValueError(f"PadOrTruncate: side must be 'right' or 'left', got {side!r}")
        self.pad_id = pad_id
        self.side = side

    def apply(self, seq: NDArray[Any], rng: np.random.Generator) -> Any:
        n = seq.shape[0]
        if np.issubdtype(seq.dtype, np.integer) and not isinstance(self.pad_id, numbers.Integral):
            raise ValueError(
                f"PadOrTruncate: pad_id {self.pad_id!r} is not an integer, for {seq.dtype} tokens"
            )
        if n >= self.length:
            return (seq[: self.length] if self.side == "right" else seq[n - self.length :]).copy()
        pad = np.full(self.length - n, self.pad_id, dtype=seq.dtype)
        return np.concatenate([seq, pad] if self.side == "right" else [pad, seq])
