"""The ops of `Autodiff`, one module per op family of the contract (`burn.backend.ops`).

``float``, ``activation``, ``conv``, ``pool``, ``sampling``, ``embedding``, ``loss`` and ``rnn``
each hold their family's mixin (``AutodiffConvOps``...), in which every op that records a node
is followed by its backward rule, a static method (``conv2d`` then ``_conv2d_rule``): the
forward and its derivative read together. What a rule reads is named: a small NamedTuple per
rule (``ConvSaved(x, weight, options)``) or the one value it needs (`burn_autodiff.node`).
``optim`` holds the fused optimizer steps, ``int`` and ``bool`` the few int and bool ops that
need wrapping (the others are the inner backend's bound methods).

Not families: `_grad` holds what every rule shares (its types, ``unbroadcast``...), and
`composed` the ops differentiated through burn-core's composition (``inner_or_default``, the
backward helpers). The engine's lazy gradients live beside this package (`burn_autodiff.sliced`,
`burn_autodiff.products`).
"""
