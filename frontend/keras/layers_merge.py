"""Keras's merge layers, called on a list of tensors: Add, Subtract, Multiply, Average, Maximum, Minimum,
Concatenate and Dot, and their functional forms (`add([a, b])`, ...).

tfn.keras has no functional-API graph (`keras.Input` only gives a Sequential model its input shape), so these run on
concrete tensors: eagerly, in a subclassed model's `call`, and inside tfn.function / fit's compiled step."""
from tfn.keras._ops import tf
from tfn.keras.layers import Layer
from tfn.keras.layers_norm import canonical_axes


def _as_tensors(inputs, what):
    if not isinstance(inputs, (list, tuple)):
        raise ValueError(f"A merge layer should be called on a list of inputs. Received: inputs={inputs} (not a list "
                         f"of tensors)")
    if len(inputs) < 1:
        raise ValueError(f"A `{what}` layer should be called on a list of at least 1 input. Received 0 inputs.")
    out = []
    for x in inputs:
        x = tf.convert_to_tensor(x)
        if x.dtype.is_floating and x.dtype != tf.float32:
            x = tf.cast(x, tf.float32)
        out.append(x)
    return out


class _Merge(Layer):
    """An elementwise merge: inputs of lower rank get axes of size 1 inserted after the batch axis (as Keras), then
    `_merge` folds them (with broadcasting)."""

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or not input_shape or \
                not isinstance(input_shape[0], (list, tuple)):
            raise ValueError(f"A merge layer should be called on a list of inputs. Received: input_shape="
                             f"{input_shape} (not a list of shapes)")
        batches = {s[0] for s in input_shape if s} - {None}
        if len(batches) > 1:
            raise ValueError(f"Cannot merge tensors with different batch sizes. Received tensors with shapes "
                             f"{input_shape}")
        out = list(input_shape[0][1:])
        for shape in input_shape[1:]:
            out = _broadcast_shape(out, list(shape[1:]), input_shape)
        self.built = True

    def call(self, inputs):
        xs = _as_tensors(inputs, type(self).__name__)
        rank = max(len(x.shape) for x in xs)
        lifted = []
        for x in xs:
            while len(x.shape) < rank:
                x = tf.expand_dims(x, 1)
            lifted.append(x)
        return self._merge(lifted)


def _broadcast_shape(a, b, shapes):
    if len(a) < len(b):
        a, b = b, a
    out = list(a[:len(a) - len(b)])
    for i, j in zip(a[len(a) - len(b):], b):
        if i is None or j is None:
            out.append(None)
        elif i == 1 or j == 1 or i == j:
            out.append(max(i, j))
        else:
            raise ValueError(f"Inputs have incompatible shapes. Received shapes {[tuple(s) for s in shapes]}")
    return out


class Add(_Merge):
    """The elementwise sum of the inputs."""

    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out


