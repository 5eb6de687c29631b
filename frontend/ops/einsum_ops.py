"""`tfn.einsum` (also `tfn.linalg.einsum`): Einstein summation over any number of operands, folded left pair by pair
into tfn ops. Each pair becomes one batched tfn.matmul: labels only one operand has and no later operand or the
output needs are summed first, then both operands are transposed to [batch, free, contracted] and reshaped to
three-dim blocks; the product is reshaped back and transposed to the output's order. `...` stands for the leading
dims (broadcast right-aligned, as NumPy). A label repeated within one operand (a diagonal, `ii->i`) is not supported.
Dims may be dynamic; the gradient is the ops'."""
from tfn import dtypes
from tfn.core.api import export
from tfn.core.tensor import convert_to_tensor
from tfn.ops import array_ops, linalg_ops, reduction_ops, shape_ops
from tfn.ops.composite import user_error

_ELLIPSIS_LABELS = "0123456789!@#$%^&*()[]{}<>?~"  # stand-ins for the dims `...` covers (never user labels)


def _parse(equation, ranks):
    """([labels of each operand], output labels), `...` expanded, implicit output filled in."""
    eq = equation.replace(" ", "")
    inputs, arrow, output = eq.partition("->")
    specs = inputs.split(",")
    if len(specs) != len(ranks):
        raise user_error(ValueError(f"einsum: the equation {equation!r} has {len(specs)} operand(s), got "
                                    f"{len(ranks)} tensor(s)"))
    widest = 0
    out_specs = []
    for spec, rank in zip(specs, ranks):
        if spec.count("...") > 1 or not spec.replace("...", "").isalpha():
            raise user_error(ValueError(f"einsum: invalid operand {spec!r} in {equation!r}"))
        named = len(spec.replace("...", ""))
        if "..." in spec:
            k = rank - named
            if k < 0:
                raise user_error(ValueError(f"einsum: operand {spec!r} names more dims than its rank {rank}"))
            widest = max(widest, k)
            spec = spec.replace("...", _ELLIPSIS_LABELS[len(_ELLIPSIS_LABELS) - k:] if k else "")
        elif named != rank:
            raise user_error(ValueError(f"einsum: operand {spec!r} has {named} labels but its tensor has rank "
                                        f"{rank}"))
        if len(set(spec)) != len(spec):
            raise user_error(ValueError(f"einsum: a label repeated within one operand ({spec!r}: a diagonal) is "
                                        "not supported by tfn"))
        out_specs.append(spec)
    ell = _ELLIPSIS_LABELS[len(_ELLIPSIS_LABELS) - widest:] if widest else ""
    if arrow:
        if output.count("...") > 1 or not output.replace("...", "").isalpha() and output.replace("...", ""):
            raise user_error(ValueError(f"einsum: invalid output {output!r} in {equation!r}"))
        output = output.replace("...", ell)
    else:
        counts = {}
        for spec in out_specs:
            for c in spec:
                counts[c] = counts.get(c, 0) + 1
        output = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c.isalpha()))
    if len(set(output)) != len(output):
        raise user_error(ValueError(f"einsum: output {output!r} repeats a label"))
    missing = [c for c in output if not any(c in s for s in out_specs)]
    if missing:
        raise user_error(ValueError(f"einsum: output label {missing[0]!r} is in no operand of {equation!r}"))
    return out_specs, output


def _dims(x):
    """x's dims: Python ints where static, int32 scalar tensors (read at run time) where dynamic."""
    shape = None
    out = []
    for i, d in enumerate(x._shape):
        if d is None:
            shape = shape_ops.shape(x) if shape is None else shape
            out.append(shape[i])
        else:
            out.append(d)
    return out


def _product(dims):
    p = 1
    for d in dims:
        p = p * d
    return p


def _sum_out(x, spec, keep):
    """x with the labels not in `keep` summed out, and its remaining labels."""
    axes = [i for i, c in enumerate(spec) if c not in keep]
    if axes:
        x = reduction_ops.reduce_sum(x, axes)
    return x, "".join(c for c in spec if c in keep)


def _transpose(x, spec, order):
    if spec == order:
        return x
    return array_ops.transpose(x, [spec.index(c) for c in order])


def _pair(a, sa, b, sb, keep):
    """The contraction of a (labels sa) with b (labels sb), keeping the labels in `keep`: (result, its labels)."""
    a, sa = _sum_out(a, sa, keep + sb)
    b, sb = _sum_out(b, sb, keep + sa)
    batch = "".join(c for c in sa if c in sb and c in keep)
    contract = "".join(c for c in sa if c in sb and c not in keep)
    free_a = "".join(c for c in sa if c not in sb)
    free_b = "".join(c for c in sb if c not in sa)
    a = _transpose(a, sa, batch + free_a + contract)
    b = _transpose(b, sb, batch + contract + free_b)
    da, db = _dims(a), _dims(b)
    nb = len(batch)
    fa, fb = da[nb:nb + len(free_a)], db[nb + len(contract):]
    # (each group one dim already: no reshape, which on dynamic dims costs a gather)
    if len(free_a) != 1 or len(contract) != 1:
        a = array_ops.reshape(a, da[:nb] + [_product(fa), _product(da[nb + len(free_a):])])
    if len(free_b) != 1 or len(contract) != 1:
        b = array_ops.reshape(b, db[:nb] + [_product(db[nb:nb + len(contract)]), _product(fb)])
    c = linalg_ops.matmul(a, b)
    if len(free_a) != 1 or len(free_b) != 1:
        c = array_ops.reshape(c, _dims(c)[:nb] + fa + fb)
    return c, batch + free_a + free_b


@export("einsum", "linalg.einsum")
def einsum(equation, *inputs, **kwargs):
    """The Einstein summation `equation` ("ij,jk->ik", "bij,bjk->bik", "...ij,...jk->...ik", "i,i->", "ij->ji",
    "ij->j"; without "->" the output is the labels used once, in alphabetical order) over `inputs`."""
    kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise user_error(TypeError(f"einsum: unexpected keyword argument {next(iter(kwargs))!r}"))
    if not isinstance(equation, str):
        raise user_error(TypeError(f"einsum: the equation must be a string, got {equation!r}"))
    if not inputs:
        raise user_error(ValueError("einsum: no operands"))
    xs = [convert_to_tensor(x) for x in inputs]
    for x in xs[1:]:
        if x.dtype is not xs[0].dtype:
            raise user_error(TypeError(f"einsum: operands of different dtypes ({xs[0].dtype.name} and "
                                       f"{x.dtype.name})"))
    if xs[0].dtype.is_bool or xs[0].dtype.is_string or xs[0].dtype is dtypes.uint8:
        raise user_error(TypeError(f"einsum: dtype {xs[0].dtype.name} is not supported"))
    specs, output = _parse(equation, [x.ndim for x in xs])
    x, spec = xs[0], specs[0]
    for k in range(1, len(xs)):
        later = output + "".join(specs[k + 1:])
        x, spec = _pair(x, spec, xs[k], specs[k], later)
    x, spec = _sum_out(x, spec, output)
    out = _transpose(x, spec, output)
    return out if out is not xs[0] else array_ops.identity(out)
