"""Neural-network layers, activations, losses and initializers, each with a Burn-style config.

Every layer is a `burn.Module`; its ``XxxConfig(...).init(device)`` builds it with *lazy* params,
so building a model only to load weights never runs an initializer. Layers whose behaviour differs
between training and inference (`Dropout`, `BatchNorm`) train when their input is on an autodiff
backend and infer after ``model.valid()``, as in Burn.

Example:
    >>> import burn
    >>> from burn import nn
    >>> B = burn.backend("autodiff(ndarray)")  # doctest: +SKIP
    >>> layer = nn.LinearConfig(4, 2).init(B.default_device())  # doctest: +SKIP
    >>> [path for path, _ in layer.named_params()]  # doctest: +SKIP
    ['weight', 'bias']
"""

from burn.nn.activation import (
    Gelu,
    HardSigmoid,
    HardSigmoidConfig,
    LeakyRelu,
    LeakyReluConfig,
    Mish,
    PRelu,
    PReluConfig,
    Relu,
    Sigmoid,
    Silu,
    Softplus,
    SoftplusConfig,
    SwiGlu,
    SwiGluConfig,
    Tanh,
)
from burn.nn.attention import (
    MhaInput,
    MhaOutput,
    MultiHeadAttention,
    MultiHeadAttentionConfig,
    PaddingMask,
    generate_autoregressive_mask,
    generate_padding_mask,
    quiet_softmax,
)
from burn.nn.conv import Conv1d, Conv1dConfig, Conv2d, Conv2dConfig, ConvTranspose2d, ConvTranspose2dConfig
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.embedding import Embedding, EmbeddingConfig
from burn.nn.init import Initializer
from burn.nn.linear import Linear, LinearConfig
from burn.nn.loss import (
    BinaryCrossEntropyLoss,
    BinaryCrossEntropyLossConfig,
    CrossEntropyLoss,
    CrossEntropyLossConfig,
    HuberLoss,
    HuberLossConfig,
    KLDivLoss,
    KLDivLossConfig,
    MseLoss,
    MseLossConfig,
    Reduction,
)
from burn.nn.norm import (
    BatchNorm,
    BatchNormConfig,
    GroupNorm,
    GroupNormConfig,
    LayerNorm,
    LayerNormConfig,
    RmsNorm,
    RmsNormConfig,
)
from burn.nn.padding import PaddingConfig1d, PaddingConfig2d
from burn.nn.pool import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool2dConfig,
    AvgPool1d,
    AvgPool1dConfig,
    AvgPool2d,
    AvgPool2dConfig,
    MaxPool1d,
    MaxPool1dConfig,
    MaxPool2d,
    MaxPool2dConfig,
)
from burn.nn.pos_encoding import (
    PositionalEncoding,
    PositionalEncodingConfig,
    RotaryEncoding,
    RotaryEncodingConfig,
)
from burn.nn.rnn import GateController, Gru, GruConfig, Lstm, LstmConfig, LstmState
from burn.nn.transformer import (
    PositionWiseFeedForward,
    PositionWiseFeedForwardConfig,
    TransformerDecoder,
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
    TransformerEncoderLayer,
)

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool1dConfig",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dConfig",
    "AvgPool1d",
    "AvgPool1dConfig",
    "AvgPool2d",
    "AvgPool2dConfig",
    "BatchNorm",
    "BatchNormConfig",
    "BinaryCrossEntropyLoss",
    "BinaryCrossEntropyLossConfig",
    "Conv1d",
    "Conv1dConfig",
    "Conv2d",
    "Conv2dConfig",
    "ConvTranspose2d",
    "ConvTranspose2dConfig",
    "CrossEntropyLoss",
    "CrossEntropyLossConfig",
    "Dropout",
    "DropoutConfig",
    "Embedding",
    "EmbeddingConfig",
    "GateController",
    "Gelu",
    "GroupNorm",
    "GroupNormConfig",
    "Gru",
    "GruConfig",
    "HardSigmoid",
    "HardSigmoidConfig",
    "HuberLoss",
    "HuberLossConfig",
    "Initializer",
    "KLDivLoss",
    "KLDivLossConfig",
    "LayerNorm",
    "LayerNormConfig",
    "LeakyRelu",
    "LeakyReluConfig",
    "Linear",
    "LinearConfig",
    "Lstm",
    "LstmConfig",
    "LstmState",
    "MaxPool1d",
    "MaxPool1dConfig",
    "MaxPool2d",
    "MaxPool2dConfig",
    "MhaInput",
    "MhaOutput",
    "Mish",
    "MseLoss",
    "MseLossConfig",
    "MultiHeadAttention",
    "MultiHeadAttentionConfig",
    "PRelu",
    "PReluConfig",
    "PaddingConfig1d",
    "PaddingConfig2d",
    "PaddingMask",
    "PositionWiseFeedForward",
    "PositionWiseFeedForwardConfig",
    "PositionalEncoding",
    "PositionalEncodingConfig",
    "Reduction",
    "Relu",
    "RmsNorm",
    "RmsNormConfig",
    "RotaryEncoding",
    "RotaryEncodingConfig",
    "Sigmoid",
    "Silu",
    "Softplus",
    "SoftplusConfig",
    "SwiGlu",
    "SwiGluConfig",
    "Tanh",
    "TransformerDecoder",
    "TransformerDecoderConfig",
    "TransformerDecoderInput",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderConfig",
    "TransformerEncoderInput",
    "TransformerEncoderLayer",
    "generate_autoregressive_mask",
    "generate_padding_mask",
    "quiet_softmax",
]
