"""Nested structures of lists, tuples, namedtuples and dicts: flatten and pack (`tfn.nest`)."""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(structure):
    """The leaves in order (dicts by sorted key, as TF)."""
    out = []
    _flatten(structure, out)
    return out


def _flatten(s, out):
    if isinstance(s, dict):
        for k in sorted(s, key=_key_order):
            _flatten(s[k], out)
    elif isinstance(s, (list, tuple)):
        for x in s:
            _flatten(x, out)
    else:
        out.append(s)


def _key_order(k):
    return (type(k).__name__, k) if not isinstance(k, (int, float)) else ("", k)


def pack_sequence_as(structure, flat):
    """Rebuild `structure` with leaves taken in order from `flat`."""
    it = iter(flat)
    result = _pack(structure, it)
    return result


def _pack(s, it):
    if isinstance(s, dict):
        packed = {k: _pack(s[k], it) for k in sorted(s, key=_key_order)}
        return type(s)((k, packed[k]) for k in s) if type(s) is not dict else {k: packed[k] for k in s}
    if _is_namedtuple(s):
        return type(s)(*[_pack(x, it) for x in s])
    if isinstance(s, (list, tuple)):
        return type(s)(_pack(x, it) for x in s)
    return next(it)


def map_structure(fn, *structures):
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])


def structure_key(s):
    """A hashable description of the nesting (not the leaves)."""
    if isinstance(s, dict):
        return ("dict", tuple((k, structure_key(s[k])) for k in sorted(s, key=_key_order)))
    if isinstance(s, (list, tuple)):
        return (type(s).__name__, tuple(structure_key(x) for x in s))
    return "."
