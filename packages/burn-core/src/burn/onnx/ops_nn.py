"""Neural-network ops: matrix products, convolutions, pooling and normalizations."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.ops.conv import conv_activation
from burn.foundations.kind import Float, Int
from burn.onnx.errors import OnnxError
from burn.onnx.ops import register
from burn.onnx.runtime import align, ints, norm_axis
from burn.tensor import module as F
from burn.tensor._base import wrap
from burn.tensor.module import avg_pool3d, conv3d, conv_transpose1d, conv_transpose3d, max_pool3d

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Ctx, Value
    from burn.tensor.tensor import Tensor


def _opt(inputs: Sequence[Any], i: int) -> Any:
    return inputs[i] if len(inputs) > i and inputs[i] is not None else None


# -- matrix products --------------------------------------------------------------------------------
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """NumPy's ``matmul``: 1-D operands gain (and lose) a dim, batch dims broadcast."""
    squeeze = []
    if len(a.shape) == 1:
        a = a.unsqueeze_dim(0)
        squeeze.append(-2)
    if len(b.shape) == 1:
        b = b.unsqueeze_dim(1)
        squeeze.append(-1)
    a, b = align(a, b)
    out = a.matmul(b)
    if squeeze:
        rank = len(out.shape)
        out = out.squeeze_dims([rank + d for d in squeeze])
    return out


