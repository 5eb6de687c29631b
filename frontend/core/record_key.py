"""The key of a trace recorded without MLIR (core/graph.py): a digest of everything its IR is built from.

Two recorded traces with one key build the same module, byte for byte: the function's symbol, its inputs' types,
each op in order (its name, operands, attribute values as their codec encodes them, result types and the user's
`(file, line, col)`) and the results returned. The compile driver finds the artifact of a recorded trace by this
key (runtime/driver.py), so a function the artifact cache holds runs without building its IR."""
import functools
import sys

import numpy as np

from tfn.dialects import attrs as attr_codec
from tfn.runtime.digest import sha256


def key(graph):
    """The hex digest naming the IR of recorded `graph` (finished), or None for a value it cannot name."""
    refs = {}
    texts = {}  # id(TensorType or position) -> its text (a trace repeats a few of each)
    parts = [_builder_digest(), graph.symbol]
    for i, t in enumerate(graph.inputs):
        refs[id(t)] = f"%a{i}"
        parts.append(_text(texts, t._type))
    for n, (opdef, operands, attr_values, result_types, position, _, results) in enumerate(graph._recorded):
        parts.append(opdef.full_name)
        for o in operands:
            r = refs.get(id(o))
            if r is None:
                return None
            parts.append(r)
        parts.append("->")
        for t in result_types:
            parts.append(_text(texts, t))
        p = texts.get(id(position))
        if p is None:
            p = texts[id(position)] = repr(position)
        parts.append(p)
        if opdef.attrs:
            for name, kind in opdef.attrs.items():
                v = attr_values.get(name)
                text = attr_codec.key_text(kind, v) if v is None or kind != "dense" else _dense_text(*v)
                if text is None:
                    return None
                parts.append(f"{name}={text}")
        if len(results) == 1:
            refs[id(results[0])] = f"%{n}"
        else:
            for i, t in enumerate(results):
                refs[id(t)] = f"%{n}.{i}"
        parts.append(";")
    parts.append("return")
    for o in graph._outputs:
        r = refs.get(id(o))
        if r is None:
            return None
        parts.append(r)
    return sha256("\0".join(parts).encode()).hexdigest()


@functools.lru_cache(maxsize=None)
def _builder_digest():
    """A digest of the code that builds a record into IR (core/graph.py), of this file and of the attribute
    values' texts (dialects/attrs.py): a change there is a new key (the toolchain's part of the artifact key covers
    the dialect and the passes, not the frontend)."""
    h = sha256()
    for name in ("tfn.core.graph", "tfn.dialects.attrs", __name__):
        with open(sys.modules[name].__file__, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def _text(texts, ttype):
    t = texts.get(id(ttype))
    if t is None:
        t = texts[id(ttype)] = ttype.mlir_str()
    return t


def _dense_text(arr, tt):
    """A constant's value (array, TensorType) as text: its type, shape and the digest of its bytes; None for an
    array that has no stable bytes."""
    if arr.dtype.kind in "OUS":  # strings: their values (an object array's bytes are pointers)
        data = repr(arr.tolist()).encode()
    elif arr.dtype.kind in "biufc":
        data = np.ascontiguousarray(arr).tobytes()
    else:
        return None
    digest = data.hex() if len(data) <= 64 else sha256(data).hexdigest()
    return f"{tt.mlir_str()}:{arr.dtype.str}:{arr.shape}:{digest}"
