// RUN: tfn-opt %s --tfn-fold-constants | FileCheck %s

// Ops on constants become constants, chains fold through (3 + 4 = 7, then 7 > 5), attributes are read
// (gather along axis 0), and multi-result ops fold every result.
// CHECK-LABEL: func.func @chain
func.func @chain() -> (tensor<i1>, tensor<2xf32>, tensor<i32>, tensor<i32>) {
  %a = "tfn.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %b = "tfn.constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
  %f = "tfn.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
  %p = "tfn.constant"() {value = dense<[1.5, 2.5, 3.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %i = "tfn.constant"() {value = dense<[2, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %v = "tfn.constant"() {value = dense<[8, 9]> : tensor<2xi32>} : () -> tensor<2xi32>
  // CHECK-NOT: tfn.add
  // CHECK-NOT: tfn.greater
  // CHECK-NOT: tfn.gather
  // CHECK-NOT: tfn.unstack
  // CHECK-DAG: "tfn.constant"() {value = dense<true> : tensor<i1>}
  // CHECK-DAG: "tfn.constant"() {value = dense<[3.500000e+00, 1.500000e+00]> : tensor<2xf32>}
  // CHECK-DAG: "tfn.constant"() {value = dense<8> : tensor<i32>}
  // CHECK-DAG: "tfn.constant"() {value = dense<9> : tensor<i32>}
  %s = "tfn.add"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %g = "tfn.greater"(%s, %f) : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %h = "tfn.gather"(%p, %i) {axis = 0 : i64, batch_dims = 0 : i64} : (tensor<3xf32>, tensor<2xi32>) -> tensor<2xf32>
  %u:2 = "tfn.unstack"(%v) {axis = 0 : i64, num = 2 : i64} : (tensor<2xi32>) -> (tensor<i32>, tensor<i32>)
  return %g, %h, %u#0, %u#1 : tensor<i1>, tensor<2xf32>, tensor<i32>, tensor<i32>
}

// Left alone: an op with an operand that is not a constant, a print (an effect), a collective (an exchange with
// the other replicas, whose values the compiler does not know), a gather whose index is out of range (the
// compiled op reports it when the function runs) and a result of over 1024 elements.
// CHECK-LABEL: func.func @kept
func.func @kept(%x: tensor<i32>) -> (tensor<i32>, tensor<f32>, tensor<2000xf32>, tensor<i32>, tensor<i32>, tensor<2xi32>) {
  %a = "tfn.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %p = "tfn.constant"() {value = dense<[1.5, 2.5, 3.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %bad = "tfn.constant"() {value = dense<7> : tensor<i32>} : () -> tensor<i32>
  %one = "tfn.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: "tfn.add"
  %s = "tfn.add"(%x, %a) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  // CHECK: "tfn.print"
  "tfn.print"(%a) {prefix = "a: ", site = 0 : i64, stream = "stderr", suffix = "\0A", summarize = 3 : i64} : (tensor<i32>) -> ()
  // CHECK: "tfn.all_reduce"
  %r = "tfn.all_reduce"(%a) {reduction = "sum"} : (tensor<i32>) -> tensor<i32>
  // CHECK: "tfn.broadcast"
  %c = "tfn.broadcast"(%a) {root = 0 : i64} : (tensor<i32>) -> tensor<i32>
  // CHECK: "tfn.all_gather"
  %v = "tfn.constant"() {value = dense<[1]> : tensor<1xi32>} : () -> tensor<1xi32>
  %ag = "tfn.all_gather"(%v) {replicas = 2 : i64} : (tensor<1xi32>) -> tensor<2xi32>
  // CHECK: "tfn.gather"
  %g = "tfn.gather"(%p, %bad) {axis = 0 : i64, batch_dims = 0 : i64} : (tensor<3xf32>, tensor<i32>) -> tensor<f32>
  // CHECK: "tfn.fill"
  %big = "tfn.fill"(%one) {shape = array<i64: 2000>} : (tensor<f32>) -> tensor<2000xf32>
  return %s, %g, %big, %r, %c, %ag : tensor<i32>, tensor<f32>, tensor<2000xf32>, tensor<i32>, tensor<i32>, tensor<2xi32>
}

// Each op that may report a run-time error gets its code (its position among such ops in the module) before
// folding, so the gather keeps code 11 after the sqrt (code 10) is folded away: the runtime names the op that
// failed.
// CHECK-LABEL: func.func @numbered
func.func @numbered(%p: tensor<3xf32>, %i: tensor<i32>) -> (tensor<f32>, tensor<f32>) {
  %four = "tfn.constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK-NOT: tfn.sqrt
  // CHECK: "tfn.gather"(%{{.*}}, %{{.*}}) {axis = 0 : i64, batch_dims = 0 : i64, tfn.error_code = 11 : i64}
  %two = "tfn.sqrt"(%four) : (tensor<f32>) -> tensor<f32>
  %g = "tfn.gather"(%p, %i) {axis = 0 : i64, batch_dims = 0 : i64} : (tensor<3xf32>, tensor<i32>) -> tensor<f32>
  return %g, %two : tensor<f32>, tensor<f32>
}
