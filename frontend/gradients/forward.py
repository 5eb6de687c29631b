"""`tfn.autodiff.ForwardAccumulator`: forward-mode products J @ tangent (`tf.autodiff.ForwardAccumulator`).

A JVP is the transpose of a VJP, and a VJP is linear in its cotangent: the accumulator records the ops on its
primals with a tape, and `jvp(target)` differentiates the tape's backward pass (traced with a symbolic
cotangent u, J^T u) with respect to u, seeded with the tangents: d(J^T u . t)/du = J t.
"""
from tfn import nest
from tfn.core.tensor import TensorBase, convert_to_tensor
from tfn.gradients.tape import GradientTape, UnconnectedGradients, _fill_unconnected, _unconnected
from tfn.ops import fill_ops


class ForwardAccumulator:
    """Computes Jacobian-vector products of the ops run on `primals` inside its context."""

    def __init__(self, primals, tangents):
        self._primals = nest.flatten(primals)
        self._tangents = [convert_to_tensor(t) for t in nest.flatten(tangents)]
        nest.assert_same_structure(primals, tangents)
        for p, t in zip(self._primals, self._tangents):
            if not isinstance(p, TensorBase):
                raise ValueError(f"ForwardAccumulator primals must be tensors or variables, got {p!r}")
            if tuple(p.shape) != tuple(t.shape) or p.dtype is not t.dtype:
                raise ValueError(f"Tangent {t!r} must have the shape {p.shape} and dtype {p.dtype.name} of its "
                                 f"primal")
        self._tape = GradientTape(persistent=True, watch_accessed_variables=False)

    def __enter__(self):
        self._tape.__enter__()
        self._tape.watch(self._primals)
        return self

    def __exit__(self, *exc):
        return self._tape.__exit__(*exc)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """J @ tangents for each tensor in `primals` (a nested structure of tensors computed in the context)."""
        unconnected = _unconnected(unconnected_gradients)
        return nest.map_structure(lambda t: self._jvp(t, unconnected), primals)

    def _jvp(self, target, unconnected):
        if not target.dtype.is_floating:
            return _fill_unconnected(None, target, unconnected)
        paused = self._tape._recording  # (the backward ops are not the accumulator's to record)
        if paused:
            self._tape._pop()
        try:
            u = fill_ops.zeros_like(target)
            with GradientTape() as outer:
                outer.watch(u)
                vjps = self._tape._flat_gradient([target], self._primals, [u])
            pairs = [(g, t) for g, t in zip(vjps, self._tangents) if g is not None]
            result = None
            if pairs:
                result = outer.gradient([g for g, _ in pairs], u, output_gradients=[t for _, t in pairs])
        finally:
            if paused:
                self._tape._push()
        return _fill_unconnected(result, target, unconnected)
