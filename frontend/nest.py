"""Nested structures of lists, tuples, namedtuples and dicts (`tfn.nest`), with TensorFlow's rules and errors.

A structure is nested when it is a list, tuple (namedtuples included) or mapping; anything else, None
included, is a leaf ("atom"). Mappings are visited in sorted key order, so `{"b": 1, "a": 2}` flattens
to `[2, 1]`, while packing keeps the original mapping's key order.
"""
import collections
import collections.abc

__all__ = ["assert_same_structure", "flatten", "flatten_with_joined_string_paths", "flatten_with_tuple_paths",
           "is_nested", "map_structure", "map_structure_with_paths", "pack_sequence_as"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


_LEAF_TYPES = set()  # types seen not to be nested: spares leaves the Mapping ABC check on every call


def is_nested(seq):
    """Whether `seq` is a list, tuple, namedtuple or mapping (strings, tensors and None are not)."""
    t = type(seq)
    if t in _LEAF_TYPES:
        return False
    if isinstance(seq, (list, tuple, dict)) or isinstance(seq, collections.abc.Mapping):
        return True
    _LEAF_TYPES.add(t)
    return False


def sorted_keys(mapping):
    """The keys of a mapping in nest order (sorted); TypeError when they do not sort."""
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys.") from None


def _key_order(k):
    """A sort key that orders any keys (types first): for cache keys, where any fixed order will do."""
    return (type(k).__name__, k) if not isinstance(k, (int, float)) else ("", k)


def _children(s):
    """The (path component, child) pairs of a nested structure, in flatten order."""
    if isinstance(s, collections.abc.Mapping):
        return [(k, s[k]) for k in sorted_keys(s)]
    return list(enumerate(s))


def flatten(structure, expand_composites=False):
    """The leaves of `structure` in order; a leaf (None included) flattens to `[leaf]`."""
    out = []
    _flatten(structure, out)
    return out


def _flatten(s, out):
    if isinstance(s, (list, tuple)):
        for x in s:
            _flatten(x, out)
    elif not is_nested(s):
        out.append(s)
    else:
        for k in sorted_keys(s):
            _flatten(s[k], out)


def flatten_with_tuple_paths(structure, expand_composites=False):
    """`[(path, leaf)]` where path is the tuple of indices and keys leading to the leaf."""
    out = []
    _flatten_paths(structure, (), out)
    return out


flatten_with_paths = flatten_with_tuple_paths


def _flatten_paths(s, path, out):
    if not is_nested(s):
        out.append((path, s))
        return
    for k, child in _children(s):
        _flatten_paths(child, path + (k,), out)


def flatten_with_joined_string_paths(structure, separator="/", expand_composites=False):
    """`[(path, leaf)]` with each path joined into a string such as `"a/0/b"`."""
    return [(separator.join(map(str, path)), leaf) for path, leaf in flatten_with_tuple_paths(structure)]


def mapping_like(cls, items, default_factory=None):
    """A mapping of class `cls` holding the (key, value) pairs `items` in that order."""
    if issubclass(cls, collections.defaultdict):
        return cls(default_factory, items)
    if cls is dict:
        return dict(items)
    return cls(items)


def sequence_like(instance, args):
    """A structure of the same kind as `instance` holding `args` (in flatten order for mappings)."""
    if isinstance(instance, collections.abc.Mapping):
        by_key = dict(zip(sorted_keys(instance), args))
        return mapping_like(type(instance), [(k, by_key[k]) for k in instance],
                            getattr(instance, "default_factory", None))
    if _is_namedtuple(instance):
        return type(instance)(*args)
    return type(instance)(args)


def _truncate(value, length):
    text = str(value)
    return text[:length] + (text[length:] and "...")


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """`structure` rebuilt with its leaves taken in order from the flat list `flat_sequence`."""
    if not is_nested(flat_sequence):
        raise TypeError(f"Attempted to pack value:\n  {_truncate(flat_sequence, 100)}\ninto a structure, but "
                        f"found incompatible type `{type(flat_sequence)}` instead.")
    if not is_nested(structure):
        if len(flat_sequence) != 1:
            raise ValueError(
                f"The target structure is of type `{type(structure)}`\n  {_truncate(structure, 100)}\nHowever the "
                f"input is a sequence ({type(flat_sequence)}) of length {len(flat_sequence)}.\n  "
                f"{_truncate(flat_sequence, 100)}\nnest cannot guarantee that it is safe to map one to the other.")
        return flat_sequence[0]
    it = iter(flat_sequence)
    try:
        packed = _pack(structure, it)
    except StopIteration:
        packed = it = None
    if it is None or next(it, it) is not it:
        raise ValueError(f"Could not pack sequence. Structure had {len(flatten(structure))} atoms, but "
                         f"flat_sequence had {len(flat_sequence)} items.  Structure: {structure}, "
                         f"flat_sequence: {flat_sequence}.")
    return packed


def _pack(s, it):
    t = type(s)
    if t is list:
        return [_pack(x, it) for x in s]
    if t is tuple:
        return tuple([_pack(x, it) for x in s])
    if t is dict:
        packed = {k: _pack(s[k], it) for k in sorted_keys(s)}
        return {k: packed[k] for k in s}
    if not is_nested(s):
        return next(it)
    return sequence_like(s, [_pack(child, it) for _, child in _children(s)])


class _Dot:
    def __repr__(self):
        return "."


_DOT = _Dot()


def _describe(x):
    return f"type={type(x).__name__} str={x}"


def _same_type(a, b):
    if type(a) is type(b):
        return True
    return (_is_namedtuple(a) and _is_namedtuple(b) and type(a).__name__ == type(b).__name__
            and type(a)._fields == type(b)._fields)


def _mismatch(a, b, check_types):
    """(error class, message) of the first difference between two structures, or None."""
    if is_nested(a) != is_nested(b):
        seq, atom = (a, b) if is_nested(a) else (b, a)
        return ValueError, f'Substructure "{_describe(seq)}" is a sequence, while substructure "{_describe(atom)}" ' \
                           "is not"
    if not is_nested(a):
        return None
    if check_types and not _same_type(a, b):
        return TypeError, (f"The two namedtuples don't have the same sequence type. First structure "
                           f"{_describe(a)} has type {type(a).__name__}, while second structure {_describe(b)} has "
                           f"type {type(b).__name__}")
    if isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping) and set(a) != set(b):
        return ValueError, (f"The two dictionaries don't have the same set of keys. First structure has keys "
                            f"{_describe(list(a))}, while second structure has keys {_describe(list(b))}")
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        return ValueError, (f"The two structures don't have the same number of elements. First structure: "
                            f"{_describe(a)}, second structure: {_describe(b)}.")
    for (_, x), (_, y) in zip(ca, cb):
        found = _mismatch(x, y, check_types)
        if found:
            return found
    return None


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raise ValueError (TypeError for differing sequence types) unless the two structures nest alike."""
    found = _mismatch(nest1, nest2, check_types)
    if found is None:
        return
    cls, detail = found
    raise cls(f"The two structures don't have the same nested structure.\n\nFirst structure: {_describe(nest1)}\n\n"
              f"Second structure: {_describe(nest2)}\n\nMore specifically: {detail}\n"
              f"Entire first structure:\n{_dots(nest1)}\nEntire second structure:\n{_dots(nest2)}")


def _dots(s):
    return str(_pack(s, iter([_DOT] * len(flatten(s))))) if is_nested(s) else "."


def map_structure(func, *structure, **kwargs):
    """`func` applied to the leaves of the structures (which must nest alike), packed like the first."""
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError("Only valid keyword arguments are `check_types` and `expand_composites`, not: `"
                         + "`, `".join(kwargs) + "`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*xs) for xs in zip(*flats)])


def map_structure_with_paths(func, *structure, **kwargs):
    """`func(path, *leaves)` over the structures, with each leaf's path joined by '/'."""
    check_types = kwargs.pop("check_types", True)
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    paths = [p for p, _ in flatten_with_joined_string_paths(structure[0])]
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(p, *xs) for p, *xs in zip(paths, *flats)])


def structure_key(s):
    """A hashable description of the nesting (not the leaves)."""
    if isinstance(s, collections.abc.Mapping):
        return ("dict", tuple((k, structure_key(s[k])) for k in sorted(s, key=_key_order)))
    if isinstance(s, (list, tuple)):
        return (type(s).__name__, tuple(structure_key(x) for x in s))
    return "."
