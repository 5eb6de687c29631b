# RUN: %PYTHON %s | FileCheck %s
# AutoGraph: an `if` on a tensor becomes one scf.if with both branches traced once; an `if` on a Python value
# runs as Python (one branch traced); elif chains nest; early returns become the if's results; and/or/not and
# conditional expressions on tensors become logical ops and selects.
import tfn

x = tfn.constant(1.0)
i = tfn.constant(3)


@tfn.function
def branches(x):
    if x > 0:
        y = x * 2.0
    elif x < -1:
        y = -x
    else:
        y = x + 1.0
    return y


# CHECK-LABEL: func.func @__inference_branches
# CHECK: %[[C:.*]] = "tfn.greater"
# CHECK: %[[P:.*]] = tensor.extract %[[C]][] : tensor<i1>
# CHECK: scf.if %[[P]] -> (tensor<f32>) {
# CHECK:   "tfn.multiply"
# CHECK:   scf.yield
# CHECK: } else {
# CHECK:   "tfn.less"
# CHECK:   scf.if %{{.*}} -> (tensor<f32>) {
# CHECK:     "tfn.negative"
# CHECK:   } else {
# CHECK:     "tfn.add"
# CHECK:   }
# CHECK: }
print(branches.experimental_get_compiler_ir(x)())


@tfn.function
def python_condition(x, flag):
    if flag:
        x = x * 3.0
    else:
        x = x - 3.0
    return x


# A Python condition: only the branch taken is traced, no scf.if.
# CHECK-LABEL: func.func @__inference_python_condition
# CHECK-NOT: scf.if
# CHECK: "tfn.multiply"
# CHECK-NOT: "tfn.subtract"
# CHECK: return
print(python_condition.experimental_get_compiler_ir(x, True)())


@tfn.function
def early_return(x):
    if x > 0:
        return x * 2.0
    x = x - 1.0
    return -x


# The code after an `if` whose branch returns moves into the else branch: one scf.if yields the result.
# CHECK-LABEL: func.func @__inference_early_return
# CHECK: %[[R:.*]] = scf.if %{{.*}} -> (tensor<f32>) {
# CHECK:   "tfn.multiply"
# CHECK: } else {
# CHECK:   "tfn.subtract"
# CHECK:   "tfn.negative"
# CHECK: }
# CHECK: return %[[R]] : tensor<f32>
print(early_return.experimental_get_compiler_ir(x)())


@tfn.function
def expressions(x, i):
    a = x > 0 and i > 2
    b = x > 0 or i > 2
    c = not x > 0
    d = 1.0 if x > 0 else x
    e = 5 if i > 100 else 6  # Python numbers chosen by a tensor condition: a select of two constants
    return a, b, c, d, e


# CHECK-LABEL: func.func @__inference_expressions
# CHECK: "tfn.logical_and"
# CHECK: "tfn.logical_or"
# CHECK: "tfn.logical_not"
# CHECK: "tfn.select"
# CHECK: "tfn.select"
# CHECK-NOT: scf.if
print(expressions.experimental_get_compiler_ir(x, i)())

# The compiled functions agree with Python.
# CHECK: 2.0 3.0 0.0
print(branches(tfn.constant(1.0)).numpy(), branches(tfn.constant(-3.0)).numpy(), branches(tfn.constant(-1.0)).numpy())
# CHECK: 4.0 2.0
print(early_return(tfn.constant(2.0)).numpy(), early_return(tfn.constant(-1.0)).numpy())
