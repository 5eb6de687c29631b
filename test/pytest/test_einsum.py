"""tfn.einsum against numpy.einsum: TF's docstring specs, eager and compiled, dynamic dims, broadcast `...`,
gradients by finite differences, errors."""
import numpy as np
import pytest
from composite_cases import check_gradients, check_values

import tfn

R = np.random.default_rng(7)
A, B3 = R.normal(size=(2, 3, 4)), R.normal(size=(2, 4, 5))
M, N, V = R.normal(size=(3, 4)), R.normal(size=(4, 5)), R.normal(size=4)
SPECS = [("ij,jk->ik", M, N), ("i,i->", V, V), ("i,j->ij", V, V), ("ij->ji", M), ("bij,bjk->bik", A, B3),
         ("...ij,...jk->...ik", A, B3), ("...ij,...jk->...ik", A[:1], B3), ("...ij,jk->...ik", A, N), ("ij->", M),
         ("ij->j", M), ("ij,jk", M, N), ("bij,bkj->bik", A, A), ("ij,jk,kl->il", M, N, N.T), ("bij,jk->bk", A, N),
         ("ij,kl->ijkl", M, M), ("ba,b->a", M, M[:, 0]), ("bij->bji", A), ("ij,ij->i", M, M)]


@pytest.mark.parametrize("k", range(len(SPECS)), ids=[s[0] for s in SPECS])
def test_values_eager_and_compiled(k):
    eq, *arrays = SPECS[k]
    check_values(lambda *t: tfn.einsum(eq, *t), lambda *a: np.einsum(eq, *a), arrays)


@pytest.mark.parametrize("k", [0, 4, 6, 12, 13, 17], ids=[SPECS[k][0] for k in [0, 4, 6, 12, 13, 17]])
def test_gradients_match_finite_differences(k):
    eq, *arrays = SPECS[k]
    check_gradients(lambda *t: tfn.einsum(eq, *t), lambda *a: np.einsum(eq, *a), arrays)


def test_dynamic_dims():
    @tfn.function(input_signature=[tfn.TensorSpec([None, None, 4], tfn.float64),
                                   tfn.TensorSpec([None, 4, None], tfn.float64)])
    def f(a, b):
        return tfn.einsum("bij,bjk->bik", a, b), tfn.einsum("bij,bjk->ki", a, b)
    first, second = f(tfn.constant(A), tfn.constant(B3))
    np.testing.assert_allclose(first.numpy(), np.einsum("bij,bjk->bik", A, B3), rtol=1e-12)
    np.testing.assert_allclose(second.numpy(), np.einsum("bij,bjk->ki", A, B3), rtol=1e-12)
    assert tfn.linalg.einsum is tfn.einsum


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="has 2 operand"):
        tfn.einsum("ij,jk->ik", tfn.ones([2, 2]))
    with pytest.raises(ValueError, match="has 2 labels but its tensor has rank 3"):
        tfn.einsum("ij->ji", tfn.ones([2, 2, 2]))
    with pytest.raises(ValueError, match="a diagonal"):
        tfn.einsum("ii->i", tfn.ones([2, 2]))
    with pytest.raises(ValueError, match="output label 'k' is in no operand"):
        tfn.einsum("ij->k", tfn.ones([2, 2]))
    with pytest.raises(TypeError, match="different dtypes"):
        tfn.einsum("i,i->", tfn.ones([2]), tfn.constant([1, 2]))
