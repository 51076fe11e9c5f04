"""burn.data.transforms: exact outputs on small arrays, determinism from the rng, targets passed
through, dtypes kept, rates over fixed-seed draws, errors; and parity with torch's bilinear
interpolation and torchvision's functional ops where those are importable."""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

from burn.data import transforms as T


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def image(shape=(3, 6, 7), dtype=np.uint8) -> np.ndarray:
    """A deterministic image whose every pixel differs (arange, wrapped for uint8)."""
    values = np.arange(int(np.prod(shape))) % 251
    return (
        values.reshape(shape).astype(dtype)
        if dtype == np.uint8
        else (values / 250).reshape(shape).astype(dtype)
    )


def torchvision_functional():
    """torch and torchvision.transforms.v2.functional, or skip (torchvision is no dependency)."""
    try:
        import torch
        from torchvision.transforms.v2 import functional
    except Exception as err:  # missing, or a build that does not load against this torch
        pytest.skip(f"torchvision is not usable here: {err!r}")
    return torch, functional


# --------------------------------------------------------------------------- composition


def test_compose_chains_in_order_with_the_same_rng() -> None:
    seen = []

    def record(tag):
        def fn(item, r):
            seen.append((tag, r))
            return item + [tag]

        return fn

    g = rng()
    assert T.Compose([record("a"), record("b")])([], g) == ["a", "b"]
    assert [tag for tag, _ in seen] == ["a", "b"]
    assert all(r is g for _, r in seen)


def test_compose_rejects_non_callables() -> None:
    with pytest.raises(TypeError, match=r"Compose: transforms\[1\] must be a callable"):
        T.Compose([T.ToFloat(), 3])
    with pytest.raises(TypeError, match="Compose: transforms must be a list"):
        T.Compose(T.ToFloat())


def test_lambda_detects_whether_the_function_takes_rng() -> None:
    x = np.zeros(3)
    assert T.Lambda(lambda item: item + 1)(x, rng()).tolist() == [1, 1, 1]
    drawn = T.Lambda(lambda item, r: item + r.integers(0, 100))(x, rng(5))
    assert drawn.tolist() == [np.random.default_rng(5).integers(0, 100)] * 3
    assert T.Lambda(np.negative, takes_rng=False)(np.ones(1), rng()).tolist() == [-1.0]
    assert T.Lambda(lambda item, scale=2: item * scale)(np.ones(1), rng()).tolist() == [2.0]
    assert T.Lambda(lambda *args: len(args))(x, rng()) == 2
    with pytest.raises(TypeError, match="Lambda: fn must be callable"):
        T.Lambda(5)


def test_lambda_gets_the_whole_tuple() -> None:
    assert T.Lambda(lambda item: item[::-1])((1, 2), rng()) == (2, 1)


def test_random_apply_rate_and_extremes() -> None:
    neg = T.Lambda(lambda x: -x)
    assert T.RandomApply(neg, p=0.0)(np.ones(1), rng())[0] == 1
    assert T.RandomApply(neg, p=1.0)(np.ones(1), rng())[0] == -1
    t = T.RandomApply([neg, T.Lambda(lambda x: x * 3)], p=0.3)
    g = rng(1)
    applied = sum(t(np.ones(1), g)[0] == -3 for _ in range(2000))
    assert 0.27 < applied / 2000 < 0.33
    with pytest.raises(ValueError, match=r"RandomApply: p must be a probability in \[0, 1\], got 1.5"):
        T.RandomApply(neg, p=1.5)
    with pytest.raises(TypeError, match="RandomApply: transform must be a callable"):
        T.RandomApply("flip")


def test_random_choice_probabilities() -> None:
    plus, minus = T.Lambda(lambda x: x + 1), T.Lambda(lambda x: x - 1)
    assert T.RandomChoice([plus, minus], p=[0.0, 1.0])(0, rng()) == -1
    g = rng(2)
    picks = [T.RandomChoice([plus, minus, T.Lambda(lambda x: x)])(0, g) for _ in range(3000)]
    counts = np.array([picks.count(v) for v in (1, -1, 0)]) / 3000
    assert np.all(np.abs(counts - 1 / 3) < 0.03)
    with pytest.raises(ValueError, match="RandomChoice: transforms must be a non-empty list"):
        T.RandomChoice([])
    with pytest.raises(ValueError, match="one probability per transform"):
        T.RandomChoice([plus, minus], p=[0.5, 0.2])


