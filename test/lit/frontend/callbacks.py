# RUN: %PYTHON %s | FileCheck %s
# How tfn.print, tfn.py_function and string tensors are traced.
import sys

import tfn


@tfn.py_function(Tout=[tfn.float32, tfn.string])
def describe(x, s):
    return x * 2, s + b"!"


@tfn.function
def f(x, s):
    tfn.print("x =", x, "and", [x, 1], output_stream=sys.stdout, summarize=2, sep="|")
    tfn.print("only text")
    y, t = describe(x, s)
    return y, t + s


ir = f.experimental_get_compiler_ir(tfn.constant([1.0, 2.0]), tfn.constant("a"))

# CHECK-LABEL: func.func @__inference_f
# CHECK-SAME: (%[[X:.*]]: tensor<2xf32>, %[[S:.*]]: tensor<!tfn.string>) -> (tensor<?xf32>, tensor<?x!tfn.string>)
# one op per printed tensor, each writing the text before it; the last also writes the end
# CHECK: "tfn.print"(%[[X]]) {prefix = "x =|", site = 0 : i64, stream = "stdout", suffix = "", summarize = 2 : i64}
# CHECK: "tfn.print"(%[[X]]) {prefix = "|and|[", site = 1 : i64, stream = "stdout", suffix = ", 1]\0A", summarize = 2 : i64}
# CHECK: "tfn.print"() {prefix = "only text\0A", site = 2 : i64, stream = "stderr", suffix = "", summarize = 3 : i64}
# a py_function is a call of a private declaration naming its callback site; results have the rank of the
# largest input, every dim dynamic
# CHECK: %[[R:.*]]:2 = call @py_function_3(%[[X]], %[[S]]) : (tensor<2xf32>, tensor<!tfn.string>) -> (tensor<?xf32>, tensor<?x!tfn.string>)
# CHECK: "tfn.add"(%[[R]]#1, %[[S]]) : (tensor<?x!tfn.string>, tensor<!tfn.string>) -> tensor<?x!tfn.string>
# CHECK: func.func private @py_function_3(tensor<2xf32>, tensor<!tfn.string>) -> (tensor<?xf32>, tensor<?x!tfn.string>) attributes {tfn.site = 3 : i64}
print(ir("tfn"))
