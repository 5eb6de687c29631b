"""`tfn.GradientTape`: records the ops that run on watched tensors and differentiates them in reverse.

A tape records in the graph context it was entered in: eagerly, ops run on NumPy and the tape keeps their
tensors; inside a `tfn.function`, ops are traced and `gradient` traces the backward ops into the same
function (each with the location of the forward op it differentiates). Gradient rules are tfn ops, so the
backward pass is recorded by any outer tape: nested tapes give higher derivatives.
"""
import enum
import functools
import re
import threading
import warnings

from tfn import nest
from tfn.core import graph as graph_mod
from tfn.core.tensor import SymbolicTensor, TensorBase, convert_to_tensor
from tfn.gradients import recording
from tfn.gradients.registry import OpView, rule_for
from tfn.ops import array_ops, fill_ops, math_ops
from tfn.state.variables import Variable


class UnconnectedGradients(enum.Enum):
    """What `gradient` gives a source the target does not depend on: None, or zeros of its shape."""

    NONE = "none"
    ZERO = "zero"


def _trainable(x):
    return x.dtype.is_floating


class _Entry:
    """One recorded op: `backward(output_grads) -> input_grads`; `location` is the forward op's (traced)."""

    __slots__ = ("inputs", "outputs", "backward", "location", "view")

    def __init__(self, inputs, outputs, backward, location, view=None):
        self.inputs = inputs
        self.outputs = outputs
        self.backward = backward
        self.location = location
        self.view = view  # the OpView a table op's rule sees


def _op_backward(rule, op, grads):
    out = rule(op, *grads)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _no_gradient(message, grads):
    raise LookupError(message)


def _identity_backward(grads):
    return grads


