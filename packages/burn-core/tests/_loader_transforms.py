"""Transforms for the DataLoader worker tests, at module level so worker processes can unpickle them.

Items are ``(image, label)`` pairs where the label is the item's dataset index, so a transform can
fail on a chosen item.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np


def crop_flip(item: tuple[np.ndarray, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    """A random 2-pixel-padded crop and a random horizontal flip of a (C, H, W) image, plus noise."""
    image, label = item
    _, h, w = image.shape
    padded = np.pad(image, ((0, 0), (2, 2), (2, 2)))
    top, left = rng.integers(0, 5, size=2)
    out = padded[:, top : top + h, left : left + w]
    if rng.random() < 0.5:
        out = out[:, :, ::-1]
    return (out + rng.normal(size=out.shape)).astype(np.float32), label


def fail_on_13(item: tuple[np.ndarray, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    if int(item[1]) == 13:
        raise ValueError("item thirteen is bad")
    return item


class NeedsTwoArgs(Exception):
    """An exception that does not unpickle (its __init__ takes two arguments, its args hold one)."""

    def __init__(self, what: str, code: int) -> None:
        super().__init__(f"{what} (code {code})")


def fail_unpicklable_on_7(item: tuple[np.ndarray, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    if int(item[1]) == 7:
        raise NeedsTwoArgs("a custom failure", 42)
    return item


def exit_on_5(item: tuple[np.ndarray, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    if int(item[1]) == 5:
        os._exit(3)  # a worker dying without a word (as on a crash in C code)
    return item


def arrays_batcher(items: list[Any], device: Any) -> tuple[np.ndarray, np.ndarray]:
    """Stacks ``(image, label)`` items into NumPy arrays (no backend needed)."""
    return np.stack([i[0] for i in items]), np.array([int(i[1]) for i in items])


def slow_on_0(item: tuple[np.ndarray, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    """Item 0 takes a second: its batch is late, the others are not."""
    if int(item[1]) == 0:
        import time

        time.sleep(1.0)
    return item
