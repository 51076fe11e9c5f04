"""A PNG of the metrics per epoch, when matplotlib is installed (``pip install burn-core[plot]``)."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path
from typing import BinaryIO

from burn.record._io import atomic_write
from burn.train.history import History

PLOT_NAME = "metrics.png"
MISSING_MATPLOTLIB = "matplotlib is not installed (pip install 'burn-core[plot]'): no plot written"


def matplotlib_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def plot_history(history: History, path: str | Path) -> Path | None:
    """Draw one panel per metric (train and valid curves over epochs) into a PNG at `path`.

    Returns the path, or None when matplotlib is not installed (see `MISSING_MATPLOTLIB`).

    Example:
        >>> h = History(); h.add_epoch("train", 1, {"loss": 1.0}); h.add_epoch("train", 2, {"loss": 0.5})
        >>> plot_history(h, "metrics.png")  # doctest: +SKIP
        PosixPath('metrics.png')
    """
    if not matplotlib_available():
        return None
    import matplotlib

    matplotlib.use("Agg")  # no display needed; must run before pyplot is imported
    import matplotlib.pyplot as plt

    names = history.metric_names()
    if not names:
        raise ValueError("plot_history: the history holds no epoch metrics yet")
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.4), squeeze=False)
    try:
        for ax, name in zip(axes[0], names, strict=True):
            for split, style in (("train", "-o"), ("valid", "--s")):
                points = [(e, v) for e, v in history.series(name, split) if v is not None]
                if points:
                    epochs, values = zip(*points, strict=True)
                    ax.plot(epochs, values, style, label=split, markersize=3)
            ax.set_title(name)
            ax.set_xlabel("epoch")
            ax.grid(alpha=0.3)
            ax.legend()
        fig.tight_layout()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Render in memory, then write beside the target and rename, so a reader never sees half a
        # PNG; atomic_write creates the file with the user's umask (mkstemp would make it 0600).
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=100)

        def write(f: BinaryIO) -> None:
            f.write(png.getbuffer())

        atomic_write(path, write)
    finally:
        plt.close(fig)
    return path
