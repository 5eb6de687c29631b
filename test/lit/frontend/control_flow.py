# RUN: %PYTHON %s | FileCheck %s
# tfn.cond / tfn.while_loop / TensorArray as traced (`tfn` stage: scf.if, scf.while) and lowered (`linalg`).
import tfn


@tfn.function
def clip_or_negate(x, p):
    return tfn.cond(p, lambda: tfn.minimum(x, 1.0), lambda: -x)


# CHECK-LABEL: func.func @__inference_clip_or_negate
# CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[P:.*]]: tensor<i1>) -> tensor<3xf32>
# CHECK: %[[C:.*]] = tensor.extract %[[P]][] : tensor<i1>
# CHECK: %[[R:.*]] = scf.if %[[C]] -> (tensor<3xf32>) {
# CHECK:   %[[MIN:.*]] = "tfn.minimum"(%[[X]], %{{.*}})
# CHECK:   scf.yield %[[MIN]] : tensor<3xf32>
# CHECK: } else {
# CHECK:   %[[NEG:.*]] = "tfn.negative"(%[[X]])
# CHECK:   scf.yield %[[NEG]] : tensor<3xf32>
# CHECK: }
# CHECK: return %[[R]] : tensor<3xf32>
ir = clip_or_negate.experimental_get_compiler_ir(tfn.constant([1.0, 2.0, 3.0]), tfn.constant(True))
print(ir("tfn"))
# Lowered, the bool condition is stored as i8 and truncated to the i1 that scf.if takes.
# CHECK-LABEL: func.func @__inference_clip_or_negate
# CHECK-SAME: %{{.*}}: tensor<i8>
# CHECK: %[[B:.*]] = tensor.extract %{{.*}}[] : tensor<i8>
# CHECK: %[[I1:.*]] = arith.trunci %[[B]] : i8 to i1
# CHECK: scf.if %[[I1]] -> (tensor<3xf32>)
print(ir("linalg"))


def collatz_step(n, odd, seen):
    new = tfn.where(odd, 3 * n + 1, n // 2)
    return new, (new % 2) == 1, tfn.concat([seen, tfn.reshape(n, [1])], 0)


@tfn.function
def collatz_steps(n):
    # A bool loop variable and a growing vector (shape_invariants relaxes it to tensor<?xi32>).
    return tfn.while_loop(lambda n, odd, seen: n > 1, collatz_step, (n, (n % 2) == 1, tfn.zeros([0], tfn.int32)),
                          shape_invariants=(None, None, [None]))


# CHECK-LABEL: func.func @__inference_collatz_steps
# CHECK: %[[EMPTY:.*]] = "tfn.fill"(%{{.*}}) {shape = array<i64: 0>} : (tensor<i32>) -> tensor<0xi32>
# CHECK: %[[INIT:.*]] = tensor.cast %[[EMPTY]] : tensor<0xi32> to tensor<?xi32>
# CHECK: scf.while (%[[N:.*]] = %{{.*}}, %[[ODD:.*]] = %{{.*}}, %[[SEEN:.*]] = %[[INIT]]) : (tensor<i32>, tensor<i1>, tensor<?xi32>) -> (tensor<i32>, tensor<i1>, tensor<?xi32>) {
# CHECK:   "tfn.greater"(%[[N]], %{{.*}})
# CHECK:   %[[GO:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
# CHECK:   scf.condition(%[[GO]]) %[[N]], %[[ODD]], %[[SEEN]] : tensor<i32>, tensor<i1>, tensor<?xi32>
# CHECK: } do {
# CHECK: ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<?xi32>):
# CHECK:   "tfn.select"
# CHECK:   "tfn.concat"
# CHECK:   scf.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<i32>, tensor<i1>, tensor<?xi32>
ir = collatz_steps.experimental_get_compiler_ir(tfn.constant(6))
print(ir("tfn"))
# Lowered: the bool loop variable is carried as tensor<i8>.
# CHECK-LABEL: func.func @__inference_collatz_steps
# CHECK: scf.while ({{.*}}) : (tensor<i32>, tensor<i8>, tensor<?xi32>) -> (tensor<i32>, tensor<i8>, tensor<?xi32>)
# CHECK: arith.trunci %{{.*}} : i8 to i1
# CHECK: scf.condition
print(ir("linalg"))
# CHECK: n=1 seen=[6, 3, 10, 5, 16, 8, 4, 2]
n, _, seen = collatz_steps(tfn.constant(6))
print(f"n={n.numpy()} seen={seen.numpy().tolist()}")


@tfn.function
def running_sums(x):
    # A TensorArray loop variable: its buffer is carried as a tensor and each write is a tensor_scatter_update.
    ta = tfn.TensorArray(tfn.float32, size=x.shape[0])
    _, _, ta = tfn.while_loop(lambda i, s, ta: i < x.shape[0],
                              lambda i, s, ta: (i + 1, s + x[i], ta.write(i, s + x[i])), (0, 0.0, ta))
    return ta.stack()


# CHECK-LABEL: func.func @__inference_running_sums
# CHECK: %[[BUF:.*]] = "tfn.fill"(%{{.*}}) {shape = array<i64: 4>} : (tensor<f32>) -> tensor<4xf32>
# CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[BUF]]) : (tensor<i32>, tensor<f32>, tensor<4xf32>)
# CHECK: } do {
# CHECK:   "tfn.strided_slice"
# CHECK:   "tfn.tensor_scatter_update"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<1x1xi32>, tensor<1xf32>) -> tensor<4xf32>
print(running_sums.experimental_get_compiler_ir(tfn.constant([1.0, 2.0, 3.0, 4.0]))("tfn"))
# CHECK: [ 1.  3.  6. 10.]
print(running_sums(tfn.constant([1.0, 2.0, 3.0, 4.0])).numpy())
