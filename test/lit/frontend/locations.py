# RUN: %PYTHON %s | FileCheck %s
# Every traced op carries the user's file, line and column (where the expression that made it starts);
# lowering keeps them on the ops it creates.
# RUN: %PYTHON %s | tfn-opt --tfn-lower-to-linalg --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LINALG
import numpy as np

import tfn


@tfn.function
def f(x, y):
    # CHECK: "tfn.add"(%arg0, %arg1){{.*}} loc("{{.*}}locations.py":[[# @LINE + 3]]:9)
    # LINALG: linalg.generic
    # LINALG: arith.addf {{.*}} loc("{{.*}}locations.py":[[# @LINE + 1]]:9)
    z = x + y
    # CHECK: "tfn.multiply"{{.*}} loc("{{.*}}locations.py":[[# @LINE + 4]]:27)
    # CHECK: "tfn.reduce_sum"{{.*}} loc("{{.*}}locations.py":[[# @LINE + 3]]:12)
    # LINALG: linalg.reduce
    # LINALG: } loc("{{.*}}locations.py":[[# @LINE + 1]]:12)
    return tfn.reduce_sum(z * 2.0, axis=1)


@tfn.function
def g(x):
    # AutoGraph's control flow carries the column of its statement, the ops inside it their own.
    # CHECK-LABEL: func.func @__inference_g
    # CHECK: "tfn.greater"{{.*}} loc("{{.*}}locations.py":[[# @LINE + 4]]:8)
    # CHECK: "tfn.negative"{{.*}} loc("{{.*}}locations.py":[[# @LINE + 4]]:13)
    # CHECK: "tfn.exp"{{.*}} loc("{{.*}}locations.py":[[# @LINE + 5]]:13)
    # CHECK: {{^}}    } loc("{{.*}}locations.py":[[# @LINE + 1]]:5)
    if tfn.reduce_sum(x) > 0.0:
        y = -x
    else:
        y = tfn.exp(x)
    return y


x = tfn.constant(np.ones((3, 4), np.float32))
print(f.get_concrete_function(x, x).graph.module.operation.get_asm(enable_debug_info=True, use_local_scope=True))
print(g.get_concrete_function(x).graph.module.operation.get_asm(enable_debug_info=True, use_local_scope=True))
