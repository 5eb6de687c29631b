# RUN: %PYTHON %s | FileCheck %s
# AutoGraph loops: `while` on a tensor condition and `for` over tfn.range or a tensor become one scf.while
# (body traced once); `break`/`continue` become flags carried by the loop; Python loops unroll at trace time.
import tfn

n = tfn.constant(10)
x = tfn.constant([0.9, 0.8])


@tfn.function
def while_tensor(x):
    while tfn.reduce_sum(x) > 1.0:
        x = tfn.tanh(x)
    return x


# CHECK-LABEL: func.func @__inference_while_tensor
# CHECK: %[[W:.*]] = scf.while (%[[A:.*]] = %arg0) : (tensor<2xf32>) -> tensor<2xf32> {
# CHECK:   "tfn.reduce_sum"(%[[A]])
# CHECK:   "tfn.greater"
# CHECK:   scf.condition
# CHECK: } do {
# CHECK:   "tfn.tanh"
# CHECK:   scf.yield
# CHECK: }
# CHECK: return %[[W]]
print(while_tensor.experimental_get_compiler_ir(x)())


@tfn.function
def for_range(n):
    total = 0
    for i in tfn.range(1, n + 1, 2):
        total += i
    return total


# The loop counts on the range's own value; the Python 0 becomes an int32 loop variable.
# CHECK-LABEL: func.func @__inference_for_range
# CHECK: %[[R:.*]] = "tfn.range"(%[[START:[0-9]+]], %[[LIMIT:[0-9]+]], %[[DELTA:[0-9]+]])
# CHECK: %[[W:.*]]:2 = scf.while (%[[I:.*]] = %[[START]], %[[T:.*]] = %{{.*}}) : (tensor<i32>, tensor<i32>)
# CHECK:   "tfn.less"(%[[I]], %[[LIMIT]])
# CHECK:   scf.condition
# CHECK: } do {
# CHECK: ^bb0(%[[I2:.*]]: tensor<i32>, %[[T2:.*]]: tensor<i32>):
# CHECK:   "tfn.add"(%[[I2]], %[[DELTA]])
# CHECK:   "tfn.add"(%[[T2]], %[[I2]])
# CHECK:   scf.yield
# CHECK: return %[[W]]#1
print(for_range.experimental_get_compiler_ir(n)())


@tfn.function
def break_continue(n):
    s = tfn.constant(0)
    for i in tfn.range(n):
        if i > 5:
            break
        if i % 2 == 0:
            continue
        s += i
    return s


# `break` is a bool loop variable that the condition tests. An `if` whose branch always jumps takes the rest
# of the body into its else branch, so neither the break nor the continue needs a flag test of its own.
# CHECK-LABEL: func.func @__inference_break_continue
# CHECK: %[[FALSE:.*]] = "tfn.constant"() {value = dense<false> : tensor<i1>}
# CHECK: scf.while (%{{.*}} = %{{.*}}, %[[BRK:.*]] = %[[FALSE]], %{{.*}} = %{{.*}}) : (tensor<i32>, tensor<i1>, tensor<i32>)
# CHECK:   "tfn.less"
# CHECK:   %[[NB:.*]] = "tfn.logical_not"(%[[BRK]])
# CHECK:   "tfn.logical_and"(%{{.*}}, %[[NB]])
# CHECK:   scf.condition
# CHECK: } do {
# CHECK: ^bb0(%{{.*}}: tensor<i32>, %[[B:.*]]: tensor<i1>, %[[S:.*]]: tensor<i32>):
# CHECK:   "tfn.greater"
# CHECK:   scf.if %{{.*}} -> (tensor<i1>, tensor<i32>) {
# CHECK:     %[[T:.*]] = "tfn.constant"() {value = dense<true> : tensor<i1>}
# CHECK:     scf.yield %[[T]], %[[S]]
# CHECK:   } else {
# CHECK:     "tfn.floormod"
# CHECK:     %[[S2:.*]] = scf.if %{{.*}} -> (tensor<i32>) {
# CHECK:       scf.yield %[[S]]
# CHECK:     } else {
# CHECK:       "tfn.add"(%[[S]],
# CHECK:     }
# CHECK:     scf.yield %[[B]], %[[S2]]
# CHECK:   }
# CHECK:   scf.yield
print(break_continue.experimental_get_compiler_ir(n)())


@tfn.function
def continue_flag(n):
    s = tfn.constant(0)
    for i in tfn.range(n):
        if i % 2 == 0:
            if i > 4:
                continue
            s += 1
        s += i
    return s


# A `continue` nested deeper sets a flag local to the iteration; the rest of the body runs under `not flag`.
# CHECK-LABEL: func.func @__inference_continue_flag
# CHECK: scf.while
# CHECK: } do {
# CHECK:   %[[C:.*]]:2 = scf.if %{{.*}} -> (tensor<i1>, tensor<i32>) {
# CHECK:     scf.if %{{.*}} -> (tensor<i1>, tensor<i32>) {
# CHECK:       "tfn.constant"() {value = dense<true> : tensor<i1>}
# CHECK:     } else {
# CHECK:       "tfn.constant"() {value = dense<false> : tensor<i1>}
# CHECK:     }
# CHECK:   } else {
# CHECK:     "tfn.constant"() {value = dense<false> : tensor<i1>}
# CHECK:   }
# CHECK:   "tfn.logical_not"(%[[C]]#0)
# CHECK:   scf.if %{{.*}} -> (tensor<i32>) {
# CHECK:     "tfn.add"(%[[C]]#1,
# CHECK:   }
print(continue_flag.experimental_get_compiler_ir(n)())


@tfn.function
def python_loop(x):
    for k in range(3):
        x = x * 2.0
    return x


# A Python iterable unrolls: three multiplies, no loop.
# CHECK-LABEL: func.func @__inference_python_loop
# CHECK-NOT: scf.while
# CHECK-COUNT-3: "tfn.multiply"
# CHECK-NOT: scf.while
print(python_loop.experimental_get_compiler_ir(x)())


@tfn.function
def over_tensor(m):
    acc = tfn.zeros([2])
    for row in m:
        acc = acc + row
    return acc


# A tensor's first dimension: a counter loop reading one row per iteration.
# CHECK-LABEL: func.func @__inference_over_tensor
# CHECK: scf.while
# CHECK:   "tfn.less"
# CHECK: } do {
# CHECK:   "tfn.strided_slice"
# CHECK:   "tfn.add"
print(over_tensor.experimental_get_compiler_ir(tfn.ones([3, 2]))())

# CHECK: 9 25 34
print(break_continue(n).numpy(), for_range(n).numpy(), continue_flag(n).numpy())
# CHECK: [3. 3.]
print(over_tensor(tfn.ones([3, 2])).numpy())
