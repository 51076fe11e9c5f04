"""The op families of the backend contract, one module each: the unit of the layout.

A family is a set of ops by meaning: ``float``, ``int`` and ``bool`` (the tensor ops of each
kind), ``activation``, ``conv`` (1-D to 3-D, transposed, deformable, fold), ``pool``,
``sampling`` (interpolation, grid sampling), ``embedding``, ``loss``, ``rnn``, ``optim`` and
``quantization``. The family's name is the stem of its module in every layer that implements
it: here, in the shared array-namespace bodies (`burn.backend.xp`), the Tensor API's functional
layer, burn-autodiff (forward and rule side by side), each backend package and the conformance
suite. Each op's facts (differentiable, backward helper, checkpoint class, element-wise
expression) are declared at the op (`burn.backend.contract`); `burn.backend.contract.families()`
lists the families.
"""