class Subtract(_Merge):
    """inputs[0] - inputs[1] (exactly two inputs)."""

    def build(self, input_shape):
        super().build(input_shape)
        if len(input_shape) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received: input_shape="
                             f"{input_shape}")

    def _merge(self, xs):
        if len(xs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received {len(xs)} inputs")
        return xs[0] - xs[1]


class Multiply(_Merge):
    """The elementwise product of the inputs."""

    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out * x
        return out


class Average(Add):
    """The elementwise mean of the inputs."""

    def _merge(self, xs):
        return super()._merge(xs) / float(len(xs))


class Maximum(_Merge):
    """The elementwise maximum of the inputs."""

    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = tf.maximum(out, x)
        return out


class Minimum(_Merge):
    """The elementwise minimum of the inputs."""

    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = tf.minimum(out, x)
        return out


class Concatenate(Layer):
    """The inputs joined along `axis` (their other dimensions must match)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or not input_shape or \
                not isinstance(input_shape[0], (list, tuple)):
            raise ValueError(f"A `Concatenate` layer should be called on a list of at least 1 input. Received: "
                             f"input_shape={input_shape}")
        ranks = {len(s) for s in input_shape}
        ok = len(ranks) == 1
        if ok:
            rank = ranks.pop()
            axis = canonical_axes(self.axis, rank)[0]
            for d in range(rank):
                if d != axis and len({s[d] for s in input_shape} - {None}) > 1:
                    ok = False
        if not ok:
            raise ValueError(f"A `Concatenate` layer requires inputs with matching shapes except for the "
                             f"concatenation axis. Received: input_shape={[tuple(s) for s in input_shape]}")
        self.built = True

    def call(self, inputs):
        return tf.concat(_as_tensors(inputs, "Concatenate"), axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _l2_normalize(x, axis):
    return x * tf.math.rsqrt(tf.maximum(tf.reduce_sum(tf.square(x), axis=axis, keepdims=True), 1e-24))


_LETTERS = "bcdefghijklmnopqrstuvwxyz"


class Dot(Layer):
    """The dot product of two batches of samples along `axes` (one axis for both, or (axis of x, axis of y)); the
    result has x's remaining axes then y's (a pair of vectors gives shape (batch, 1)). `normalize=True` L2-normalises
    both along those axes first: the cosine similarity."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError(f"Invalid type for argument `axes`: it should be a list or an int. Received: "
                                f"axes={axes}")
            if len(axes) != 2:
                raise ValueError(f"Invalid format for argument `axes`: it should contain two elements. Received: "
                                 f"axes={axes}")
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise ValueError(f"Invalid format for argument `axes`: list elements should be integers. Received: "
                                 f"axes={axes}")
        self.axes, self.normalize = axes, normalize

    def _pair(self, rank1, rank2):
        axes = (self.axes, self.axes) if isinstance(self.axes, int) else tuple(self.axes)
        out = (canonical_axes(axes[0], rank1, "axes")[0], canonical_axes(axes[1], rank2, "axes")[0])
        if 0 in out:
            raise ValueError(f"Cannot perform batch_dot over axis 0 (the batch axis). Received: axes={self.axes}")
        return out

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) != 2 or \
                not isinstance(input_shape[0], (list, tuple)):
            raise ValueError(f"A `Dot` layer should be called on a list of 2 inputs. Received: input_shape="
                             f"{input_shape}")
        s1, s2 = input_shape
        a1, a2 = self._pair(len(s1), len(s2))
        if s1[a1] != s2[a2]:
            raise ValueError(f"Incompatible input shapes: axis values {s1[a1]} (at axis {a1}) != {s2[a2]} (at axis "
                             f"{a2}). Full input shapes: {tuple(s1)}, {tuple(s2)}")
        if len(s1) + len(s2) - 3 > len(_LETTERS):
            raise ValueError(f"Dot supports inputs of total rank up to {len(_LETTERS) + 3}")
        self.built = True

    def call(self, inputs):
        xs = _as_tensors(inputs, "Dot")
        if len(xs) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. Received {len(xs)} inputs")
        x, y = xs
        a1, a2 = self._pair(len(x.shape), len(y.shape))
        if self.normalize:
            x, y = _l2_normalize(x, a1), _l2_normalize(y, a2)
        letters = iter(_LETTERS)
        sx = ["a"] + [next(letters) for _ in range(1, len(x.shape))]
        sy = ["a"] + [next(letters) for _ in range(1, len(y.shape))]
        sy[a2] = sx[a1]
        out = ["a"] + [c for i, c in enumerate(sx) if i not in (0, a1)] + [c for i, c in enumerate(sy)
                                                                          if i not in (0, a2)]
        result = tf.einsum(f"{''.join(sx)},{''.join(sy)}->{''.join(out)}", x, y)
        return tf.expand_dims(result, -1) if len(out) == 1 else result

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def add(inputs, **kwargs):
    """Add()(inputs)."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """Subtract()(inputs)."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """Multiply()(inputs)."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """Average()(inputs)."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """Maximum()(inputs)."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """Minimum()(inputs)."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """Concatenate(axis)(inputs)."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, normalize=False, **kwargs):
    """Dot(axes, normalize)(inputs)."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


FUNCTIONAL_FORMS = ("add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot")
