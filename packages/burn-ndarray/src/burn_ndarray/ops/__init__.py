"""burn-ndarray's op mixins, one module per op family it overrides (`burn.backend.ops.FAMILIES`):
`float`, `int`, `bool`, `activation`, `conv`, `pool`, `sampling`, `embedding`, `loss`, `rnn` and
`optim`; `burn_ndarray.NdArray` composes their classes. Every contract op's override is in the
module of its family (`burn.backend.contract.op_facts`).

The other modules are helpers named by what they hold: `kinds` (the bodies the float, int and bool
families share, and the hooks of the shared array-namespace code), `select` (a branch-free
``where``), `reductions` (the float sums along a dim), `windows` (window views bound to NumPy) and
`winograd` (the Winograd convolution of the conv family).
"""
