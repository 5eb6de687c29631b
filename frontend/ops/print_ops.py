"""`tfn.print`: print text and tensors eagerly now, or from compiled code at every call of a tfn.function."""
import sys

from tfn import nest
from tfn.core import graph as graph_mod
from tfn.core.api import op_api
from tfn.core.tensor import TensorBase
from tfn.dialects import ops, optable
from tfn.dialects.ops_print import STREAMS
from tfn.state.variables import Variable

_PLACEHOLDER = "\x00tfn-tensor\x00"


def _stream_name(output_stream):
    """The name tfn.print's op stores for an output stream (sys.stdout, sys.stderr or 'file://<path>')."""
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    for name in STREAMS:
        if output_stream is getattr(sys, name) or output_stream is getattr(sys, f"__{name}__"):
            return name
    raise ValueError(f"Unsupported output stream for tfn.print: {output_stream!r}; use sys.stdout, sys.stderr "
                     "or a 'file://<path>' string")


def _pieces(inputs, sep, end):
    """The output as alternating text and tensors: Python values as-is (strings verbatim, others by pprint)."""
    import pprint  # start-up cost: pprint (and dataclasses, which it loads) only when Python values print

    pieces = [""]
    for i, x in enumerate(inputs):
        if i:
            pieces[-1] += sep
        if isinstance(x, Variable):
            x = x.value()
        if isinstance(x, TensorBase):
            pieces += [x, ""]
            continue
        leaves = nest.flatten(x)
        if isinstance(x, str) or not any(isinstance(leaf, (TensorBase, Variable)) for leaf in leaves):
            pieces[-1] += x if isinstance(x, str) else pprint.pformat(x)
            continue
        tensors = [leaf.value() if isinstance(leaf, Variable) else leaf for leaf in leaves
                   if isinstance(leaf, (TensorBase, Variable))]
        marked = nest.pack_sequence_as(x, [_PLACEHOLDER if isinstance(leaf, (TensorBase, Variable)) else leaf
                                           for leaf in leaves])
        texts = pprint.pformat(marked).split(repr(_PLACEHOLDER))
        pieces[-1] += texts[0]
        for t, text in zip(tensors, texts[1:]):
            pieces += [t, text]
    pieces[-1] += end
    return pieces


@op_api(ops.print, exports=("print",))
def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001
    """Print inputs like tf.print (to sys.stderr by default): eagerly now; in a tfn.function at every call."""
    stream = "stderr" if output_stream is None else _stream_name(output_stream)
    pieces = _pieces(inputs, str(sep), str(end))
    opdef = optable.OPS["print"]
    summarize = 3 if summarize is None else int(summarize)  # as TF: None is the default, -1 prints everything
    g = graph_mod.current()
    # One op per tensor, writing the text before it; the last also writes the text after. Text alone: one op.
    tensors = pieces[1::2]
    ops = [(pieces[2 * k], t) for k, t in enumerate(tensors)] or [(pieces[0], None)]
    for k, (prefix, tensor) in enumerate(ops):
        suffix = pieces[-1] if tensors and k == len(ops) - 1 else ""
        attrs = {"prefix": prefix, "suffix": suffix, "summarize": summarize, "stream": stream}
        if g is None:
            opdef.run_kernel([] if tensor is None else [tensor._value], attrs)
            continue
        operands = [] if tensor is None else [g.as_symbolic(tensor)]
        attrs["site"] = len(g.callbacks)
        g.callbacks.append(_handler(opdef, dict(attrs)))
        g.emit(opdef, operands, attrs, [])


def _handler(opdef, attrs):
    return lambda arrays: opdef.run_kernel(arrays, attrs)