# --------------------------------------------------------------------------- checks shared by images


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            np.zeros((8, 8), np.uint8),
            r"RandomCrop: expected a \(C, H, W\) image of dtype uint8 or float32, got "
            r"shape \(8, 8\) dtype uint8",
        ),
        (np.zeros((3, 8, 8), np.float64), r"got shape \(3, 8, 8\) dtype float64"),
        (np.zeros((3, 8, 8), np.int32), r"dtype int32"),
    ],
)
def test_image_transforms_reject_bad_arrays(bad, message) -> None:
    with pytest.raises(ValueError, match=message):
        T.RandomCrop(4)(bad, rng())


def test_image_transforms_reject_non_arrays() -> None:
    with pytest.raises(
        TypeError, match=r"RandomHorizontalFlip: expected a \(C, H, W\) NumPy array, got list"
    ):
        T.RandomHorizontalFlip()([[1, 2]], rng())
    with pytest.raises(ValueError, match="empty tuple"):
        T.ToFloat()((), rng())


ALL_IMAGE_TRANSFORMS = [
    T.RandomCrop(4, padding=2),
    T.RandomCrop(5, padding=(1, 2), padding_mode="reflect"),
    T.CenterCrop((3, 4)),
    T.RandomResizedCrop((5, 4)),
    T.Resize(9),
    T.RandomHorizontalFlip(),
    T.RandomVerticalFlip(),
    T.ColorJitter(0.4, 0.4, 0.4, 0.1),
    T.RandomErasing(p=1.0),
    T.RandAugment(num_ops=3),
]


@pytest.mark.parametrize("t", ALL_IMAGE_TRANSFORMS, ids=lambda t: type(t).__name__)
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_dtype_kept_targets_passed_and_seed_determines_output(t, dtype) -> None:
    x = image(dtype=dtype)
    before = x.copy()
    out, label, extra = t((x, 3, "meta"), rng(7))
    assert out.dtype == dtype and (label, extra) == (3, "meta")
    np.testing.assert_array_equal(x, before)  # never in place
    np.testing.assert_array_equal(t(x, rng(7)), out)
    as_list = t([x, 3], rng(7))
    assert isinstance(as_list, list) and as_list[1] == 3
    np.testing.assert_array_equal(as_list[0], out)


@pytest.mark.parametrize("t", ALL_IMAGE_TRANSFORMS, ids=lambda t: type(t).__name__)
def test_different_seeds_give_different_outputs(t) -> None:
    x = image(dtype=np.float32)
    outs = {t(x, rng(seed)).tobytes() for seed in range(12)}
    deterministic = isinstance(t, (T.CenterCrop, T.Resize))
    assert len(outs) == 1 if deterministic else len(outs) > 1


def test_no_global_numpy_state_is_used() -> None:
    pipeline = T.Compose([*ALL_IMAGE_TRANSFORMS[:3], ALL_IMAGE_TRANSFORMS[-1]])
    np.random.seed(0)
    a = pipeline(image(), rng(3))
    state = np.random.get_state()
    np.random.seed(12345)
    b = pipeline(image(), rng(3))
    np.testing.assert_array_equal(a, b)
    np.random.seed(0)
    pipeline(image(), rng(3))
    assert np.random.get_state()[1].tolist() == state[1].tolist()  # the global state was not drawn from


# --------------------------------------------------------------------------- crops


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_random_crop_of_padded_arange_is_the_slice_of_the_drawn_corner(mode, dtype) -> None:
    x = image((2, 5, 6), dtype)
    for seed in range(20):
        out = T.RandomCrop((4, 3), padding=2, padding_mode=mode, fill=9)(x, rng(seed))
        g = rng(seed)
        top, left = g.integers(0, 9 - 4 + 1), g.integers(0, 10 - 3 + 1)
        kwargs = {"constant_values": 9} if mode == "constant" else {}
        padded = np.pad(x, ((0, 0), (2, 2), (2, 2)), mode=mode, **kwargs)
        np.testing.assert_array_equal(out, padded[:, top : top + 4, left : left + 3])


