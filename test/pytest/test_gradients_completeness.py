"""The gradient registry against the op table: every op marked differentiable has a rule (registered against its
OpDef object), no other op has one, and a rule cannot be registered twice."""
import pytest

import tfn  # noqa: F401
from tfn.dialects.optable import OPS
from tfn.gradients.registry import gradient, rule_for, rules


def test_every_differentiable_op_has_a_gradient_rule():
    missing = sorted(n for n, op in OPS.items() if op.differentiable and rule_for(op) is None)
    assert not missing, f"ops marked differentiable without a gradient rule: {missing}"


def test_only_differentiable_table_ops_have_rules():
    table = {id(op): op for op in OPS.values()}
    for key, (op, _) in rules().items():
        assert table.get(key) is op, f"a rule is registered for {op.full_name}, which is not the table's op"
        assert op.differentiable, f"{op.full_name} has a rule but the table marks it non-differentiable"


def test_a_rule_is_registered_once():
    with pytest.raises(ValueError, match="a gradient of tfn.add is registered twice"):
        gradient(OPS["add"])(lambda op, g: (g, g))
