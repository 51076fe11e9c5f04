"""What every layer of burn stands on: element types, host data, tensor kinds, distributions and
the ownership proof of buffer reuse.

This package imports nothing of burn but itself, so the backend contract (`burn.backend`) and
the Tensor API (`burn.tensor`) both build on it without importing each other the wrong way
round: foundations < contract < Tensor API < nn / optim / train (checked by the ``layers``
contract of import-linter in the ``lint`` tox environment).
"""
