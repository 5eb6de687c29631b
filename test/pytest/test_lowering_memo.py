"""The lowering remembers the attributes and types it builds again and again (passes/lowering/common.py `shared`)
in the process's shared context only: lowered there and in a context of its own, a function gives the same IR."""
import numpy as np
from mlir import ir

import tfn
from tfn.dialects import context as dialect_context
from tfn.passes import registry
from tfn.passes.lowering import common


def _program(x, y, u):
    a = tfn.tanh(x * 0.5 + y) - x / 3.0  # broadcasting (2x3 with 3), splat constants
    b = tfn.cast(a > 0.1, tfn.float32) + tfn.where(a < 0.0, a, -a)  # bool results stored as i8 and read back
    c = tfn.cast((u + u) // 3, tfn.float32)  # unsigned: signless storage
    return tfn.reduce_sum(a * b, axis=1) + tfn.reduce_mean(c)


def test_shared_and_private_contexts_lower_alike():
    args = (tfn.constant(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)),
            tfn.constant(np.array([0.1, -0.2, 0.3], np.float32)), tfn.constant(np.arange(3, dtype=np.uint8)))
    f = tfn.function(_program)
    traced = f.experimental_get_compiler_ir(*args)(stage="tfn")
    texts = []
    for ctx in (dialect_context.shared_context(), dialect_context.new_context()):
        for _ in range(2):  # the second time in the shared context, the remembered attributes are used
            with ctx:
                module = ir.Module.parse(traced)
                registry.run("tfn-lower-to-linalg", module.operation)
                texts.append(str(module))
    assert "linalg.generic" in texts[0]
    assert texts[1] == texts[0] and texts[2] == texts[0] and texts[3] == texts[0]
    assert common._SHARED  # the shared context's runs remembered what they built


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(common, "_SHARED", {})
    monkeypatch.setattr(common, "_SHARED_KEPT", 8)
    with dialect_context.shared_context():
        for i in range(20):
            assert common.shared(("test", i), lambda i=i: i) == i
    assert len(common._SHARED) <= 8
