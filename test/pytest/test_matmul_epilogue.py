"""A matmul's elementwise consumer computed in its register tiles (tfn-pack-matmul's epilogue): bias adds, ReLU and
its backward mask, an SGD update of weights by their gradient, with transposed operands, split over the workers or
not, on sizes that fit the tiles (fused) and sizes that do not (the consumer stays a pass of its own); results equal
NumPy's, on both targets."""
import numpy as np
import pytest
from opcheck import assert_close

import tfn
from tfn.passes import target

RNG = np.random.default_rng(14)

# (A shape, B shape, transpose_a, transpose_b): products as a training step has them (the first two split over the
# workers; results of at least min-epilogue-elements, 2^16, get epilogues: the 2nd and 3rd), and sizes that no tile
# divides (M = 100, N = 70, K = 33) or with a row tail (M = 130)
CASES = [((128, 784), (784, 256), False, False), ((128, 784), (128, 256), True, False),
         ((128, 256), (128, 256), True, False),
         ((128, 256), (256, 256), False, True), ((256, 128), (256, 256), True, False),
         ((128, 32), (32, 64), False, False), ((100, 33), (33, 70), False, False),
         ((130, 48), (48, 32), False, False), ((64, 48), (64, 17), True, False)]


def _product(a, b, ta, tb):
    return np.matmul(a.T if ta else a, b.T if tb else b)


def _arrays(case):
    sa, sb, ta, tb = case
    a, b = RNG.random(sa, dtype=np.float32) - 0.5, RNG.random(sb, dtype=np.float32) - 0.5
    m, n = _product(a, b, ta, tb).shape
    return a, b, RNG.random(n, dtype=np.float32) - 0.5, RNG.random((m, n), dtype=np.float32) - 0.5


def _level(monkeypatch, level):
    try:
        target.target_for(level)
    except ValueError:
        pytest.skip(f"this machine cannot run {level} code")
    monkeypatch.setenv("TFN_TARGET_FEATURES", level)


@pytest.mark.parametrize("level", ["native", "avx2"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0] + c[1])) + f"-{c[2]:d}{c[3]:d}")
def test_epilogues_equal_numpy(monkeypatch, level, case):
    """Bias add + ReLU, the masked backward product, the SGD update and a consumer with several inputs."""
    _level(monkeypatch, level)
    a, b, bias, other = _arrays(case)
    _, _, ta, tb = case

    @tfn.function
    def f(a, b, bias, other):
        mm = lambda: tfn.matmul(a, b, transpose_a=ta, transpose_b=tb)  # noqa: E731
        return (tfn.nn.relu(mm() + bias),                      # bias add (+ ReLU, when fused with it upstream)
                tfn.where(other >= 0.0, mm(), 0.0),            # a ReLU's backward mask
                other - 0.01 * mm(),                           # an SGD update
                tfn.exp(mm() * other) + bias * 2.0)            # several inputs, a row and a full one
    want = _product(a, b, ta, tb)
    relu, masked, sgd, several = [r.numpy() for r in f(a, b, bias, other)]
    assert_close(relu, np.maximum(want + bias, 0))
    assert_close(masked, np.where(other >= 0, want, 0))
    assert_close(sgd, other - np.float32(0.01) * want)
    assert_close(several, np.exp(want * other) + bias * 2)


@pytest.mark.parametrize("level", ["native", "avx2"])
def test_product_stored_only_when_needed(monkeypatch, level):
    """Fused, the bufferized IR of matmul + bias holds no separate add (the bias is added to the accumulators);
    with the product also returned, the add stays a pass of its own and both results are right."""
    _level(monkeypatch, level)
    a, b, bias, _ = _arrays(CASES[1])  # x^T dh: 784 x 256, split over the workers
    alone = tfn.function(lambda a, b, c: tfn.matmul(a, b, transpose_a=True) + c)
    both = tfn.function(lambda a, b, c: (tfn.matmul(a, b, transpose_a=True) + c, tfn.matmul(a, b, transpose_a=True)))
    want = a.T @ b
    assert_close(alone(a, b, bias).numpy(), want + bias)
    got_sum, got_product = both(a, b, bias)
    assert_close(got_sum.numpy(), want + bias)
    assert_close(got_product.numpy(), want)
    fused = alone.get_concrete_function(a, b, bias).ir("bufferized")
    kept = both.get_concrete_function(a, b, bias).ir("bufferized")
    assert "linalg.generic" not in fused and "arith.addf" in fused   # the add is on the vectors
    assert "linalg.generic" in kept                                  # the add is a generic of its own