def test_random_crop_cifar_reaches_every_offset_uniformly() -> None:
    t = T.RandomCrop(32, padding=4)
    x = np.zeros((1, 32, 32), np.uint8)
    x[0, 0, 0] = 255  # find the offset from where the marked pixel lands
    g = rng(4)
    offsets = []
    for _ in range(4000):
        ys, xs = np.nonzero(t(x, g)[0])
        offsets.append((int(ys[0]), int(xs[0])) if len(ys) else None)
    marked = [o for o in offsets if o is not None]
    # the marked pixel stays in view for crops starting at padded offsets 0..4 (25 of the 81)
    assert abs(len(marked) / 4000 - 25 / 81) < 0.03
    assert set(marked) == {(4 - i, 4 - j) for i in range(5) for j in range(5)}


def test_random_crop_padding_forms() -> None:
    x = image((1, 2, 3))
    # (left/right, top/bottom) and (left, top, right, bottom), as torchvision reads them
    out = T.RandomCrop((2, 7), padding=(2, 0))(x, rng())
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (0, 0), (2, 2))))
    out = T.RandomCrop((3, 4), padding=(1, 0, 0, 1))(x, rng())
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (0, 1), (1, 0))))


def test_random_crop_sizes_and_errors() -> None:
    x = image((3, 4, 4))
    with pytest.raises(
        ValueError, match=r"RandomCrop: size \(6, 6\) is larger than the padded image \(4, 4\)"
    ):
        T.RandomCrop(6)(x, rng())
    assert T.RandomCrop(6, pad_if_needed=True)(x, rng()).shape == (3, 6, 6)
    out = T.RandomCrop(4)(x, rng())
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)
    with pytest.raises(ValueError, match="RandomCrop: padding_mode must be one of"):
        T.RandomCrop(4, padding_mode="wrap")
    with pytest.raises(ValueError, match=r"RandomCrop: size\[0\] must be a positive int, got 0"):
        T.RandomCrop((0, 3))
    with pytest.raises(ValueError, match=r"RandomCrop: padding must be an int >= 0, got -1"):
        T.RandomCrop(3, padding=-1)
    with pytest.raises(ValueError, match="RandomCrop: padding must be an int, "):
        T.RandomCrop(3, padding=(1, 2, 3))


def test_center_crop_exact() -> None:
    x = np.arange(30, dtype=np.float32).reshape(1, 5, 6)
    np.testing.assert_array_equal(T.CenterCrop((3, 2))(x, rng()), x[:, 1:4, 2:4])
    np.testing.assert_array_equal(T.CenterCrop(4)(x, rng()), x[:, 0:4, 1:5])  # round(0.5) = 0
    with pytest.raises(
        ValueError, match=r"CenterCrop: size \(6, 6\) is larger than the image, shape \(1, 5, 6\)"
    ):
        T.CenterCrop(6)(x, rng())


# --------------------------------------------------------------------------- resizing


def test_resize_exact_small_cases() -> None:
    x = np.array([[[0.0, 4.0]]], np.float32)
    # output pixel centres at input x = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (read as 1)
    np.testing.assert_allclose(T.Resize((1, 4))(x, rng())[0, 0], [0.0, 1.0, 3.0, 4.0])
    np.testing.assert_allclose(T.Resize((1, 1))(x, rng())[0, 0], [2.0])
    const = np.full((3, 5, 7), 77, np.uint8)
    out = T.Resize((3, 11))(const, rng())
    assert out.dtype == np.uint8 and np.all(out == 77)
    assert T.Resize(4)(image((3, 8, 12)), rng()).shape == (3, 4, 6)  # shorter side to 4
    assert T.Resize(5)(image((3, 12, 8)), rng()).shape == (3, 7, 5)  # 12 * 5 / 8 = 7.5 -> 7
    with pytest.raises(ValueError, match="Resize: size must be a positive int, got -2"):
        T.Resize(-2)


@pytest.mark.parametrize("size", [(4, 5), (9, 13), (6, 7), (1, 2)])
def test_resize_matches_torch_bilinear(size) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    x = rng(0).random((3, 6, 7), dtype=np.float32)
    expected = torch.nn.functional.interpolate(
        torch.from_numpy(x)[None], size=size, mode="bilinear", align_corners=False, antialias=False
    )[0].numpy()
    np.testing.assert_allclose(T.Resize(size)(x, rng()), expected, rtol=1e-5, atol=1e-6)


