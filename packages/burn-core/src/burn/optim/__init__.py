"""Optimizers, gradient clipping and learning-rate schedulers (`burn.optim.lr_scheduler`).

Example:
    >>> from burn import optim
    >>> optimizer = optim.AdamConfig(weight_decay=optim.WeightDecayConfig(1e-4)).init()
    >>> # model = optimizer.step(lr, model, optim.GradientsParams.from_grads(loss.backward(), model))

Differences from PyTorch (the update rules follow Burn; where they coincide with ``torch.optim``
they agree to 1e-6 over 50 float64 steps, see ``tests/test_optim_parity.py``):

- Defaults are Burn's: ``epsilon=1e-5`` for Adam, AdamW, AdaGrad and RmsProp (PyTorch: 1e-8,
  1e-8, 1e-10, 1e-8); AdamW ``weight_decay=1e-4`` (PyTorch 1e-2); RmsProp ``momentum=0.9``
  (PyTorch 0); `MomentumConfig` ``dampening=0.1`` (PyTorch 0).
- SGD allows Nesterov momentum with dampening (PyTorch refuses it).
- Adam/AdamW fold the bias corrections into scalars (Burn's form): equal up to rounding.
- Muon uses Burn's momentum (``v = m v + (1 - dampening) g``, PyTorch ``lerp``), runs Newton-Schulz in
  the param's dtype (PyTorch bfloat16), clamps the norm to epsilon (PyTorch adds it) and only
  takes 2-D params. Lion and Adan have no PyTorch counterpart.
- Gradient clipping by value and by norm is per param, as in Burn; ``global_norm`` is PyTorch's
  ``clip_grad_norm_``.
- Schedulers are Burn's: `step()` returns the next lr (no optimizer attached); linear goes from
  `initial_lr` to `final_lr` (PyTorch ``LinearLR`` scales factors); cosine annealing restarts at
  `initial_lr` after `num_iters` (PyTorch climbs back along the cosine).
- State is one record per `ParamId`; it loads on any backend, device or precision. Adam's
  moments, SGD's velocity and RMSProp's averages are updated in place where the backend can (one
  fused op each: ``float_adam_step``, ``float_sgd_momentum_step``, ``float_rmsprop_step``), never
  those of a record from `to_record()` that is still held: a held record is a snapshot.
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
