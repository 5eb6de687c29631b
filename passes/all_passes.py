"""Import every tfn pass so the registry is complete."""
from tfn.passes import (  # noqa: F401
    pipelines,  # noqa: F401
    tfn_async_parallel,
    tfn_div_by_constant,
    tfn_lower_vector_ops,
    tfn_mark_readonly_args,
    tfn_pack_matmul,
    tfn_parallelize,
    tfn_polynomial_approximation,
    tfn_to_linalg,
    tfn_vectorize_elementwise,
    tfn_vectorize_kernels,
    tfn_vectorize_reductions,
    tfn_verify,
    tfn_widen_bool_memrefs,
)
