"""Activation functions (``burn.activation.relu`` ...): a re-export of `burn.tensor.activation`."""

from burn.tensor.activation import *  # noqa: F403
from burn.tensor.activation import __all__  # noqa: F401
