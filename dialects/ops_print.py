"""tfn.print: write text and one tensor formatted as tf.print does (TF's SummarizeValue with print_v2)."""
import sys

import numpy as np

from tfn.dialects.optable import define

# Output streams by the name the op stores (the object is looked up when printing, so a replaced
# sys.stderr, e.g. pytest's capture, receives the text); "file://<path>" appends to a file.
STREAMS = ("stderr", "stdout")


def _float_text(v, single):
    """TF's FloatToBuffer/DoubleToBuffer: %.6g (%.15g) when it round-trips, else %.9g (%.17g)."""
    short, full, cast = (6, 9, np.float32) if single else (15, 17, np.float64)
    text = "%.*g" % (short, v)
    if not np.isfinite(v) or cast(text) == cast(v):
        return text
    return "%.*g" % (full, v)


def element_text(v, kind, quote):
    """One element as TF prints it: bools as 1/0, floats by _float_text, strings quoted inside arrays."""
    if kind == "b":
        return "1" if v else "0"
    if kind == "f":
        return _float_text(float(v), np.asarray(v).dtype.itemsize <= 4)
    if kind == "O" or kind == "S":
        text = v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else str(v)
        if not quote:
            return text
        return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    return str(int(v))


def _dim_spacing(dim, rank):
    if dim == rank - 1:
        return " "
    return "\n" * (rank - dim - 1) + " " * (dim + 1)


def _one_dim(arr, dim, ends, out):
    """TF's PrintOneDimV2: `ends` leading and trailing entries per dimension, `...` between."""
    kind = arr.dtype.kind
    if arr.ndim == 0:
        out.append(element_text(arr[()], kind, True))
        return
    n = arr.shape[0]
    out.append("[")
    shown = list(range(min(ends, n))) + ["..."] * (n > 2 * ends) + list(range(max(ends, n - ends), n))
    for j, i in enumerate(shown):
        if j:
            out.append(_dim_spacing(dim, dim + arr.ndim))
        if i == "...":
            out.append("...")
        else:
            _one_dim(arr[i, ...], dim + 1, ends, out)
    out.append("]")


def format_tensor(arr, summarize=3):
    """The text tf.print writes for a tensor value (a NumPy array; object arrays hold bytes)."""
    arr = np.asarray(arr)
    if arr.ndim == 0:
        return element_text(arr[()], arr.dtype.kind, False)
    ends = arr.size if summarize is None or summarize < 0 else summarize
    out = []
    _one_dim(arr, 0, ends, out)
    return "".join(out)


def write(stream, text):
    """Write text to a named stream (STREAMS or file://path) and flush it, so output interleaves in order."""
    if stream.startswith("file://"):
        with open(stream[len("file://"):], "a") as f:
            f.write(text)
        return
    if stream == "stdout":
        target = sys.stdout
    else:
        target = sys.stderr
        sys.stdout.flush()  # text printed before, to stdout, comes first also when both go to one pipe
    target.write(text)
    target.flush()


def _print_infer(types, attrs):
    if len(types) > 1:
        raise ValueError(f"takes at most one tensor, got {len(types)}")
    return []


def _print_kernel(arrays, attrs):
    text = format_tensor(arrays[0], attrs["summarize"]) if arrays else ""
    write(attrs["stream"], attrs["prefix"] + text + attrs["suffix"])
    return []


# One op per printed tensor (an IRDL variadic group must be homogeneous, so a tf.print of several tensors
# becomes consecutive ops, each writing the text before its tensor). `site` numbers the op's run-time callback
# in its function (lowering/callbacks.py); unit eagerly.
define("print", ["*inputs"], _print_infer, _print_kernel,
       {"prefix": "str", "suffix": "str", "summarize": "i64", "stream": "str", "site": "i64"},
       results=0, tf_name="PrintV2", summary="write text and a formatted tensor to a stream", differentiable=False,
       tf_api="print")
