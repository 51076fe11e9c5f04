"""Activation ops of the contract (`burn.backend.ops.activation`) on `CLTensor` primitives: one
element-wise kernel each (the contract's expressions, `burn_opencl.kernels.elementwise`); softmax and
log-softmax are a max and a sum reduction around one kernel."""

from __future__ import annotations

from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import reduce as rd
from burn_opencl.tensor import CLTensor

P = CLTensor
_run = ew.run
_OPS, _OWN = ew.OPS, ew.OWN


class OpenCLActivationOps:
    """The activation ops of `burn_opencl.OpenCL`."""

    def relu(self, x: P) -> P:
        return _run(_OPS["relu"], (x,))

    def relu_backward(self, output: P, grad: P) -> P:
        return _run(_OPS["relu_backward"], (output, grad))

    def leaky_relu(self, x: P, negative_slope: float) -> P:
        return _run(_OPS["leaky_relu"], (x,), None, (negative_slope,))

    def gelu(self, x: P) -> P:
        return _run(_OPS["gelu"], (x,))

    def gelu_backward(self, x: P, grad: P) -> P:
        return _run(_OPS["gelu_backward"], (x, grad))

    def sigmoid(self, x: P) -> P:
        return _run(_OPS["sigmoid"], (x,))

    def sigmoid_backward(self, output: P, grad: P) -> P:
        return _run(_OPS["sigmoid_backward"], (output, grad))

    def log_sigmoid(self, x: P) -> P:
        return _run(_OPS["log_sigmoid"], (x,))

    def silu(self, x: P) -> P:
        return _run(_OPS["silu"], (x,))

    def softplus(self, x: P, beta: float) -> P:
        return _run(_OPS["softplus"], (x,), None, (beta,))

    def hard_sigmoid(self, x: P, alpha: float, beta: float) -> P:
        return _run(_OPS["hard_sigmoid"], (x,), None, (alpha, beta))

    def softmax(self, x: P, dim: int) -> P:
        e = _run(_OWN["exp_sub"], (x, rd.reduce_dim("max", x, dim)[0]))
        return _run(_OPS["float_div"], (e, rd.reduce_dim("sum", e, dim)[0]))

    def log_softmax(self, x: P, dim: int) -> P:
        m = rd.reduce_dim("max", x, dim)[0]
        s = rd.reduce_dim("sum", _run(_OWN["exp_sub"], (x, m)), dim)[0]
        return _run(ew.LOG_SOFTMAX_OUT, (x, m, s))
