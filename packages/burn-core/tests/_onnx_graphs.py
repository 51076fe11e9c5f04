"""One-node ONNX models built with ``onnx.helper``, as the ONNX op tests write their cases."""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper, numpy_helper


def one_node_model(
    op: str,
    inputs: dict[str, np.ndarray],
    consts: dict[str, np.ndarray] | None = None,
    order: list[str] | None = None,
    opset: int = 17,
    **attrs: Any,
) -> Any:
    """A model of one node `op` (named ``{op}_node``, output ``y`` of unknown type): `inputs` are
    graph inputs (typed from the arrays), `consts` initializers; `order` is the node's input list
    ('' for an omitted one), by default the inputs then the consts; `attrs` the node's attributes.
    """
    consts = consts or {}
    names = order if order is not None else [*inputs, *consts]
    node = helper.make_node(op, names, ["y"], name=f"{op}_node", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for k, v in inputs.items()
        ],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(v, k) for k, v in consts.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
