"""Functional module ops: convolution, pooling, embedding, interpolation, cross-entropy, LSTM cell,
scaled dot-product attention, layer normalization.

One module per op family, the stem of the backend contract's (`burn.backend.ops`): `conv`, `pool`,
`sampling`, `embedding`, `loss`, `rnn`, `attention`, `norm`, and `linear` (composed of float ops). Each
function normalizes its arguments (an int or one int per spatial axis), validates kinds, ranks,
channel counts and output sizes with a `ShapeError` that names the op and the shapes (the checks
are written once for every rank, in `_args`), then calls the backend's op (inputs ``[N, C, L]``,
``[N, C, H, W]`` or ``[N, C, D, H, W]``, conv weights ``[C_out, C_in / groups, *kernel]``).

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.ones((1, 3, 8, 8)); w = Tensor.ones((4, 3, 3, 3))  # doctest: +SKIP
    >>> F.conv2d(x, w, padding=1).shape, F.max_pool2d(x, 2).shape  # doctest: +SKIP
    ((1, 4, 8, 8), (1, 3, 4, 4))
"""

from burn.tensor.module._args import IntOrPair as IntOrPair
from burn.tensor.module._args import Pair as Pair
from burn.tensor.module._padding import ConvPadding as ConvPadding
from burn.tensor.module.attention import attention
from burn.tensor.module.conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    deform_conv2d,
    fold4d,
    unfold4d,
)
from burn.tensor.module.embedding import embedding
from burn.tensor.module.linear import linear
from burn.tensor.module.loss import cross_entropy, cross_entropy_with_logits
from burn.tensor.module.norm import layer_norm
from burn.tensor.module.pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
)

# `max_pool` / `avg_pool` (any rank, arguments already checked) were importable from here before
# the split into families.
from burn.tensor.module.pool import avg_pool as avg_pool
from burn.tensor.module.pool import max_pool as max_pool
from burn.tensor.module.quantization import (
    dequantize,
    dequantized_linear,
    quantize_into_int,
    quantized_linear,
    static_quantized_conv2d,
    static_quantized_linear,
)
from burn.tensor.module.rnn import gru_cell, lstm_cell, lstm_sequence
from burn.tensor.module.sampling import grid_sample_2d, interpolate, interpolate1d

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "attention",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "deform_conv2d",
    "dequantize",
    "embedding",
    "fold4d",
    "interpolate",
    "interpolate1d",
    "grid_sample_2d",
    "layer_norm",
    "linear",
    "gru_cell",
    "lstm_cell",
    "lstm_sequence",
    "cross_entropy",
    "cross_entropy_with_logits",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "dequantized_linear",
    "quantize_into_int",
    "quantized_linear",
    "static_quantized_conv2d",
    "static_quantized_linear",
    "unfold4d",
]
