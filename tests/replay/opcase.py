"""Build one original op (an ``OpInfo``) to replay in a test, without a graph file."""

from __future__ import annotations

import numpy as np

from fpinspect.dumps.formats.ge_decode import InputRef, OpInfo, TensorDesc

GE = {
    np.dtype(np.float16): "DT_FLOAT16",
    np.dtype(np.float32): "DT_FLOAT",
    np.dtype(np.float64): "DT_DOUBLE",
    np.dtype(np.int32): "DT_INT32",
    np.dtype(np.int64): "DT_INT64",
    np.dtype(bool): "DT_BOOL",
}


def desc(shape, dtype=np.float16, layout="ND") -> TensorDesc:
    return TensorDesc(
        dtype=GE[np.dtype(dtype)],
        shape=tuple(shape),
        layout=layout,
        origin_format=layout,
        origin_shape=tuple(shape),
    )


def make_op(
    type: str, inputs: list, out_shapes: list, *, dtype=np.float16, attrs=None, out_dtypes=None, layouts=None
) -> OpInfo:
    """``inputs`` are arrays (their shapes and dtypes make the input descs) or shapes for
    inputs without a value; outputs all have ``dtype`` unless ``out_dtypes`` says otherwise."""
    in_descs = []
    for k, v in enumerate(inputs):
        layout = (layouts or {}).get(k, "ND")
        in_descs.append(
            desc(v.shape, v.dtype, layout) if isinstance(v, np.ndarray) else desc(v, np.int64, layout)
        )
    out_dtypes = out_dtypes or [dtype] * len(out_shapes)
    return OpInfo(
        name=f"{type.lower()}_0",
        type=type,
        graph="test",
        inputs=[InputRef(f"in{k}", 0) for k in range(len(inputs))],
        control_inputs=[],
        attrs=dict(attrs or {}),
        input_desc=in_descs,
        output_desc=[desc(s, d) for s, d in zip(out_shapes, out_dtypes)],
    )


def values(inputs: list) -> list:
    return [v if isinstance(v, np.ndarray) else None for v in inputs]
