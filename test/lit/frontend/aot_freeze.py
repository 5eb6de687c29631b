# RUN: %PYTHON %s | FileCheck %s
# Ahead-of-time compilation freezes what a trace captured: each captured variable's (or large tensor's) input is
# replaced by a tfn.constant holding its value at compile time, and the function takes only the user's arguments.
# The traced module itself is left unchanged (the function keeps running with the variables' current values).
import numpy as np

import tfn
from tfn.runtime import aot

w = tfn.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), name="w")
b = tfn.Variable(np.array([0.5, -0.5], np.float32), name="b")


@tfn.function(input_signature=[tfn.TensorSpec([1, 2], tfn.float32)])
def affine(x):
    return tfn.matmul(x, w) + b


g = affine.get_concrete_function().graph
n = len(g.inputs) - len(g.captures)
frozen = aot.freeze(g.module, g.symbol, {n + i: src.numpy() for i, (src, _, _) in enumerate(g.captures)})
print(frozen)
print("// -----")
print(g.module)

# CHECK-LABEL: func.func @__inference_affine
# CHECK-SAME: (%[[X:.*]]: tensor<1x2xf32>) -> tensor<1x2xf32>
# CHECK-DAG: %[[W:.*]] = "tfn.constant"() {value = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
# CHECK-DAG: %[[B:.*]] = "tfn.constant"() {value = dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>}
# CHECK: %[[M:.*]] = "tfn.matmul"(%[[X]], %[[W]])
# CHECK: "tfn.add"(%[[M]], %[[B]])
# CHECK-LABEL: // -----
# CHECK: func.func @__inference_affine(%{{.*}}: tensor<1x2xf32>, %{{.*}}: tensor<2x2xf32>, %{{.*}}: tensor<2xf32>)
# CHECK-NOT: tfn.constant
