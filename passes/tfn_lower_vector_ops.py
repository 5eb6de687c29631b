"""tfn-lower-vector-ops: after bufferization, lower vector.contract to FMAs and n-D transfers to 1-D ones.

vector.contract becomes outer products and then vector.fma; transfers, transposes, broadcasts and shape casts are
reduced to rank 1, and the remaining n-D transfers are fully unrolled: left to convert-vector-to-scf they become
allocas inside loops (a stack overflow on large kernels). Modules without vector ops are left untouched.
"""
from tfn.passes.registry import register
from tfn.passes.tfn_vectorize_kernels import apply_schedule
from tfn.passes.walk import contains

_ANY = "!transform.any_op"
SCHEDULE = f"""
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @tfn_kernels(%root: {_ANY} {{transform.readonly}}) {{
    %f = transform.structured.match ops{{["func.func"]}} in %root : ({_ANY}) -> {_ANY}
    transform.apply_patterns to %f {{
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_1d"
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    }} : {_ANY}
    transform.apply_cse to %f : {_ANY}
    transform.apply_patterns to %f {{
      transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    }} : {_ANY}
    transform.yield
  }}
}}
"""


def _has_vectors(module_op):
    return contains(module_op, lambda op: op.name.startswith("vector."))


@register("tfn-lower-vector-ops", "Lower vector.contract to FMAs and n-D vector transfers to unrolled 1-D ones")
def lower_vector_ops(module_op):
    if _has_vectors(module_op):
        apply_schedule(module_op, SCHEDULE)
