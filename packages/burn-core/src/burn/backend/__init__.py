"""The backend contract: `Backend`, `Device`, `Capabilities` and the op registry."""

from burn.backend.base import Backend
from burn.backend.capabilities import FEATURES, Capabilities
from burn.backend.contract import contract_ops, default, implemented_ops, required, required_ops
from burn.backend.device import Device

__all__ = [
    "FEATURES", "Backend", "Capabilities", "Device", "contract_ops", "default",
    "implemented_ops", "required", "required_ops",
]
