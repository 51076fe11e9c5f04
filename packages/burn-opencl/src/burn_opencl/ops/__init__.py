"""The op families of the backend contract on `CLTensor` primitives, one mixin per family (the
module stems are the contract's, `burn.backend.ops`): ``float``, ``int``, ``bool``, ``activation``,
``conv``, ``pool``, ``sampling`` and ``embedding``. `burn_opencl.OpenCL` composes them; the
families it does not override (loss, rnn, optim, and the ops of the others not listed in a mixin)
are burn-core's defaults, running on these ops.

Not families: `tensor_common` holds the bodies every tensor kind shares (bound under the ``float_``,
``int_`` and ``bool_`` names by the kind mixins), `module_common` the views and separable linear
maps the conv, pool and sampling ops share.
"""
