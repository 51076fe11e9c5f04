"""Object-detection ops: ``NonMaxSuppression``, on the host (its output size depends on the
values, and the greedy selection is sequential)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.onnx.errors import OnnxError
from burn.onnx.ops import register_host

if TYPE_CHECKING:
    from burn.onnx.graph import Node


def _corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    """[n, 4] boxes as (y_min, x_min, y_max, x_max) in float64."""
    b = boxes.astype(np.float64)
    if center_point_box:  # (x_center, y_center, width, height)
        xc, yc, w, h = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
        return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], 1)
    # two corners in either order
    return np.stack([np.minimum(b[:, 0], b[:, 2]), np.minimum(b[:, 1], b[:, 3]),
                     np.maximum(b[:, 0], b[:, 2]), np.maximum(b[:, 1], b[:, 3])], 1)


def _overlaps(box: np.ndarray, others: np.ndarray, threshold: float) -> np.ndarray:
    """Whether `box` overlaps each of `others` by an IoU above `threshold` (boxes without area
    or intersection never do)."""
    top = np.maximum(box[0], others[:, 0])
    left = np.maximum(box[1], others[:, 1])
    bottom = np.minimum(box[2], others[:, 2])
    right = np.minimum(box[3], others[:, 3])
    inter = np.clip(bottom - top, 0, None) * np.clip(right - left, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where((inter > 0) & (area > 0) & (areas > 0) & (union > 0), inter / union, 0.0)
    return iou > threshold  # type: ignore[no-any-return]


def _scalar(inputs: Sequence[Any], i: int, default: float) -> float:
    if len(inputs) <= i or inputs[i] is None or np.size(inputs[i]) == 0:
        return default
    return float(np.asarray(inputs[i]).reshape(-1)[0])


@register_host("NonMaxSuppression", "index", "runs on the host (its output size depends on the values)")
def _non_max_suppression(node: Node, inputs: Sequence[Any]) -> list[Any]:
    boxes, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or scores.shape[0] != boxes.shape[0] \
            or scores.shape[2] != boxes.shape[1]:
        raise OnnxError(
            f"node {node.name!r} (NonMaxSuppression): needs boxes [batch, n, 4] and scores "
            f"[batch, classes, n], got {list(boxes.shape)} and {list(scores.shape)}"
        )
    limit = int(_scalar(inputs, 2, 0))
    iou_threshold = _scalar(inputs, 3, 0.0)
    has_score_threshold = len(inputs) > 4 and inputs[4] is not None and np.size(inputs[4]) > 0
    score_threshold = _scalar(inputs, 4, 0.0)
    center = int(node.attr("center_point_box", 0))
    selected: list[tuple[int, int, int]] = []
    for b in range(boxes.shape[0]):
        corners = _corners(boxes[b], center)
        for c in range(scores.shape[1]):
            s = scores[b, c].astype(np.float64)
            # best score first; equal scores: the lower index first
            order = np.lexsort((np.arange(s.size), -s))
            if has_score_threshold:
                order = order[s[order] > score_threshold]
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if kept and _overlaps(corners[i], corners[kept], iou_threshold).any():
                    continue
                kept.append(int(i))
            selected.extend((b, c, i) for i in kept)
    return [np.asarray(selected, np.int64).reshape(-1, 3)]