class GradientTape:
    """Record operations for automatic differentiation (`tf.GradientTape`)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._recording = False
        self._thread = None
        self._graph = None
        self._warned = False
        self._new_tape()

    def _new_tape(self):
        self._tracked = {}  # id -> the tensor or variable (kept alive, so ids stay unique while recorded)
        self._entries = []
        self._variables = {}  # id -> watched variable, in watch order

    # --- recording ----------------------------------------------------------------------------------------
    def __enter__(self):
        self._push()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._pop()
        return False

    def _push(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active "
                             "tape.")
        if self._entries is None:
            self._new_tape()
        self._thread = threading.get_ident()
        self._graph = graph_mod.current()
        self._recording = True
        recording.ACTIVE.append(self)

    def _pop(self):
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._recording = False
        for i, t in enumerate(recording.ACTIVE):
            if t is self:
                del recording.ACTIVE[i]
                break

    def stop_recording(self):
        """A context manager in which ops are not recorded on this tape."""
        return _StopRecording(self)

    def reset(self):
        """Clear everything recorded so far, as if the tape were exited and entered again."""
        self._pop()
        self._new_tape()
        self._push()

    def watch(self, tensor):
        """Record the ops on `tensor` (a tensor, variable or nested structure of them) from now on."""
        for x in nest.flatten(tensor):
            if isinstance(x, Variable):
                self._watch_variable(x)
            elif isinstance(x, TensorBase):
                if not _trainable(x):
                    warnings.warn(f"The dtype of the watched tensor must be floating (e.g. tfn.float32), got "
                                  f"{x.dtype.name}", stacklevel=2)
                    continue
                self._tracked[id(x)] = x
            else:
                raise ValueError(f"Passed in object {x!r} of type {type(x).__name__!r}, not tfn.Tensor or "
                                 "tfn.Variable.")

    def watched_variables(self):
        """The variables this tape watches, in the order it started watching them."""
        return tuple(self._variables.values())

    def _watch_variable(self, v):
        if not v.dtype.is_floating:
            return
        self._variables[id(v)] = v
        self._tracked[id(v)] = v

    def _tracks_any(self, inputs):
        tracked = self._tracked
        return tracked is not None and any(id(x) in tracked for x in inputs)

    def _here(self):
        return graph_mod.current() is self._graph

    def _record(self, inputs, outputs, backward, location=None, view=None):
        """Record `outputs = f(inputs)` with `backward(output_grads) -> input_grads` if an input is tracked."""
        if not self._here() or not self._tracks_any(inputs):
            return
        for o in outputs:
            if isinstance(o, TensorBase) and _trainable(o):
                self._tracked[id(o)] = o
        self._entries.append(_Entry(list(inputs), list(outputs), backward, location, view))

    def _record_op(self, opdef, inputs, attrs, outputs):
        if not self._here() or not self._tracks_any(inputs):
            return
        location = outputs[0]._mlir.owner.location if outputs and isinstance(outputs[0], SymbolicTensor) else None
        rule = rule_for(opdef)
        view = None
        if rule is None:
            if not opdef.differentiable:  # (as TF's NotDifferentiable ops: no gradient flows through)
                return
            backward = functools.partial(_no_gradient, f"No gradient defined for operation '{opdef.full_name}'")
        else:
            view = OpView(opdef, list(inputs), attrs, outputs)
            backward = functools.partial(_op_backward, rule, view)
        self._record(inputs, outputs, backward, location, view)

    def _record_read(self, variable, tensor):
        if not self._here():
            return
        if id(variable) not in self._tracked:
            if not (self._watch_accessed_variables and variable.trainable):
                return
            self._watch_variable(variable)
        self._record([variable], [tensor], _identity_backward)

    def _record_opaque(self, construct, inputs, outputs, where):
        line = f" at {where[0]}:{where[1]}" if where else ""
        message = (f"Gradients through {construct}{line} are not supported yet: a watched value flows through "
                   "it. Compute the value without tensor-dependent control flow (e.g. with tfn.where) to "
                   "differentiate it.")
        self._record([x for x in inputs if isinstance(x, TensorBase)], outputs,
                     functools.partial(_no_gradient, message))

    # --- differentiation -----------------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of target)/d(source) for each source (a nested structure like `sources`)."""
        if self._entries is None:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients "
                               "(or jacobians)")
        if self._recording:
            if not self._persistent:
                self._pop()
            elif not self._warned:
                self._warned = True
                warnings.warn("Calling GradientTape.gradient on a persistent tape inside its context is "
                              "significantly less efficient than calling it outside the context (it causes the "
                              "gradient ops to be recorded on the tape). Only call it inside the context to "
                              "compute higher-order derivatives.", stacklevel=2)
        if target is None:
            raise TypeError("Argument `target` should be a list or nested structure of Tensors, Variables to be "
                            "differentiated, but received None.")
        unconnected = _unconnected(unconnected_gradients)
        flat_targets = nest.flatten(target)
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            if not isinstance(s, TensorBase):
                raise ValueError(f"Argument `sources` must hold tensors or variables, got {s!r}")
        grads = self._flat_gradient(flat_targets, flat_sources, _output_gradients(output_gradients, flat_targets))
        if not self._persistent:
            self._variables_after = self.watched_variables()
            self._entries = None
            self._tracked = None
        grads = [_fill_unconnected(g, s, unconnected) for g, s in zip(grads, flat_sources)]
        return nest.pack_sequence_as(sources, grads)

    def _flat_gradient(self, targets, sources, output_grads):
        """The gradient per source of sum(target * output_grad) over targets (None where unconnected)."""
        entries = list(self._entries)  # (a persistent tape in its context records the backward ops too)
        reach = {id(s) for s in sources if _trainable(s) and id(s) in self._tracked}
        relevant = []
        for e in entries:
            if any(id(x) in reach for x in e.inputs):
                relevant.append(e)
                reach.update(id(o) for o in e.outputs)
        grads = {}
        for t, og in zip(targets, output_grads):
            if isinstance(t, TensorBase) and id(t) in reach and _trainable(t):
                _accumulate(grads, t, og if og is not None else _ones_for(t))
        g = graph_mod.current()
        for e in reversed(relevant):
            out_grads = [_total(grads.get(id(o))) for o in e.outputs]
            if all(x is None for x in out_grads):
                continue
            out_grads = [_zeros_for(o) if x is None and isinstance(o, TensorBase) and _trainable(o) else x
                         for x, o in zip(out_grads, e.outputs)]
            if e.view is not None:
                e.view.needs = [id(x) in reach for x in e.inputs]
            in_grads = self._run_backward(g, e, out_grads)
            for x, gx in zip(e.inputs, in_grads):
                if gx is not None and id(x) in reach:
                    _accumulate(grads, x, gx)
        return [_total(grads.get(id(s))) for s in sources]

    @staticmethod
    def _run_backward(g, entry, out_grads):
        if g is None or entry.location is None:
            return entry.backward(out_grads)
        saved, g.forced_location = g.forced_location, entry.location
        try:
            return entry.backward(out_grads)
        except NotImplementedError as e:  # a rule's limit: name the forward op's line
            raise NotImplementedError(f"{e}\n  in tfn.function '{g.name}' at {_where(entry.location)}") from None
        finally:
            g.forced_location = saved

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE, parallel_iterations=None,
                 experimental_use_pfor=True):
        """d(target[i...])/d(source[j...]) per source, of shape target.shape + source.shape (static shapes)."""
        if self._entries is None:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients "
                               "(or jacobians)")
        if self._recording and not self._persistent:
            self._pop()
        unconnected = _unconnected(unconnected_gradients)
        flat_sources = nest.flatten(sources)
        t = convert_to_tensor(target)
        n = _static_size(t, "target")
        rows = []
        for i in range(n):
            seed = array_ops.reshape(fill_ops.one_hot(i, n, dtype=t.dtype), t.shape.as_list())
            rows.append(self._flat_gradient([target], flat_sources, [seed]))
        if not self._persistent:
            self._entries = None
            self._tracked = None
        out = []
        for j, s in enumerate(flat_sources):
            shape = list(t.shape.as_list()) + list(s.shape.as_list())
            col = [r[j] for r in rows]
            if all(c is None for c in col) and unconnected is UnconnectedGradients.NONE:
                out.append(None)
                continue
            col = [c if c is not None else _zeros_for(s) for c in col]
            out.append(array_ops.reshape(array_ops.stack(col) if col else _zeros_for(s), shape))
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """d(target[b, i...])/d(source[b, j...]): the jacobian per batch row (row b of target depends on row b)."""
        full = self.jacobian(target, source, unconnected_gradients)
        if full is None:
            return None
        t = convert_to_tensor(target)
        b = t.shape.as_list()[0]
        rows = [full[(i,) + (slice(None),) * (t.ndim - 1) + (i,)] for i in range(b)]
        return array_ops.stack(rows)


