"""Dense string attributes (`dense<["a", "b"]> : tensor<2x!tfn.string>`): encoding bytes and reading them back."""
import re

import numpy as np
from mlir import ir

# (patterns compiled on first use, by re's own cache: `import tfn` compiles none)
_LITERAL = r'"((?:[^"\\]|\\.)*)"'
_ESCAPE = rb"\\([0-9A-Fa-f]{2}|\\)"


def _escape(b):
    """MLIR's string literal escaping: printable ASCII as is, `\\` doubled, every other byte as `\\XX`."""
    return "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else "\\\\" if c == 92 else f"\\{c:02X}"
                   for c in b)


def _unescape(text):
    return re.sub(_ESCAPE, lambda m: b"\\" if m.group(1) == b"\\" else bytes([int(m.group(1), 16)]), text.encode())


def encode(arr, tt):
    """The dense attribute of an object array of bytes with tfn type `tt`."""
    return ir.Attribute.parse(f"dense<{_literal(np.asarray(arr, dtype=object))}> : {tt.mlir_str()}")


def _literal(arr):
    """Nested `[...]` lists of escaped string literals, one level per dimension."""
    if arr.ndim == 0:
        v = arr[()]
        return '"' + _escape(v if isinstance(v, bytes) else str(v).encode()) + '"'
    return "[" + ", ".join(_literal(arr[i, ...]) for i in range(arr.shape[0])) + "]"


def decode(attr, tt):
    """The object array of bytes a dense string attribute holds (a splat fills the shape)."""
    text = str(attr)
    values = [_unescape(m) for m in re.findall(_LITERAL, text[:text.rindex(">")])]
    out = np.empty(len(values), dtype=object)
    out[:] = values
    size = int(np.prod(tt.shape, dtype=np.int64))
    return (np.full(size, values[0], dtype=object) if len(values) == 1 else out).reshape(tt.shape)
