# RUN: %PYTHON %s | FileCheck %s
# Every traced op carries the user's file and line; lowering keeps them on the ops it creates.
# RUN: %PYTHON %s | tfn-opt --tfn-lower-to-linalg --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LINALG
import numpy as np

import tfn


@tfn.function
def f(x, y):
    # CHECK: "tfn.add"(%arg0, %arg1){{.*}} loc("{{.*}}locations.py":[[# @LINE + 3]]:
    # LINALG: linalg.generic
    # LINALG: arith.addf {{.*}} loc("{{.*}}locations.py":[[# @LINE + 1]]:
    z = x + y
    # CHECK: "tfn.multiply"{{.*}} loc("{{.*}}locations.py":[[# @LINE + 4]]:
    # CHECK: "tfn.reduce_sum"{{.*}} loc("{{.*}}locations.py":[[# @LINE + 3]]:
    # LINALG: linalg.reduce
    # LINALG: } loc("{{.*}}locations.py":[[# @LINE + 1]]:
    return tfn.reduce_sum(z * 2.0, axis=1)


x = tfn.constant(np.ones((3, 4), np.float32))
print(f.get_concrete_function(x, x).graph.module.operation.get_asm(enable_debug_info=True, use_local_scope=True))