def test_random_resized_crop_window_statistics() -> None:
    t = T.RandomResizedCrop(8, scale=(0.2, 0.6), ratio=(0.5, 2.0))
    g = rng(6)
    areas, ratios = [], []
    for _ in range(1000):
        top, left, h, w = t.window(40, 50, g)
        assert 0 <= top and top + h <= 40 and 0 <= left and left + w <= 50
        areas.append(h * w / 2000)
        ratios.append(w / h)
    # rounding h and w moves the area and ratio a little past the drawn ranges
    assert 0.18 < min(areas) and max(areas) < 0.63 and abs(np.mean(areas) - 0.4) < 0.02
    assert 0.45 < min(ratios) and max(ratios) < 2.2 and abs(np.mean(np.log(ratios))) < 0.05


def test_random_resized_crop_fallback_is_the_clamped_centre() -> None:
    # no (scale, ratio) draw fits a 4 x 100 strip with ratio <= 4/3: the centre 4 x 5 crop
    t = T.RandomResizedCrop(3, scale=(0.9, 1.0))
    assert t.window(4, 100, rng()) == (0, 47, 4, 5)
    x = image((1, 4, 100), np.float32)
    np.testing.assert_allclose(t(x, rng()), T.Resize((3, 3))(x[:, :, 47:52], rng()))


def test_random_resized_crop_matches_torchvision_output_size() -> None:
    torch, F = torchvision_functional()
    from torchvision.transforms import v2

    for size in [(5, 4), (17, 9), 12]:
        x = image((3, 20, 30))
        ours = T.RandomResizedCrop(size)(x, rng())
        theirs = v2.RandomResizedCrop(size)(torch.from_numpy(x))
        assert ours.shape == tuple(theirs.shape) and ours.dtype == np.uint8


def test_random_resized_crop_errors() -> None:
    with pytest.raises(
        ValueError, match=r"RandomResizedCrop: scale must satisfy 0.0 <= min <= max, got \(0.9, 0.1\)"
    ):
        T.RandomResizedCrop(4, scale=(0.9, 0.1))
    with pytest.raises(ValueError, match="RandomResizedCrop: ratio must be positive"):
        T.RandomResizedCrop(4, ratio=(0.0, 1.0))


# --------------------------------------------------------------------------- flips


@pytest.mark.parametrize("t, axis", [(T.RandomHorizontalFlip, 2), (T.RandomVerticalFlip, 1)])
def test_flips_are_np_flip_at_rate_p(t, axis) -> None:
    x = image()
    np.testing.assert_array_equal(t(p=1.0)(x, rng()), np.flip(x, axis=axis))
    assert t(p=0.0)(x, rng()) is x
    flip = t(p=0.3)
    g = rng(8)
    flipped = 0
    for _ in range(2000):
        out = flip(x, g)
        assert np.array_equal(out, x) or np.array_equal(out, np.flip(x, axis=axis))
        flipped += not np.array_equal(out, x)
    assert abs(flipped / 2000 - 0.3) < 0.03
    with pytest.raises(ValueError, match=rf"{t.__name__}: p must be a probability"):
        t(p=-0.1)
    with pytest.raises(TypeError, match="rng is None"):
        flip(x, None)


# --------------------------------------------------------------------------- values


def test_to_float_and_normalize_exact() -> None:
    x = np.array([[[0, 51, 255]]], np.uint8)
    np.testing.assert_allclose(T.ToFloat()(x, rng()), [[[0.0, 0.2, 1.0]]], rtol=1e-7)
    f = np.array([[[0.5]]], np.float32)
    assert T.ToFloat()(f, rng()) is f
    out = T.Normalize([0.2], [0.4])(x, rng())
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[[-0.5, 0.0, 2.0]]], rtol=1e-6, atol=1e-7)
    rgb = np.ones((3, 2, 2), np.float32)
    out = T.Normalize((0.0, 0.5, 1.0), (1.0, 0.5, 0.25))(rgb, rng())
    np.testing.assert_allclose(out[:, 0, 0], [1.0, 1.0, 0.0])