class _StopRecording:
    def __init__(self, tape):
        self._tape = tape

    def __enter__(self):
        if not self._tape._recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        self._tape._pop()

    def __exit__(self, *exc):
        self._tape._push()
        return False


def _where(location):
    """`file:line` of an MLIR file location."""
    m = re.match(r'loc\("(.*)":(\d+):\d+\)', str(location))
    return f"{m.group(1)}:{m.group(2)}" if m else str(location)


def _unconnected(value):
    try:
        return UnconnectedGradients(value.value if isinstance(value, UnconnectedGradients) else value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}") from None


def _output_gradients(output_gradients, flat_targets):
    if output_gradients is None:
        return [None] * len(flat_targets)
    flat = nest.flatten(output_gradients)
    if len(flat) != len(flat_targets):
        raise ValueError(f"`output_gradients` has {len(flat)} tensors for {len(flat_targets)} targets")
    return [None if g is None else convert_to_tensor(g) for g in flat]


def _static_size(t, what):
    if None in t._shape:
        raise ValueError(f"jacobian needs the static shape of the {what}, got {t.shape}")
    n = 1
    for d in t._shape:
        n *= d
    return n


def _value_of(x):
    return x.value() if isinstance(x, Variable) else x


def _ones_for(x):
    with recording.pause():
        return fill_ops.ones_like(_value_of(x))


def _zeros_for(x):
    with recording.pause():
        return fill_ops.zeros_like(_value_of(x))


def _accumulate(grads, x, g):
    grads.setdefault(id(x), []).append(g)


def _total(parts):
    """The sum of the gradient contributions to one tensor (None when there are none)."""
    if not parts:
        return None
    total = parts[0]
    for p in parts[1:]:
        total = math_ops.add(total, p)
    return total


def _fill_unconnected(g, source, unconnected):
    if g is not None or unconnected is UnconnectedGradients.NONE:
        return g
    return _zeros_for(source)


def stop_gradient(input, name=None):  # noqa: A002
    """`input` as a tensor that tapes do not differentiate through (its gradient is zero)."""
    with recording.pause():
        return math_ops.identity(_value_of(input))
