"""`GradScaler`: dynamic loss scaling for float16 mixed precision.

float16's smallest normal value is 6e-5: gradients of a float16 forward below it flush to zero.
Multiplying the loss by a large scale lifts them into range; the gradients of the float32 params
are divided by it again before the optimizer sees them. A scale too large makes some gradient
overflow to inf: that step is skipped and the scale halved; after `growth_interval` steps in a
row without overflow it doubles again. bfloat16 has float32's range and needs no scaler.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from burn.optim.grads import GradientsParams

if TYPE_CHECKING:
    from burn.module.base import Module
    from burn.optim.base import Optimizer
    from burn.tensor.tensor import Tensor

__all__ = ["GradScaler"]

M = TypeVar("M", bound="Module")


class GradScaler:
    """Scales losses, unscales and checks gradients, and steps only on finite gradients.

    One step: ``grads = GradientsParams.from_grads(scaler.scale(loss).backward(), model)``,
    ``model = scaler.step(optimizer, model, grads, lr)``, ``scaler.update()``. Its state (the
    scale and the count of steps since the last overflow) goes into checkpoints through
    `to_record` / `load_record` (`burn.train.Learner` saves it beside the optimizer's), so a
    resumed run scales exactly as the uninterrupted one.

    Args:
        init_scale: the first scale (a power of two keeps unscaling exact).
        growth_factor: the scale's factor after `growth_interval` finite steps in a row (> 1).
        backoff_factor: the scale's factor after a step with inf or NaN gradients (in (0, 1)).
        growth_interval: finite steps in a row before the scale grows (>= 1).
        enabled: False makes every method a pass-through (`scale` returns the loss, `step`
            always steps), so one training loop serves every precision.

    Raises:
        ValueError: a factor or interval out of its range.

    Example:
        >>> scaler = GradScaler(init_scale=8.0, growth_interval=2)
        >>> scaler.get_scale()
        8.0
        >>> scaler.to_record()
        {'scale': 8.0, 'growth_tracker': 0}
    """

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        if not (math.isfinite(init_scale) and init_scale > 0):
            raise ValueError(f"GradScaler: init_scale must be a positive finite number, got {init_scale!r}")
        if not growth_factor > 1.0:
            raise ValueError(f"GradScaler: growth_factor must be > 1, got {growth_factor!r}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: backoff_factor must be in (0, 1), got {backoff_factor!r}")
        if isinstance(growth_interval, bool) or not isinstance(growth_interval, int) or growth_interval < 1:
            raise ValueError(f"GradScaler: growth_interval must be a positive int, got {growth_interval!r}")
        self.growth_factor = float(growth_factor)
        self.backoff_factor = float(backoff_factor)
        self.growth_interval = growth_interval
        self.enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_tracker = 0
        # This step's verdict: None until `unscale` ran, then whether a gradient was inf or NaN.
        self._found_inf: bool | None = None

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self.enabled else 1.0

    def scale(self, loss: Tensor) -> Tensor:
        """``loss * scale``, the tensor to call ``backward()`` on (the loss itself when disabled).

        Example:
            >>> from burn import Tensor
            >>> GradScaler(init_scale=4.0).scale(Tensor.from_data([0.5])).tolist()  # doctest: +SKIP
            [2.0]
        """
        if not self.enabled:
            return loss
        return loss * self._scale

    def unscale(self, grads: GradientsParams) -> bool:
        """Divides every gradient in `grads` by the scale (in place in `grads`) and returns whether
        all of them are finite. Call it before clipping gradients by hand; `step` calls it when
        it has not run in this step, and runs it at most once per step.

        Raises:
            TypeError: `grads` is not a `GradientsParams`.
        """
        if not isinstance(grads, GradientsParams):
            raise TypeError(
                f"GradScaler.unscale: grads must be a GradientsParams, got {type(grads).__name__}"
            )
        if not self.enabled:
            self._found_inf = False
            return True
        if self._found_inf is not None:
            return not self._found_inf
        inverse = 1.0 / self._scale
        # ``g * 0`` is 0 for every finite value and NaN for inf and NaN: one sum per gradient and
        # one read back to the host for the whole step, whatever the number of params.
        probe: Tensor | None = None
        for param_id, grad in list(grads.items()):
            unscaled = grad * inverse
            grads.register(param_id, unscaled)
            zeros = (unscaled * 0.0).sum()
            probe = zeros if probe is None else probe + zeros.cast(probe.dtype)
        if probe is None:
            self._found_inf = False
            return True
        return self.check_probe(probe)

    def check_probe(self, probe: Tensor) -> bool:
        """Records this step's verdict from `probe`, the sum of ``(g * 0).sum()`` over the
        unscaled gradients (0, or NaN when one is inf or NaN): its one read back to the host.
        `unscale` calls it; so does a compiled step (`burn.compile.step` with ``scaler=``),
        whose program unscales, probes and skips the update on the device. Returns whether
        every gradient was finite."""
        self._found_inf = not math.isfinite(float(probe.item()))
        return not self._found_inf

    def step(self, optimizer: Optimizer, module: M, grads: GradientsParams, lr: float) -> M:
        """`optimizer`'s step of `module` on the unscaled `grads`, or `module` unchanged when a
        gradient is inf or NaN (the step is skipped; `update` then backs the scale off).

        Example:
            >>> from burn import nn, optim
            >>> scaler, model = GradScaler(), nn.LinearConfig(2, 1).init()  # doctest: +SKIP
            >>> model = scaler.step(optim.SgdConfig().init(), model, grads, 0.1)  # doctest: +SKIP
        """
        finite = self.unscale(grads)
        if not finite:
            return module
        return optimizer.step(lr, module, grads)

    def update(self) -> None:
        """Adjusts the scale after this step's `step` (or `unscale`): backs off after inf or NaN,
        grows after `growth_interval` finite steps in a row. Call once per optimizer step."""
        found_inf, self._found_inf = self._found_inf, None
        if not self.enabled or found_inf is None:
            return
        if found_inf:
            self._scale *= self.backoff_factor
            self._growth_tracker = 0
            return
        self._growth_tracker += 1
        if self._growth_tracker == self.growth_interval:
            self._scale *= self.growth_factor
            self._growth_tracker = 0

    @property
    def found_inf(self) -> bool:
        """Whether this step's gradients had an inf or NaN (False before `unscale` ran)."""
        return bool(self._found_inf)

    def to_record(self) -> dict[str, Any]:
        """The state to checkpoint: the scale and the finite steps since the last growth or
        overflow."""
        return {"scale": self._scale, "growth_tracker": self._growth_tracker}

    def load_record(self, record: Mapping[str, Any]) -> GradScaler:
        """Restores `to_record`'s state (self, for chaining).

        Raises:
            ValueError: `record` lacks ``scale`` or ``growth_tracker``.
        """
        try:
            scale, tracker = float(record["scale"]), int(record["growth_tracker"])
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"GradScaler.load_record: expected {{'scale': float, 'growth_tracker': int}}, got {record!r}"
            ) from exc
        self._scale, self._growth_tracker, self._found_inf = scale, tracker, None
        return self

    def __repr__(self) -> str:
        return (
            f"GradScaler(scale={self._scale}, growth_factor={self.growth_factor}, backoff_factor="
            f"{self.backoff_factor}, growth_interval={self.growth_interval}, enabled={self.enabled})"
        )