def test_normalize_errors() -> None:
    with pytest.raises(
        ValueError, match=r"Normalize: 2 mean/std values for an image of 3 channels \(shape \(3, 6, 7\)\)"
    ):
        T.Normalize([0.1, 0.2], [1, 1])(image(), rng())
    with pytest.raises(ValueError, match="Normalize: std must be positive"):
        T.Normalize([0.1], [0.0])
    with pytest.raises(ValueError, match="Normalize: mean and std must have the same length"):
        T.Normalize([0.1, 0.2], [1.0])
    with pytest.raises(ValueError, match="Normalize: mean must be a list of numbers"):
        T.Normalize(["a"], [1.0])


def test_normalize_matches_torchvision() -> None:
    torch, F = torchvision_functional()
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    x = image((3, 8, 8))
    expected = F.normalize(F.to_dtype(torch.from_numpy(x), torch.float32, scale=True), mean, std).numpy()
    np.testing.assert_allclose(T.Normalize(mean, std)(x, rng()), expected, rtol=1e-5, atol=1e-6)


def fixed(**kwargs) -> T.ColorJitter:
    """A ColorJitter whose factors are fixed (degenerate ranges)."""
    return T.ColorJitter(**{name: (v, v) for name, v in kwargs.items()})


def test_color_jitter_formulas_exact() -> None:
    x = np.array([[[0.2, 0.8]], [[0.4, 0.4]], [[0.6, 0.0]]], np.float32)
    np.testing.assert_allclose(fixed(brightness=1.5)(x, rng()), np.clip(1.5 * x, 0, 1), rtol=1e-6)
    gray = 0.2989 * x[0] + 0.587 * x[1] + 0.114 * x[2]
    np.testing.assert_allclose(fixed(contrast=0.5)(x, rng()), 0.5 * x + 0.5 * gray.mean(), rtol=1e-6)
    np.testing.assert_allclose(fixed(saturation=0.0)(x, rng()), np.broadcast_to(gray, x.shape), rtol=1e-6)
    u8 = np.array([[[100, 200]]], np.uint8)
    np.testing.assert_array_equal(fixed(brightness=1.3)(u8, rng()), [[[130, 255]]])
    np.testing.assert_array_equal(fixed(contrast=0.0)(u8, rng()), [[[150, 150]]])


def test_color_jitter_hue_turns_the_colour_wheel() -> None:
    red = np.zeros((3, 1, 2), np.float32)
    red[0] = 1.0
    np.testing.assert_allclose(fixed(hue=1 / 3)(red, rng())[:, 0, 0], [0, 1, 0], atol=1e-6)
    np.testing.assert_allclose(fixed(hue=-1 / 3)(red, rng())[:, 0, 0], [0, 0, 1], atol=1e-6)
    x = rng(3).random((3, 5, 5), dtype=np.float32)
    np.testing.assert_allclose(fixed(hue=0.0)(x, rng()), x, atol=1e-6)
    u8 = image()
    np.testing.assert_array_equal(fixed(hue=0.0)(u8, rng()), u8)


def test_rgb_hsv_conversion_matches_colorsys_and_round_trips() -> None:
    x = rng(9).random((3, 6, 6), dtype=np.float32)
    x[:, 0, 0] = 0.5  # gray: hue and saturation 0
    x[:, 0, 1] = 0.0  # black
    hsv = T.rgb_to_hsv(x)
    for i, j in [(0, 0), (0, 1), (2, 3), (5, 5), (4, 1)]:
        np.testing.assert_allclose(hsv[:, i, j], colorsys.rgb_to_hsv(*x[:, i, j]), atol=1e-6)
    np.testing.assert_allclose(T.hsv_to_rgb(hsv), x, atol=1e-6)


@pytest.mark.parametrize(
    "name, value", [("brightness", 1.6), ("contrast", 0.3), ("saturation", 1.8), ("hue", 0.23)]
)
def test_color_jitter_matches_torchvision(name, value) -> None:
    torch, F = torchvision_functional()
    op = getattr(F, f"adjust_{name}")
    x = rng(1).random((3, 9, 10), dtype=np.float32)
    expected = op(torch.from_numpy(x), value).numpy()
    np.testing.assert_allclose(fixed(**{name: value})(x, rng()), expected, atol=1e-5)
    u8 = image((3, 9, 10))
    expected = op(torch.from_numpy(u8), value).numpy().astype(int)
    # torchvision truncates uint8 results, we round: at most one apart
    assert np.abs(fixed(**{name: value})(u8, rng()).astype(int) - expected).max() <= 1


