"""Loss functions with Burn's configs and reductions.

Every loss's ``forward`` takes a `reduction` (``"mean"``, ``"sum"``, ``"none"``, or the enum
`Reduction`; the default ``AUTO`` is the loss's natural reduction, as in Burn and PyTorch). A
reduced loss is a tensor of shape ``(1,)`` (Burn's full reductions); ``"none"`` (or
``forward_no_reduction``) gives the per-element (or per-sample) losses. `CrossEntropyLoss` and
`BinaryCrossEntropyLoss` average by default, as Burn's; with class weights (and pad tokens) the
mean is the weighted one, ``sum(w_y * l) / sum(w_y)``, as PyTorch's.

Example:
    >>> from burn import nn
    >>> loss = nn.CrossEntropyLossConfig(smoothing=0.1).init(device)  # doctest: +SKIP
    >>> loss(logits, targets).shape  # logits [B, C], targets Int [B]  # doctest: +SKIP
    (1,)
"""

from burn.nn.loss._reduction import Reduction
from burn.nn.loss.classification import (
    BinaryCrossEntropyLoss,
    BinaryCrossEntropyLossConfig,
    CrossEntropyLoss,
    CrossEntropyLossConfig,
)
from burn.nn.loss.ctc import CtcLoss, CtcLossConfig
from burn.nn.loss.margin import (
    CosineEmbeddingLoss,
    CosineEmbeddingLossConfig,
    HingeEmbeddingLoss,
    HingeEmbeddingLossConfig,
    MarginRankingLoss,
    MarginRankingLossConfig,
    TripletMarginLoss,
    TripletMarginLossConfig,
)
from burn.nn.loss.probabilistic import (
    GaussianNllLoss,
    GaussianNllLossConfig,
    KLDivLoss,
    KLDivLossConfig,
    PoissonNllLoss,
    PoissonNllLossConfig,
)
from burn.nn.loss.regression import (
    HuberLoss,
    HuberLossConfig,
    L1Loss,
    L1LossConfig,
    LpLoss,
    LpLossConfig,
    MseLoss,
    MseLossConfig,
    SmoothL1Loss,
    SmoothL1LossConfig,
)
from burn.tensor.module.loss import cross_entropy_with_logits

__all__ = [
    "BinaryCrossEntropyLoss",
    "BinaryCrossEntropyLossConfig",
    "CosineEmbeddingLoss",
    "CosineEmbeddingLossConfig",
    "CrossEntropyLoss",
    "CrossEntropyLossConfig",
    "CtcLoss",
    "CtcLossConfig",
    "GaussianNllLoss",
    "GaussianNllLossConfig",
    "HingeEmbeddingLoss",
    "HingeEmbeddingLossConfig",
    "HuberLoss",
    "HuberLossConfig",
    "KLDivLoss",
    "KLDivLossConfig",
    "L1Loss",
    "L1LossConfig",
    "LpLoss",
    "LpLossConfig",
    "MarginRankingLoss",
    "MarginRankingLossConfig",
    "MseLoss",
    "MseLossConfig",
    "PoissonNllLoss",
    "PoissonNllLossConfig",
    "Reduction",
    "SmoothL1Loss",
    "SmoothL1LossConfig",
    "TripletMarginLoss",
    "TripletMarginLossConfig",
    "cross_entropy_with_logits",
]
