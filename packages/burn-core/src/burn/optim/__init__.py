"""Optimizers, gradient clipping and learning-rate schedulers (`burn.optim.lr_scheduler`).

Example:
    >>> from burn import optim
    >>> optimizer = optim.AdamConfig(weight_decay=optim.WeightDecayConfig(1e-4)).init()
    >>> # model = optimizer.step(lr, model, optim.GradientsParams.from_grads(loss.backward(), model))
"""

from burn.optim import lr_scheduler
from burn.optim.adagrad import AdaGrad, AdaGradConfig
from burn.optim.adam import Adam, AdamConfig, AdamW, AdamWConfig
from burn.optim.adan import Adan, AdanConfig
from burn.optim.base import Optimizer, OptimizerAdaptor, SimpleOptimizer
from burn.optim.clipping import GradientClipping, GradientClippingConfig
from burn.optim.grads import GradientsAccumulator, GradientsParams
from burn.optim.lion import Lion, LionConfig
from burn.optim.muon import Muon, MuonConfig, newton_schulz
from burn.optim.rmsprop import RmsProp, RmsPropConfig
from burn.optim.sgd import Sgd, SgdConfig
from burn.optim.transforms import MomentumConfig, WeightDecayConfig

__all__ = [
    "AdaGrad", "AdaGradConfig", "Adam", "AdamConfig", "AdamW", "AdamWConfig", "Adan", "AdanConfig",
    "GradientClipping", "GradientClippingConfig", "GradientsAccumulator", "GradientsParams", "Lion",
    "LionConfig", "MomentumConfig", "Muon", "MuonConfig", "Optimizer", "OptimizerAdaptor", "RmsProp",
    "RmsPropConfig", "Sgd", "SgdConfig", "SimpleOptimizer", "WeightDecayConfig", "lr_scheduler",
    "newton_schulz",
]
