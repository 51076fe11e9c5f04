"""Moved to `burn.data.loader`; this path keeps importing (``burn.train.loader.X is burn.data.X``)."""

from burn.data.loader import Batcher, DataLoader, stack_batcher

__all__ = ["Batcher", "DataLoader", "stack_batcher"]
