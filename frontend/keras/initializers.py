"""Keras initializers: NumPy draws from the generator `tfn.random.set_seed` seeds (so models repeat run to run)."""
import numpy as np

from tfn import random as tfn_random
from tfn.keras import config


def _fans(shape):
    """(fan_in, fan_out) as Keras computes them (dense: rows/cols; conv: receptive field times channels)."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    field = int(np.prod(shape[:-2]))
    return shape[-2] * field, shape[-1] * field


class Initializer:
    """Base class: `init(shape, dtype)` gives a NumPy array of that shape."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        config.record_init(cls)  # get_config returns the arguments an object was made with

    def get_config(self):
        """The arguments this was made with, by name (frontend/keras/config.py)."""
        return config.object_config(self)

    def __call__(self, shape, dtype="float32"):
        return np.asarray(self.sample(tuple(int(d) for d in shape)), dtype=str(np.dtype(_np_dtype(dtype))))

    def sample(self, shape):
        raise NotImplementedError(f"{type(self).__name__} does not define sample(shape)")


def _np_dtype(dtype):
    return getattr(dtype, "np", dtype)


class Zeros(Initializer):
    def sample(self, shape):
        return np.zeros(shape)


class Ones(Initializer):
    def sample(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def sample(self, shape):
        return np.full(shape, self.value)


class RandomUniform(Initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def sample(self, shape):
        return _rng(self.seed).uniform(self.minval, self.maxval, shape)


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def sample(self, shape):
        return _rng(self.seed).normal(self.mean, self.stddev, shape)


class VarianceScaling(Initializer):
    """Keras's VarianceScaling: scale / fan, truncated-normal (stddev corrected by .8796) or uniform."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        scale = self.scale / max(1.0, fan)
        rng = _rng(self.seed)
        if self.distribution == "uniform":
            limit = np.sqrt(3.0 * scale)
            return rng.uniform(-limit, limit, shape)
        if self.distribution == "untruncated_normal":
            return rng.normal(0.0, np.sqrt(scale), shape)
        std = np.sqrt(scale) / 0.87962566103423978
        z = rng.normal(0.0, 1.0, shape)
        bad = np.abs(z) > 2
        while bad.any():
            z[bad] = rng.normal(0.0, 1.0, int(bad.sum()))
            bad = np.abs(z) > 2
        return z * std


class GlorotUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)


class HeNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)


class HeUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)


class LecunNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)


class Orthogonal(Initializer):
    """A random orthogonal matrix (Keras's: the Q of a normal draw's QR, signs fixed by R's diagonal), times `gain`;
    a kernel of rank > 2 is flattened to (prod(shape[:-1]), shape[-1])."""

    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def sample(self, shape):
        if len(shape) < 2:
            raise ValueError(f"The tensor to initialize must be at least two-dimensional. Received: shape={shape} of "
                             f"rank {len(shape)}.")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        q, r = np.linalg.qr(_rng(self.seed).normal(0.0, 1.0, (max(rows, cols), min(rows, cols))))
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self.gain * q.reshape(shape)


def _rng(seed):
    return tfn_random.numpy_generator() if seed is None else np.random.default_rng(seed)


_BY_NAME = {"zeros": Zeros, "ones": Ones, "constant": Constant, "random_uniform": RandomUniform,
            "random_normal": RandomNormal, "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
            "he_normal": HeNormal, "he_uniform": HeUniform, "lecun_normal": LecunNormal,
            "variance_scaling": VarianceScaling, "orthogonal": Orthogonal}


def get(identifier):
    """An initializer from a name ('glorot_uniform'), an Initializer, or a callable(shape, dtype)."""
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
        return _BY_NAME[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
