"""Public op functions by family (math, arrays, reductions, ...), tfn.cond/while_loop and TensorArray.

Importing this package imports every family that registers public functions (core/api.py), from which the
`tfn`, `tfn.math`, `tfn.linalg` and `tfn.nn` namespaces take their op functions.
"""
from tfn.ops import (  # noqa: F401  (each registers its family's public functions)
    activation_ops,
    array_ops,
    clip_ops,
    collective_ops,
    counting_ops,
    debugging_ops,
    dropout_ops,
    einsum_ops,
    fill_ops,
    gamma_ops,
    gauss_jordan_ops,
    linalg_ops,
    loss_ops,
    map_fn,
    mask_ops,
    math_ops,
    matrix_ops,
    nn_ops,
    normalization_ops,
    print_ops,
    reduction_ops,
    rounding_ops,
    safe_math_ops,
    scan_ops,
    scatter_ops,
    segment_ops,
    sequence_ops,
    shape_ops,
    slicing_ops,
    sort_ops,
    split_ops,
    statistics_ops,
)
