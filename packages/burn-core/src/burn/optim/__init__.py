"""Optimizers, gradient clipping and learning-rate schedulers."""

from burn.optim.adam import Adam, AdamConfig, AdamW, AdamWConfig
from burn.optim.base import Optimizer, OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClipping, GradientClippingConfig
from burn.optim.grads import GradientsAccumulator, GradientsParams
from burn.optim.sgd import Sgd, SgdConfig
from burn.optim.transforms import MomentumConfig, WeightDecayConfig

__all__ = [
    "Adam", "AdamConfig", "AdamW", "AdamWConfig", "GradientClipping", "GradientClippingConfig",
    "GradientsAccumulator", "GradientsParams", "MomentumConfig", "Optimizer", "OptimizerAdaptor",
    "Sgd", "SgdConfig", "SimpleOptimizer", "WeightDecayConfig",
]