@register("MatMul", "nn")
def _matmul(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [matmul(ctx.tensor(inputs[0]), ctx.tensor(inputs[1]))]


@register("Gemm", "nn")
def _gemm(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    a, b = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    if node.attr("transA", 0):
        a = a.transpose()
    if node.attr("transB", 0):
        b = b.transpose()
    out = a.matmul(b)
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        out = out * alpha
    c = _opt(inputs, 2)
    if c is not None and beta != 0.0:
        ct = ctx.tensor(c)
        out, ct = align(out, ct)
        out = out + (ct * beta if beta != 1.0 else ct)
    return [out]


# -- einsum: contractions as one batched matmul per pair of operands -----------------------------
def _einsum_error(node: Node, equation: str, why: str) -> OnnxError:
    return OnnxError(f"node {node.name!r} (Einsum): equation {equation!r}: {why}")


def _einsum_terms(node: Node, equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """The operands' and the output's index letters, "..." spelled out as fresh characters."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise _einsum_error(node, equation, f"{len(terms)} operand terms for {len(ranks)} inputs")
    ellipsis = max((r - (len(t) - 3) for t, r in zip(terms, ranks, strict=True) if "..." in t), default=0)
    fresh = "".join(chr(0x2460 + i) for i in range(ellipsis))  # characters no equation uses
    spelled = []
    for t, r in zip(terms, ranks, strict=True):
        if "..." in t:
            t = t.replace("...", fresh[ellipsis - (r - (len(t) - 3)) :])
        if len(t) != r or not all(c.isalpha() or c in fresh for c in t):
            raise _einsum_error(node, equation, f"term {t!r} does not fit an operand of rank {r}")
        spelled.append(t)
    if arrow:
        out = out.replace("...", fresh)
    else:  # implicit output: the broadcast dims, then the letters used once, sorted
        letters = "".join(spelled)
        out = fresh + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in fresh))
    return spelled, out


def einsum(node: Node, equation: str, operands: list[Tensor]) -> Tensor:
    """ONNX ``Einsum`` through masks, sums, permutes, reshapes and batched matmuls. Broadcasting
    of size-1 dims is refused."""
    terms, out = _einsum_terms(node, equation, [len(t.shape) for t in operands])
    operands = list(operands)
    for k, (term, t) in enumerate(zip(terms, operands, strict=True)):
        terms[k], operands[k] = _einsum_diagonals(node, equation, term, t)
    sizes: dict[str, int] = {}
    for term, t in zip(terms, operands, strict=True):
        for c, n in zip(term, t.shape, strict=True):
            if sizes.setdefault(c, n) != n:
                raise _einsum_error(
                    node, equation, f"index {c!r} has sizes {sizes[c]} and {n} (broadcasting)"
                )
    if len(set(out)) != len(out) or not set(out) <= set(sizes):
        raise _einsum_error(node, equation, f"bad output term {out!r}")

    def reduce(term: str, t: Tensor, keep: set[str]) -> tuple[str, Tensor]:
        drop = [i for i, c in enumerate(term) if c not in keep]
        if not drop:
            return term, t
        t = t.sum_dims(drop)
        kept = "".join(c for c in term if c in keep)
        return kept, t.reshape(tuple(sizes[c] for c in kept))

    def permuted(term: str, t: Tensor, order: str) -> Tensor:
        perm = [term.index(c) for c in order]
        return t if perm == sorted(perm) else t.permute(perm)

    term, acc = reduce(terms[0], operands[0], set(out) | set("".join(terms[1:])))
    for i in range(1, len(terms)):
        later = set(out) | set("".join(terms[i + 1 :]))
        other, t = reduce(terms[i], operands[i], later | set(term))
        term, acc = reduce(term, acc, later | set(other))
        batch = "".join(c for c in term if c in other and c in later)
        contract = "".join(c for c in term if c in other and c not in later)
        left = "".join(c for c in term if c not in other)
        right = "".join(c for c in other if c not in term)

        def size(cs: str) -> int:
            return math.prod(sizes[c] for c in cs)

        a = permuted(term, acc, batch + left + contract).reshape((size(batch), size(left), size(contract)))
        b = permuted(other, t, batch + contract + right).reshape((size(batch), size(contract), size(right)))
        term = batch + left + right
        acc = a.matmul(b).reshape(tuple(sizes[c] for c in term))
    term, acc = reduce(term, acc, set(out))
    return permuted(term, acc, out)


def _einsum_diagonals(node: Node, equation: str, term: str, t: Tensor) -> tuple[str, Tensor]:
    """`term` without repeated letters: each repeat keeps the diagonal (a mask of equal positions
    along both dims, summed over the second)."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        p, q = term.index(c), term.index(c, term.index(c) + 1)
        if t.shape[p] != t.shape[q]:
            raise _einsum_error(node, equation, f"index {c!r} has sizes {t.shape[p]} and {t.shape[q]}")
        ones = t.ones_like().int()
        mask = (ones.cumsum(p) - ones.cumsum(q)).equal(0)
        t = t.mask_fill(mask.bool_not(), 0).sum_dims([q]).squeeze_dims([q])
        term = term[:q] + term[q + 1 :]
    return term, t


@register("Einsum", "nn", "no broadcasting of size-1 dims")
def _einsum(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [einsum(node, node.attr("equation", ""), [ctx.tensor(v) for v in inputs])]


# -- convolutions -----------------------------------------------------------------------------------
def _spatial(
    node: Node, x: Tensor, kernel: Sequence[int], transposed: bool = False
) -> tuple[list[int], list[int], list[int], list[int]]:
    """Strides, dilations, and the (before, after) pads of each spatial axis, auto_pad resolved."""
    n = len(kernel)
    strides = [int(s) for s in node.attr("strides", [1] * n)]
    dilations = [int(d) for d in node.attr("dilations", [1] * n)]
    pads = [int(p) for p in node.attr("pads", [0] * (2 * n))]
    auto = node.attr("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER") and not transposed:
        pads = [0] * (2 * n)
        for i in range(n):
            size = x.shape[2 + i]
            out = -(-size // strides[i])
            total = max((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size, 0)
            small, large = total // 2, total - total // 2
            pads[i], pads[i + n] = (small, large) if auto == "SAME_UPPER" else (large, small)
    elif auto == "VALID":
        pads = [0] * (2 * n)
    elif auto not in ("NOTSET", ""):
        raise OnnxError(f"node {node.name!r} ({node.op_type}): auto_pad {auto!r} is not supported here")
    return strides, dilations, pads[:n], pads[n:]


@register("Conv", "nn", "1-D, 2-D and 3-D")
def _conv(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x, w = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    bias = ctx.tensor(inputs[2]) if _opt(inputs, 2) is not None else None
    return [conv_nd(node, x, w, bias)]


def conv_nd(node: Node, x: Tensor, w: Tensor, bias: Tensor | None, activation: str = "none") -> Tensor:
    """The convolution of a ``Conv``-like node (its strides, pads, dilations, group), 1-D to 3-D,
    then `activation` (`burn.backend.ops.conv.CONV_ACTIVATIONS`: a Conv -> activation pair that
    `burn.onnx.patterns` folded; 2-D in the convolution's own op)."""
    kernel = list(w.shape[2:])
    strides, dilations, before, after = _spatial(node, x, kernel)
    # Symmetric pads (nearly every model's) as one int per axis; asymmetric ones as (before,
    # after) pairs, which a 2-D convolution hands to the backend's conv2d_fused as four sides.
    # Tuples: the convolution resolves hashable options once per shapes (`_conv`'s plans).
    padding: Any = tuple(before) if before == after else tuple(zip(before, after, strict=True))
    group = node.attr("group", 1)
    rank = len(kernel)
    if rank == 2:
        return F.conv2d(x, w, bias, tuple(strides), padding, tuple(dilations), group, activation)
    if rank == 1:
        out = F.conv1d(x, w, bias, strides[0], padding[0], dilations[0], group)
    elif rank == 3:
        out = conv3d(x, w, bias, strides, padding, dilations, group)
    else:
        raise OnnxError(f"node {node.name!r} ({node.op_type}): {rank}-D convolutions are not supported")
    if activation == "none":
        return out
    return wrap(conv_activation(out._b, activation, out._p), out._b, Float)


@register("ConvTranspose", "nn")
def _conv_transpose(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x, w = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    bias = ctx.tensor(inputs[2]) if _opt(inputs, 2) is not None else None
    kernel = list(w.shape[2:])
    rank = len(kernel)
    auto_pad = node.attr("auto_pad", "NOTSET") or "NOTSET"
    output_shape = node.attr("output_shape")
    out_pad = [int(p) for p in node.attr("output_padding", [0] * rank)]
    group = node.attr("group", 1)
    if rank not in (1, 2, 3):
        raise OnnxError(f"node {node.name!r} (ConvTranspose): {rank}-D is not supported")
    if output_shape is None and auto_pad in ("NOTSET", "VALID"):
        strides, dilations, before, after = _spatial(node, x, kernel, transposed=True)
        if before == after:
            return [_conv_transpose_op(x, w, bias, strides, before, out_pad, dilations, group)]
        target = None
    else:
        strides = [int(v) for v in node.attr("strides", [1] * rank)]
        dilations = [int(v) for v in node.attr("dilations", [1] * rank)]
        before = after = [0] * rank
        target = [int(v) for v in output_shape[-rank:]] if output_shape is not None else None
    # Asymmetric pads, output_shape or auto_pad SAME: the full result (no pads), then the
    # window ONNX keeps of it (cropped, or zero-extended past its end), then the bias.
    full = _conv_transpose_op(x, w, None, strides, [0] * rank, [0] * rank, dilations, group)
    sizes = [s * (n - 1) + p + (k - 1) * d + 1 for s, n, p, k, d in
             zip(strides, x.shape[2:], out_pad, kernel, dilations, strict=True)]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = target or [n * s for n, s in zip(x.shape[2:], strides, strict=True)]
        total = [f - t for f, t in zip(sizes, target, strict=True)]
        low = [t // 2 for t in total]
        before = low if auto_pad == "SAME_UPPER" else [t - lo for t, lo in zip(total, low, strict=True)]
    elif target is None:
        target = [f - b - a for f, b, a in zip(sizes, before, after, strict=True)]
    out = full
    for i, (start, size) in enumerate(zip(before, target, strict=True)):
        d = 2 + i
        have = out.shape[d]
        if start < 0 or start + size > have:  # past the computed result: zeros
            lead, tail = max(0, -start), max(0, start + size - have)
            out = out.pad([0, 0] * (rank - 1 - i) + [lead, tail], 0.0)
            start += lead
        out = out.narrow(d, start, size)
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * rank)
    return [out]


def _conv_transpose_op(
    x: Tensor, w: Tensor, bias: Tensor | None, strides: list[int], pads: list[int],
    out_pad: list[int], dilations: list[int], group: int,
) -> Tensor:
    if len(strides) == 1:
        return conv_transpose1d(x, w, bias, strides[0], pads[0], out_pad[0], dilations[0], group)
    if len(strides) == 2:
        return F.conv_transpose2d(x, w, bias, strides, pads, out_pad, dilations, group)
    return conv_transpose3d(x, w, bias, strides, pads, out_pad, dilations, group)


# -- pooling ----------------------------------------------------------------------------------------
@register("Col2Im", "nn", "1-D, 2-D and 3-D images")
def _col2im(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    # The sum of the blocks back into the image is a grouped transposed convolution whose kernel
    # puts block element k at its position: one group per channel, an identity over k.
    x = ctx.tensor(inputs[0], Float)
    image = ints(inputs[1])
    block = ints(inputs[2])
    rank = len(block)
    strides = node.attr("strides", [1] * rank)
    dilations = node.attr("dilations", [1] * rank)
    pads = node.attr("pads", [0] * 2 * rank)
    shape = list(x.shape)
    size = math.prod(block)
    counts = [
        (i + pads[d] + pads[d + rank] - dilations[d] * (k - 1) - 1) // strides[d] + 1
        for d, (i, k) in enumerate(zip(image, block, strict=False))
    ]
    if (
        not 1 <= rank <= 3 or len(image) != rank or len(strides) != rank or len(dilations) != rank
        or len(pads) != 2 * rank or len(shape) != 3 or shape[1] % size or min(counts) < 1
        or shape[2] != math.prod(counts)
    ):
        raise OnnxError(
            f"node {node.name!r} (Col2Im): input {shape} does not hold the blocks {block} of an image "
            f"{image} (strides {strides}, dilations {dilations}, pads {pads}: {counts} blocks per dim)"
        )
    channels = shape[1] // size
    eye = np.eye(size, dtype=np.float32).reshape([size, 1, *block])
    weight = ctx.tensor(np.tile(eye, [channels] + [1] * (rank + 1)))
    cols = x.reshape([shape[0], shape[1], *counts])
    out = _conv_transpose_op(cols, weight, None, strides, [0] * rank, [0] * rank, dilations, channels)
    for d in range(rank):  # the padded image is [pads_begin + image + pads_end]: keep the image
        have = out.shape[2 + d]
        want = pads[d] + image[d]
        if have < want:  # the last rows no block reaches are zeros
            pairs = [0, 0] * (rank - 1 - d) + [0, want - have]
            out = out.pad(pairs, 0.0)
        out = out.narrow(2 + d, pads[d], image[d])
    return [out]


@register("MaxUnpool", "nn", "an output_shape other than the unpooled shape, (in - 1) * stride - pads + "
          "kernel, is refused (ONNX's reference and onnxruntime read the indices differently there)")
def _max_unpool(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    # The values go back to the flat positions MaxPool's Indices give, in the shape the pooling
    # inverts.
    x = ctx.tensor(inputs[0], Float)
    indices = ctx.tensor(inputs[1], Int)
    kernel = [int(k) for k in node.attr("kernel_shape", [])]
    rank = len(kernel)
    strides = node.attr("strides", [1] * rank)
    pads = node.attr("pads", [0] * 2 * rank)
    shape = list(x.shape)
    if not 1 <= rank <= 3 or len(shape) != rank + 2 or list(indices.shape) != shape or len(strides) != rank:
        raise OnnxError(
            f"node {node.name!r} (MaxUnpool): values {shape} and indices {list(indices.shape)} must be the "
            f"same [N, C, *spatial] shape for a kernel {kernel}"
        )
    inferred = shape[:2] + [
        (shape[2 + d] - 1) * strides[d] - pads[d] - pads[d + rank] + kernel[d] for d in range(rank)
    ]
    if _opt(inputs, 2) is not None and ints(inputs[2]) != inferred:
        # ONNX's reference puts the indices in the unpooled shape and pads it to output_shape;
        # onnxruntime (and PyTorch's max_unpool) count them over output_shape: no answer is safe.
        raise OnnxError(
            f"node {node.name!r} (MaxUnpool): output_shape {ints(inputs[2])} differs from the unpooled shape "
            f"{inferred}, where ONNX's reference and onnxruntime place the values differently"
        )
    total = math.prod(inferred)
    flat = ctx.host(indices).reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= total):
        raise OnnxError(
            f"node {node.name!r} (MaxUnpool): indices from {flat.min()} to {flat.max()} do not fit the "
            f"{total} elements of the unpooled shape {inferred}"
        )
    zeros = ctx.tensor(np.zeros(total, np.float32))
    out = zeros.scatter(0, indices.reshape((-1,)), x.reshape((-1,)), mode="assign")
    return [out.reshape(tuple(inferred))]


def _pool_pads(
    x: Tensor, before: list[int], after: list[int], kernel: list[int], value: float
) -> tuple[Tensor, list[int]]:
    """`x` with the pads burn's pooling cannot take (asymmetric, or over half the kernel) added
    explicitly with `value`; returns the symmetric pads left for the pooling op."""
    if before == after and all(p <= k // 2 for p, k in zip(before, kernel, strict=True)):
        return x, before
    pairs: list[int] = []
    for b, a in zip(reversed(before), reversed(after), strict=True):
        pairs += [b, a]
    return x.pad(pairs, value), [0] * len(kernel)


@register("MaxPool", "nn", "1-D, 2-D and 3-D; the Indices output needs pads burn's pooling takes "
          "(symmetric, at most half the kernel); integer inputs int8 and uint8")
def _max_pool(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    if x.kind is not Float:
        # ONNX pools int8 and uint8 too: exact in every float dtype (float16 holds integers to 2048)
        declared = node.input_dtype(0)
        if declared is None or declared not in (np.dtype(np.int8), np.dtype(np.uint8)):
            raise OnnxError(
                f"node {node.name!r} (MaxPool): integer inputs must be declared int8 or uint8, got "
                f"{'an undeclared type' if declared is None else declared.name}"
            )
        outs = _max_pool(ctx, node, [x.float().cast(ctx.float_dtype)])
        return [outs[0].int(), *outs[1:]]
    kernel = [int(k) for k in node.attr("kernel_shape")]
    strides, dilations, before, after = _spatial(node, x, kernel)
    ceil = bool(node.attr("ceil_mode", 0))
    padded, pads = _pool_pads(x, before, after, kernel, -math.inf)
    rank = len(kernel)
    if ceil and padded is not x:  # pads added here: add the ceil-mode end too (pooling would count them)
        extra = _ceil_extra(x, kernel, strides, dilations, before, after)
        padded = x.pad(_pairs(before, [a + e for a, e in zip(after, extra, strict=True)]), -math.inf)
        ceil = False
    if rank > 3:
        raise OnnxError(f"node {node.name!r} (MaxPool): {rank}-D pooling is not supported")
    if len(node.outputs) < 2 or not node.outputs[1]:
        if rank == 1:
            return [F.max_pool1d(padded, kernel[0], strides[0], pads[0], dilations[0], ceil)]
        if rank == 2:
            return [F.max_pool2d(padded, kernel, strides, pads, dilations, ceil)]
        return [max_pool3d(padded, kernel, strides, pads, dilations, ceil)]
    if padded is not x:
        raise OnnxError(
            f"node {node.name!r} (MaxPool): the Indices output with pads {before + after} (asymmetric, "
            f"or over half the kernel {kernel}) is not supported"
        )
    if rank == 1:
        values, plane = F.max_pool1d_with_indices(x, kernel[0], strides[0], pads[0], dilations[0], ceil)
    else:
        pool = F.max_pool2d_with_indices if rank == 2 else F.max_pool3d_with_indices
        values, plane = pool(x, kernel, strides, pads, dilations, ceil)
    # burn counts within each [N, C] plane in row-major order; ONNX over the whole tensor, with
    # storage_order=1 reading the last two spatial dims column-major
    spatial = list(x.shape[2:])
    if node.attr("storage_order", 0) and rank >= 2:
        h, w = spatial[-2], spatial[-1]
        inner = plane % (h * w)
        plane = plane - inner + (inner % w) * h + inner // w
    n, c = x.shape[0], x.shape[1]
    offsets = np.arange(n * c, dtype=np.int64).reshape([n, c] + [1] * rank) * math.prod(spatial)
    return [values, plane + ctx.tensor(offsets)]


def _avg(
    x: Tensor, kernel: list[int], strides: list[int], pads: list[int], include: bool, ceil: bool
) -> Tensor:
    rank = len(kernel)
    if rank == 1:
        return F.avg_pool1d(x, kernel[0], strides[0], pads[0], include, ceil)
    if rank == 2:
        return F.avg_pool2d(x, kernel, strides, pads, include, ceil)
    return avg_pool3d(x, kernel, strides, pads, include, ceil)


@register("AveragePool", "nn", "1-D, 2-D and 3-D")
def _avg_pool(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    kernel = [int(k) for k in node.attr("kernel_shape")]
    strides, dilations, before, after = _spatial(node, x, kernel)
    if len(kernel) > 3:
        raise OnnxError(f"node {node.name!r} (AveragePool): {len(kernel)}-D pooling is not supported")
    include = bool(node.attr("count_include_pad", 0))
    ceil = bool(node.attr("ceil_mode", 0))
    padded, pads = _pool_pads(x, before, after, kernel, 0.0)
    if any(d != 1 for d in dilations) or ceil and padded is not x:
        # burn's pooling has no dilations, and its ceil mode would count pads added here as input
        return [_avg_pool_by_sums(ctx, x, kernel, strides, dilations, before, after, include, ceil)]
    if padded is x or include:
        return [_avg(padded, kernel, strides, pads, include, ceil)]
    # Pads excluded from the divisor, but too uneven for the pooling op: divide the sums over the
    # zero-padded input by the counts of real elements (the pooled zero-padded ones).
    ones = x.ones_like().pad(_pairs(before, after), 0.0)
    return [_avg(padded, kernel, strides, pads, True, ceil) / _avg(ones, kernel, strides, pads, True, ceil)]


def _ceil_extra(
    x: Tensor, kernel: list[int], strides: list[int], dilations: list[int],
    before: list[int], after: list[int],
) -> list[int]:
    """Per spatial dim, the zeros past the end pads that ceil mode's last window reaches (none when
    that window would start in the end padding: it is dropped, as PyTorch and ONNX do)."""
    extra = []
    for d, k in enumerate(kernel):
        size = x.shape[2 + d]
        total = size + before[d] + after[d]
        count = -(-(total - dilations[d] * (k - 1) - 1) // strides[d]) + 1
        if (count - 1) * strides[d] >= size + before[d]:
            count -= 1
        extra.append(max(0, (count - 1) * strides[d] + dilations[d] * (k - 1) + 1 - total))
    return extra


def _window_sums(
    ctx: Ctx, t: Tensor, kernel: list[int], strides: list[int], dilations: list[int]
) -> Tensor:
    """The sum of each (dilated) window of `t` per channel, unpadded: a grouped convolution with a
    kernel of ones, one group per channel (burn's pooling ops have no dilations)."""
    channels, rank = t.shape[1], len(kernel)
    w = ctx.tensor(np.ones([channels, 1, *kernel], np.float32))
    if rank == 1:
        return F.conv1d(t, w, None, strides[0], 0, dilations[0], channels)
    if rank == 2:
        return F.conv2d(t, w, None, strides, 0, dilations, channels)
    return conv3d(t, w, None, strides, 0, dilations, channels)


def _avg_pool_by_sums(
    ctx: Ctx, x: Tensor, kernel: list[int], strides: list[int], dilations: list[int],
    before: list[int], after: list[int], include: bool, ceil: bool,
) -> Tensor:
    """Average pooling of any pads, dilations and ceil mode: the window sums over the zero-padded
    input divided by the window sums of a mask of what counts (the input, and the pads when
    `include`; never the extra end a ceil-mode window reaches)."""
    rank = len(kernel)
    extra = _ceil_extra(x, kernel, strides, dilations, before, after) if ceil else [0] * rank
    ends = [a + e for a, e in zip(after, extra, strict=True)]
    mask = x.narrow(1, 0, 1).ones_like().pad(_pairs(before, after), 1.0 if include else 0.0)
    mask = mask.pad(_pairs([0] * rank, extra), 0.0)
    sums = _window_sums(ctx, x.pad(_pairs(before, ends), 0.0), kernel, strides, dilations)
    return sums / _window_sums(ctx, mask, kernel, strides, dilations)


def _pairs(before: list[int], after: list[int]) -> list[int]:
    out: list[int] = []
    for b, a in zip(reversed(before), reversed(after), strict=True):
        out += [b, a]
    return out


@register("LpPool", "nn", "1-D, 2-D and 3-D")
def _lp_pool(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    kernel = [int(k) for k in node.attr("kernel_shape")]
    strides, dilations, before, after = _spatial(node, x, kernel)
    if len(kernel) > 3:
        raise OnnxError(f"node {node.name!r} (LpPool): {len(kernel)}-D pooling is not supported")
    p = float(node.attr("p", 2))
    powered = x.square() if p == 2.0 else x.abs().powf_scalar(p)
    if any(d != 1 for d in dilations) or node.attr("ceil_mode", 0):
        ends = after
        if node.attr("ceil_mode", 0):
            extra = _ceil_extra(x, kernel, strides, dilations, before, after)
            ends = [a + e for a, e in zip(after, extra, strict=True)]
        sums = _window_sums(ctx, powered.pad(_pairs(before, ends), 0.0), kernel, strides, dilations)
    else:
        # The window sums of |x|^p: averages over whole windows (zero pads counted) times their size.
        padded, pads = _pool_pads(powered, before, after, kernel, 0.0)
        sums = _avg(padded, kernel, strides, pads, True, False) * math.prod(kernel)
    return [sums.sqrt() if p == 2.0 else sums.powf_scalar(1.0 / p)]


@register(["GlobalAveragePool", "GlobalMaxPool"], "nn")
def _global_pool(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    shape = tuple(x.shape)
    # One reduction over the spatial dims flattened (a view, channels-last memory included), not
    # one per dim: half the time of MobileNetV3's squeeze-and-excite means on ndarray.
    flat = x.reshape((*shape[:2], -1))
    out = flat.mean_dim(2) if node.op_type == "GlobalAveragePool" else flat.max_dim(2)
    return [out.reshape((*shape[:2], *(1,) * (len(shape) - 2)))]


# -- normalization ----------------------------------------------------------------------------------
def _channel(t: Tensor, rank: int) -> Tensor:
    """A per-channel vector shaped to broadcast over ``[N, C, *spatial]``."""
    return t.reshape((1, -1) + (1,) * (rank - 2))


@register("BatchNormalization", "nn", "training_mode=1 normalizes by the batch's statistics and gives "
          "the updated running ones as outputs (the graph's params are not changed)")
def _batch_norm(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    training = bool(node.attr("training_mode", 0))
    if not training and len([o for o in node.outputs if o]) > 1:
        raise OnnxError(
            f"node {node.name!r} (BatchNormalization): running statistics outputs need training_mode=1"
        )
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    scale, bias, mean, var = (_channel(ctx.tensor(v), rank) for v in inputs[1:5])
    if not training:
        inv = (var + node.attr("epsilon", 1e-5)).sqrt().recip() * scale
        return [(x - mean) * inv + bias]
    # ONNX's training form: the batch's mean and (biased) variance over every dim but channels
    dims = [0, *range(2, rank)]
    batch_mean = x.mean_dims(dims)
    batch_var = (x - batch_mean).square().mean_dims(dims)
    y = (x - batch_mean) * (batch_var + node.attr("epsilon", 1e-5)).sqrt().recip() * scale + bias
    momentum = float(node.attr("momentum", 0.9))
    running_mean = (mean * momentum + batch_mean * (1.0 - momentum)).reshape((-1,))
    running_var = (var * momentum + batch_var * (1.0 - momentum)).reshape((-1,))
    return [y, running_mean, running_var]


@register("InstanceNormalization", "nn")
def _instance_norm(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    dims = list(range(2, rank))
    mean = x.mean_dims(dims)
    centered = x - mean
    var = centered.square().mean_dims(dims)
    y = centered / (var + node.attr("epsilon", 1e-5)).sqrt()
    return [y * _channel(ctx.tensor(inputs[1]), rank) + _channel(ctx.tensor(inputs[2]), rank)]


def _fused_layer_norm(ctx: Ctx, node: Node, inputs: Sequence[Value], x: Tensor, axis: int) -> Tensor | None:
    """`burn.tensor.module.layer_norm` over the dims from `axis` on (as one flattened last dim),
    when only ``Y`` is asked for and the scale and bias have the normalized shape; else None."""
    from burn.tensor.module.norm import layer_norm

    if len(node.outputs) > 1 and any(node.outputs[1:]):
        return None  # the saved mean and inverse deviation: the composition gives them
    width = math.prod(x.shape[axis:])
    params = [ctx.tensor(inputs[1]), *([] if _opt(inputs, 2) is None else [ctx.tensor(inputs[2])])]
    if width == 0 or any(p.shape != x.shape[axis:] or p.dtype is not x.dtype for p in params):
        return None  # a scale that broadcasts, or of another dtype: the composition
    flat = x.reshape((*x.shape[:axis], width)) if axis != len(x.shape) - 1 else x
    gamma, *beta = (p.reshape((width,)) for p in params)
    out = layer_norm(flat, gamma, beta[0] if beta else None, epsilon=float(node.attr("epsilon", 1e-5)))
    return out if flat is x else out.reshape(x.shape)


@register("LayerNormalization", "nn", "stash_type is ignored (statistics in the model's float dtype)")
def _layer_norm(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    axis = norm_axis(node.attr("axis", -1), rank, node)
    dims = list(range(axis, rank))
    fused = _fused_layer_norm(ctx, node, inputs, x, axis)
    if fused is not None:
        return [fused]
    mean = x.mean_dims(dims)
    centered = x - mean
    var = centered.square().mean_dims(dims)
    inv_std = (var + node.attr("epsilon", 1e-5)).sqrt().recip()
    y = centered * inv_std * ctx.tensor(inputs[1])
    if _opt(inputs, 2) is not None:
        y = y + ctx.tensor(inputs[2])
    return [y, mean, inv_std][: max(1, len(node.outputs))]


@register("RMSNormalization", "nn", "stash_type is ignored (statistics in the model's float dtype)")
def _rms_norm(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    dims = list(range(norm_axis(node.attr("axis", -1), rank, node), rank))
    inv_rms = (x.square().mean_dims(dims) + node.attr("epsilon", 1e-5)).sqrt().recip()
    x, scale = align(x * inv_rms, ctx.tensor(inputs[1]))
    return [x * scale]


@register("LpNormalization", "nn")
def _lp_norm(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    d = norm_axis(node.attr("axis", -1), len(x.shape), node)
    p = node.attr("p", 2)
    norm = x.abs().sum_dim(d) if p == 1 else x.square().sum_dim(d).sqrt()
    # A zero vector stays zero (ONNX), not 0/0 = NaN: its norm is divided as 1.
    return [x / norm.mask_fill(norm.equal(0.0), 1.0)]


@register("GroupNormalization", "nn", "stash_type is ignored (statistics in the model's float dtype)")
def _group_norm(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    groups = int(node.attr("num_groups", 0))
    n, c = x.shape[0], x.shape[1]
    if groups < 1 or c % groups:
        raise OnnxError(f"node {node.name!r} (GroupNormalization): {c} channels in {groups} groups")
    rank = len(x.shape)
    g = x.reshape((n, groups, -1))
    mean = g.mean_dim(2)
    centered = g - mean
    var = centered.square().mean_dim(2)
    y = (centered / (var + node.attr("epsilon", 1e-5)).sqrt()).reshape(tuple(x.shape))
    scale, bias = ctx.tensor(inputs[1]), ctx.tensor(inputs[2])
    if scale.shape[0] != c:  # opset 18: one scale and bias per group, spread over its channels
        if scale.shape[0] != groups:
            raise OnnxError(
                f"node {node.name!r} (GroupNormalization): scale of size {scale.shape[0]} for {c} "
                f"channels in {groups} groups"
            )
        scale = scale.reshape((groups, 1)).expand((groups, c // groups)).reshape((c,))
        bias = bias.reshape((groups, 1)).expand((groups, c // groups)).reshape((c,))
    return [y * _channel(scale, rank) + _channel(bias, rank)]


@register("LRN", "nn")
def _lrn(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    size = int(node.attr("size", 0))
    if len(x.shape) < 3 or size < 1:
        raise OnnxError(
            f"node {node.name!r} (LRN): needs rank >= 3 and size >= 1, got {list(x.shape)}, {size}"
        )
    rank, c = len(x.shape), x.shape[1]
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    # The sum of squares over the channel window [c - before, c + after], zeros past the edges.
    sq = x.square().pad([0, 0] * (rank - 2) + [before, after], 0.0)
    total = sq.narrow(1, 0, c)
    for k in range(1, size):
        total = total + sq.narrow(1, k, c)
    scale = total * (node.attr("alpha", 1e-4) / size) + node.attr("bias", 1.0)
    return [x / scale.powf_scalar(node.attr("beta", 0.75))]


@register("MeanVarianceNormalization", "nn")
def _mvn(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    dims = sorted({norm_axis(a, len(x.shape), node) for a in node.attr("axes", [0, 2, 3])})
    mean = x.mean_dims(dims)
    # ONNX's definition: sqrt(E[x^2] - E[x]^2), then 1e-9 added to the deviation
    std = (x.square().mean_dims(dims) - mean.square()).clamp_min(0.0).sqrt()
    return [(x - mean) / (std + 1e-9)]
