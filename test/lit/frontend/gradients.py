# RUN: %PYTHON %s | FileCheck %s
# A tape inside a tfn.function: the backward ops are traced into the same function, each with the location of
# the forward op it differentiates; the variable update follows, and the whole step is one function.
import tfn

w = tfn.Variable([[1.0], [2.0]])


@tfn.function
def step(x):
    with tfn.GradientTape() as tape:
        h = tfn.matmul(x, w)  # LINE_MATMUL
        loss = tfn.reduce_sum(tfn.tanh(h))  # LINE_LOSS
    g = tape.gradient(loss, w)  # LINE_GRADIENT
    w.assign_sub(0.1 * g)
    return loss


# CHECK-LABEL: func.func @__inference_step
# CHECK: %[[H:.*]] = "tfn.matmul"(%arg0, %arg1){{.*}} loc("{{.*}}gradients.py":12:
# CHECK: %[[T:.*]] = "tfn.tanh"(%[[H]]){{.*}} loc("{{.*}}gradients.py":13:
# CHECK: %[[L:.*]] = "tfn.reduce_sum"(%[[T]]){{.*}} loc("{{.*}}gradients.py":13:
# The seed: d loss / d loss = 1, at the gradient call.
# CHECK: "tfn.fill_like"(%[[L]], {{.*}} loc("{{.*}}gradients.py":14:
# reduce_sum's gradient broadcasts back, at the forward reduction's line:
# CHECK: "tfn.broadcast_to"{{.*}} loc("{{.*}}gradients.py":13:
# tanh's gradient: g * (1 - tanh^2), from the forward result:
# CHECK: "tfn.multiply"(%[[T]], %[[T]]){{.*}} loc("{{.*}}gradients.py":13:
# CHECK: %[[S:.*]] = "tfn.subtract"{{.*}} loc("{{.*}}gradients.py":13:
# CHECK: %[[DH:.*]] = "tfn.multiply"({{.*}}, %[[S]]){{.*}} loc("{{.*}}gradients.py":13:
# matmul's gradient for w: x^T @ dh, at the forward matmul's line (none for x, which is not a source):
# CHECK-NOT: "tfn.matmul"(%[[DH]], %arg1)
# CHECK: %[[DW:.*]] = "tfn.matmul"(%arg0, %[[DH]]) {transpose_a = true{{.*}} loc("{{.*}}gradients.py":12:
# The update, at its own line; the new value leaves the function with the loss.
# CHECK: %[[U:.*]] = "tfn.subtract"(%arg1, {{.*}} loc("{{.*}}gradients.py":15:
# CHECK: return %[[L]], %[[U]]
x = tfn.constant([[1.0, 2.0]])
print(step.get_concrete_function(x).graph.module.operation.get_asm(enable_debug_info=True, use_local_scope=True))
# CHECK: 1.00
print(f"{float(step(x)):.2f}")