def test_color_jitter_draws_in_range_and_in_random_order() -> None:
    x = np.full((3, 2, 2), 0.5, np.float32)
    g = rng(10)
    values = [float(T.ColorJitter(brightness=0.4)(x, g)[0, 0, 0]) for _ in range(500)]
    assert 0.5 * 0.6 <= min(values) < 0.5 * 0.65 and 0.5 * 1.35 < max(values) <= 0.5 * 1.4
    # brightness 4 clips before a contrast-0 flattening (mean 0.7) but not after it (0.2 * 4):
    # both orders occur
    t = T.ColorJitter(brightness=(4.0, 4.0), contrast=(0.0, 0.0))
    y = np.array([[[0.1, 0.3]]], np.float32)
    outs = {tuple(round(float(v), 5) for v in t(y, g)[0, 0]) for _ in range(50)}
    assert outs == {(0.7, 0.7), (0.8, 0.8)}


def test_color_jitter_errors() -> None:
    with pytest.raises(ValueError, match=r"ColorJitter: hue must lie in \[0, 0.5\], got 0.7"):
        T.ColorJitter(hue=0.7)
    with pytest.raises(ValueError, match="ColorJitter: brightness must be >= 0, got -1"):
        T.ColorJitter(brightness=-1)
    with pytest.raises(
        ValueError, match=r"ColorJitter: saturation/hue needs a 3-channel RGB image, got shape \(1, 6, 7\)"
    ):
        T.ColorJitter(saturation=0.5)(image((1, 6, 7)), rng())
    # brightness and contrast work on one channel
    assert T.ColorJitter(0.5, 0.5)(image((1, 6, 7)), rng()).shape == (1, 6, 7)


