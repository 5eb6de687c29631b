# RUN: %PYTHON %s | FileCheck %s
# Variables are functionalised in a trace: a captured variable is an extra function argument (after the
# user's), each write replaces its SSA value in program order, and a changed variable leaves as an extra
# result (after the user's) that the runtime writes back. Writes inside a branch are carried out of scf.if.
import tfn

v = tfn.Variable(1.0, name="v")
w = tfn.Variable(0.0, name="w")
big = tfn.ones([256])  # more than 128 elements: captured as an input, not baked into the IR


@tfn.function
def step(x):
    v.assign_add(x)
    return v * 2.0


# CHECK-LABEL: func.func @__inference_step
# CHECK-SAME: (%[[X:.*]]: tensor<f32>, %[[V:.*]]: tensor<f32>) -> (tensor<f32>, tensor<f32>)
# CHECK: %[[NEW:.*]] = "tfn.add"(%[[V]], %[[X]])
# CHECK: %[[OUT:.*]] = "tfn.multiply"(%[[NEW]], %{{.*}})
# CHECK: return %[[OUT]], %[[NEW]] : tensor<f32>, tensor<f32>
print(step.experimental_get_compiler_ir(tfn.constant(3.0))())
# CHECK: tfn.Tensor(8.0, shape=(), dtype=float32)
print(step(tfn.constant(3.0)))
# CHECK: <tfn.Variable 'v:0' shape=() dtype=float32, numpy=4.0>
print(v)


@tfn.function
def ordered(x):
    v.assign(x * w)
    w.assign_add(v)
    return v + w


# Reads and writes in program order: w is read, v written from it, then w updated from the new v.
# CHECK-LABEL: func.func @__inference_ordered
# CHECK-SAME: (%[[X:.*]]: tensor<f32>, %[[W:.*]]: tensor<f32>)
# CHECK: %[[V1:.*]] = "tfn.multiply"(%[[X]], %[[W]])
# CHECK: %[[W1:.*]] = "tfn.add"(%[[W]], %[[V1]])
# CHECK: %[[R:.*]] = "tfn.add"(%[[V1]], %[[W1]])
# CHECK: return %[[R]], %[[W1]], %[[V1]]
print(ordered.experimental_get_compiler_ir(tfn.constant(2.0))())


@tfn.function
def branchy(x):
    tfn.cond(x > 0.0, lambda: w.assign_add(x), lambda: w.assign_sub(1.0))
    return w.read_value()


# CHECK-LABEL: func.func @__inference_branchy
# CHECK-SAME: (%[[X:.*]]: tensor<f32>, %[[W:.*]]: tensor<f32>)
# CHECK: %[[IF:.*]]:2 = scf.if
# CHECK: "tfn.add"(%[[W]], %[[X]])
# CHECK: scf.yield
# CHECK: } else {
# CHECK: "tfn.subtract"(%[[W]], %{{.*}})
# CHECK: scf.yield
# CHECK: return %[[IF]]#1, %[[IF]]#1
print(branchy.experimental_get_compiler_ir(tfn.constant(3.0))())
# CHECK: tfn.Tensor(3.0, shape=(), dtype=float32) tfn.Tensor(2.0, shape=(), dtype=float32)
print(branchy(tfn.constant(3.0)), branchy(tfn.constant(-3.0)))


@tfn.function
def counting(n):
    i = tfn.constant(0)
    while i < n:
        w.assign_add(1.0)
        i += 1
    return i


# A write inside a loop body: the variable is an iter_arg of scf.while and its final value a result.
# CHECK-LABEL: func.func @__inference_counting
# CHECK-SAME: (%[[N:.*]]: tensor<i32>, %[[W:.*]]: tensor<f32>) -> (tensor<i32>, tensor<f32>)
# CHECK: %[[LOOP:.*]]:2 = scf.while (%{{.*}} = %{{.*}}, %[[WIN:.*]] = %[[W]])
# CHECK: do {
# CHECK: ^bb0(%{{.*}}: tensor<i32>, %[[WB:.*]]: tensor<f32>):
# CHECK: %[[WNEW:.*]] = "tfn.add"(%[[WB]], %{{.*}})
# CHECK: scf.yield %{{.*}}, %[[WNEW]]
# CHECK: return %[[LOOP]]#0, %[[LOOP]]#1
print(counting.experimental_get_compiler_ir(tfn.constant(5))())
# CHECK: tfn.Tensor(5, shape=(), dtype=int32) <tfn.Variable 'w:0' shape=() dtype=float32, numpy=7.0>
print(counting(tfn.constant(5)), w)


@tfn.function
def scaled(x):
    return x * big


# CHECK-LABEL: func.func @__inference_scaled
# CHECK-SAME: (%[[X:.*]]: tensor<256xf32>, %[[BIG:.*]]: tensor<256xf32>) -> tensor<256xf32>
# CHECK-NOT: tfn.constant
# CHECK: "tfn.multiply"(%[[X]], %[[BIG]])
print(scaled.experimental_get_compiler_ir(tfn.ones([256]))())
