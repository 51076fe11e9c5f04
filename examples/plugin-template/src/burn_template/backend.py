"""The backend class: its name, devices, element types and capabilities.

The ops themselves live in one mixin per op family (`ops/float.py`, `ops/int.py`, `ops/bool.py`),
as in burn's contract. Put the mixins before `Backend` so that their methods replace the
contract's stubs.
"""

from __future__ import annotations

from burn.backend import Backend, Capabilities, Device
from burn.foundations.dtype import DType
from burn_template._arrays import DTYPES
from burn_template.ops.bool import BoolOps
from burn_template.ops.float import FloatOps
from burn_template.ops.int import IntOps


class TemplateBackend(FloatOps, IntOps, BoolOps, Backend):
    """A NumPy backend with one device, ``template:cpu``.

    Its primitive is a plain ``numpy.ndarray`` that is never modified after it is made (burn
    tensors are immutable values, so views may be shared).

    Args:
        float_dtype: element type of new float tensors (``"float32"`` or ``"float64"``).
        int_dtype: element type of new int tensors and of indices (``"int64"``).

    Example:
        >>> B = TemplateBackend()
        >>> str(B.default_device())
        'template:cpu'
    """

    name = "template"

    def __init__(self, float_dtype: DType | str = DType.F32, int_dtype: DType | str = DType.I64) -> None:
        super().__init__(
            float_dtype=float_dtype,
            int_dtype=int_dtype,
            # What the conformance suite tests: every other dtype and feature is reported as a skip.
            capabilities=Capabilities(dtypes=DTYPES),
        )
        self._device = Device("template", "cpu", owner=self)

    def devices(self) -> list[Device]:
        """The devices of this backend: just one."""
        return [self._device]