def test_random_erasing_erases_one_rectangle() -> None:
    t = T.RandomErasing(p=1.0, scale=(0.1, 0.2), value=(5, 6, 7))
    g = rng(11)
    x = np.zeros((3, 20, 20), np.uint8)
    for _ in range(50):
        out = t(x, g)
        changed = out[0] != 0
        ys, xs = np.nonzero(changed)
        box = changed[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        assert box.all() and changed.sum() == box.size  # one filled rectangle
        assert 0.08 <= box.size / 400 <= 0.23
        assert (out[:, ys[0], xs[0]] == [5, 6, 7]).all()
    assert T.RandomErasing(p=0.0)(x, g) is x
    noisy = T.RandomErasing(p=1.0, value="random")(np.zeros((3, 20, 20), np.float32), g)
    assert noisy.dtype == np.float32 and (noisy != 0).sum() > 0


def test_random_erasing_rate_and_errors() -> None:
    t = T.RandomErasing(p=0.25)
    g = rng(12)
    x = np.ones((1, 16, 16), np.float32)
    rate = np.mean([t(x, g) is not x for _ in range(2000)])
    assert abs(rate - 0.25) < 0.03
    with pytest.raises(
        ValueError, match="RandomErasing: value must be a number, a list or 'random', got 'noise'"
    ):
        T.RandomErasing(value="noise")
    with pytest.raises(ValueError, match=r"RandomErasing: 2 fill values for an image of 3 channels"):
        T.RandomErasing(p=1.0, value=(1, 2))(image(), rng())


# --------------------------------------------------------------------------- RandAugment


@pytest.mark.parametrize("op", T.RandAugment.OPS)
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("channels", [1, 3])
def test_rand_augment_every_op_keeps_shape_dtype_and_range(op, dtype, channels) -> None:
    x = image((channels, 9, 8), dtype)
    for sign in (-1.0, 1.0):
        out = T.RandAugment(magnitude=20).apply_op(x, op, sign)
        assert out.shape == x.shape and out.dtype == dtype
        assert out.min() >= 0 and out.max() <= (255 if dtype == np.uint8 else 1.0)


def test_rand_augment_ops_exact() -> None:
    x = image((1, 5, 5))
    top = T.RandAugment(magnitude=30)  # the top of each scale
    for op in ("identity", "shear_x", "translate_y", "rotate", "brightness", "posterize"):
        np.testing.assert_array_equal(T.RandAugment(magnitude=0).apply_op(x, op, 1.0), x)
    # translate by 150/331 of 5 = 2.27 -> 2 pixels, uncovered pixels filled
    moved = T.RandAugment(magnitude=30, fill=1).apply_op(x, "translate_x", 1.0)
    np.testing.assert_array_equal(moved[:, :, 2:], x[:, :, :3])
    assert (moved[:, :, :2] == 1).all()
    np.testing.assert_array_equal(top.apply_op(x, "posterize", 1.0), x & 0xF0)
    np.testing.assert_array_equal(top.apply_op(x, "solarize", 1.0), 255 - x)  # threshold 0
    stretched = top.apply_op(np.array([[[10, 20, 30]]], np.uint8), "autocontrast", 1.0)
    np.testing.assert_array_equal(stretched, [[[0, 128, 255]]])


def test_rotate_by_a_quarter_turn_is_rot90() -> None:
    from burn.data.transforms import _rotate

    x = image((2, 5, 5))
    np.testing.assert_array_equal(_rotate(x, 90.0, fill=0), np.rot90(x, k=1, axes=(1, 2)))


def test_rand_augment_matches_torchvision_pixel_ops() -> None:
    torch, F = torchvision_functional()
    x = image((3, 10, 12))
    t = torch.from_numpy(x)
    aug = T.RandAugment(magnitude=30)
    np.testing.assert_array_equal(aug.apply_op(x, "equalize", 1.0), F.equalize(t).numpy())
    # torchvision truncates uint8 results, we round: at most one apart
    ours = aug.apply_op(x, "autocontrast", 1.0).astype(int)
    assert np.abs(ours - F.autocontrast(t).numpy()).max() <= 1
    y = rng(2).random((3, 10, 12), dtype=np.float32)
    np.testing.assert_allclose(
        aug.apply_op(y, "autocontrast", 1.0), F.autocontrast(torch.from_numpy(y)).numpy(), atol=1e-6
    )
    np.testing.assert_array_equal(aug.apply_op(x, "posterize", 1.0), F.posterize(t, 4).numpy())
    np.testing.assert_allclose(
        aug.apply_op(y, "sharpness", 1.0), F.adjust_sharpness(torch.from_numpy(y), 1.9).numpy(), atol=1e-5
    )


def test_rand_augment_draws_ops_uniformly() -> None:
    aug = T.RandAugment(num_ops=1)
    calls = []
    aug.apply_op = lambda image, op, sign: calls.append(op) or image  # type: ignore[method-assign]
    g = rng(13)
    for _ in range(2800):
        aug(image(), g)
    counts = np.array([calls.count(op) for op in T.RandAugment.OPS])
    assert np.all(np.abs(counts / 2800 - 1 / len(T.RandAugment.OPS)) < 0.02)


def test_rand_augment_errors() -> None:
    with pytest.raises(
        ValueError, match=r"RandAugment: magnitude must be < num_magnitude_bins \(31\), got 31"
    ):
        T.RandAugment(magnitude=31)
    with pytest.raises(
        ValueError, match=r"RandAugment: expected a 1- or 3-channel image, got shape \(2, 6, 7\)"
    ):
        T.RandAugment()(image((2, 6, 7)), rng())


# --------------------------------------------------------------------------- sequences


def test_token_mask_rates_labels_and_special_ids() -> None:
    tokens = np.tile(np.arange(1, 101), 200)  # 20000 tokens; id 1 is special
    t = T.RandomTokenMask(0.15, mask_id=0, vocab_size=1000, special_ids=[1])
    masked, labels = t(tokens, rng(14))
    selected = labels != -100
    assert abs(selected.mean() - 0.15 * 99 / 100) < 0.01
    assert not selected[tokens == 1].any() and (masked[tokens == 1] == 1).all()
    np.testing.assert_array_equal(labels[selected], tokens[selected])
    np.testing.assert_array_equal(masked[~selected], tokens[~selected])
    is_mask = masked[selected] == 0
    unchanged = masked[selected] == tokens[selected]
    assert abs(is_mask.mean() - 0.8) < 0.03
    assert abs(unchanged.mean() - 0.1) < 0.02  # (a random id equal to the original: ~0.1%)
    assert masked.dtype == tokens.dtype and labels.dtype == np.int64
    again, again_labels = t(tokens, rng(14))
    np.testing.assert_array_equal(again, masked)
    np.testing.assert_array_equal(again_labels, labels)


def test_token_mask_tuples_and_no_labels() -> None:
    tokens = np.array([5, 6, 7, 8])
    t = T.RandomTokenMask(1.0, mask_id=0, mask_fraction=1.0, random_fraction=0.0)
    masked, labels, target = t((tokens, "y"), rng())
    assert masked.tolist() == [0, 0, 0, 0] and labels.tolist() == [5, 6, 7, 8] and target == "y"
    no_labels = T.RandomTokenMask(1.0, mask_id=0, random_fraction=0.0, mask_fraction=1.0, return_labels=False)
    out, target = no_labels((tokens, "y"), rng())
    assert out.tolist() == [0, 0, 0, 0] and target == "y"


def test_token_mask_errors() -> None:
    with pytest.raises(ValueError, match="RandomTokenMask: random_fraction > 0 .* pass vocab_size="):
        T.RandomTokenMask(0.15, mask_id=3)
    with pytest.raises(ValueError, match="RandomTokenMask: expected integer token ids, got dtype float32"):
        T.RandomTokenMask(0.15, 3, random_fraction=0.0)(np.zeros(4, np.float32), rng())
    with pytest.raises(
        ValueError, match=r"RandomTokenMask: expected a 1-D NumPy array of tokens, got \(2, 2\)"
    ):
        T.RandomTokenMask(0.15, 3, random_fraction=0.0)(np.zeros((2, 2), np.int64), rng())
    with pytest.raises(ValueError, match="mask_fraction \\+ random_fraction must be <= 1"):
        T.RandomTokenMask(0.15, 3, 10, mask_fraction=0.95)


def test_random_subsequence_is_the_window_at_the_drawn_start() -> None:
    seq = np.arange(100, 120)
    for seed in range(10):
        start = rng(seed).integers(0, 20 - 6 + 1)
        out = T.RandomSubsequence(6)((seq, 1), rng(seed))
        assert out[1] == 1
        np.testing.assert_array_equal(out[0], seq[start : start + 6])
    assert T.RandomSubsequence(30)(seq, rng()) is seq
    starts = {int(T.RandomSubsequence(6)(seq, rng(s))[0]) for s in range(300)}
    assert starts == set(range(100, 115))
    with pytest.raises(ValueError, match="RandomSubsequence: length must be a positive int, got 0"):
        T.RandomSubsequence(0)


def test_pad_or_truncate() -> None:
    seq = np.array([1, 2, 3], np.int32)
    right = T.PadOrTruncate(5, pad_id=9)(seq, rng())
    assert right.tolist() == [1, 2, 3, 9, 9] and right.dtype == np.int32
    assert T.PadOrTruncate(5, 9, side="left")(seq, rng()).tolist() == [9, 9, 1, 2, 3]
    assert T.PadOrTruncate(2)(seq, rng()).tolist() == [1, 2]
    assert T.PadOrTruncate(2, side="left")(seq, rng()).tolist() == [2, 3]
    assert T.PadOrTruncate(3)((seq, 0), rng())[1] == 0
    with pytest.raises(ValueError, match="PadOrTruncate: side must be 'right' or 'left', got 'top'"):
        T.PadOrTruncate(3, side="top")
    with pytest.raises(ValueError, match="PadOrTruncate: pad_id 0.5 is not an integer, for int32 tokens"):
        T.PadOrTruncate(5, pad_id=0.5)(seq, rng())
    assert T.PadOrTruncate(4, pad_id=0.5)(np.zeros(2, np.float32), rng()).tolist() == [0, 0, 0.5, 0.5]


def test_pipelines_pickle_for_worker_processes() -> None:
    import pickle

    pipeline = T.Compose(
        [
            T.RandomCrop(4, padding=1),
            T.RandomApply(T.ColorJitter(0.3, 0.3), p=0.5),
            T.RandAugment(),
            T.Normalize([0.5], [0.2]),
        ]
    )
    clone = pickle.loads(pickle.dumps(pipeline))
    for seed in range(5):
        np.testing.assert_array_equal(clone(image(), rng(seed)), pipeline(image(), rng(seed)))


def test_docstring_examples_run() -> None:
    import doctest

    result = doctest.testmod(T)
    assert result.attempted > 20 and result.failed == 0
