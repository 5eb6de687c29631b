// The `llvm` stage, run on the text of the `bufferized` stage.
// RUN: tfn-opt %s --tfn-lower-to-linalg --tfn-bufferize | tfn-opt --tfn-lower-to-llvm | FileCheck %s
// Only the LLVM dialect is left.
// RUN: tfn-opt %s --tfn-lower-to-linalg --tfn-bufferize | tfn-opt --tfn-lower-to-llvm | FileCheck %s --check-prefix=ONLYLLVM
// ONLYLLVM-NOT: {{(memref|linalg|scf|cf|arith|math|func|affine|tensor|builtin\.unrealized_conversion_cast)\.}}

// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)

// Memref arguments become descriptor fields; the result is a descriptor struct.
// CHECK-LABEL: llvm.func @f(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64
// CHECK-SAME: -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?xf32> attributes {llvm.emit_c_interface} {
  // CHECK: llvm.call @tfn_malloc_routed
  // CHECK: llvm.fadd
  %0 = "tfn.add"(%a, %b) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // f32 tanh is a rational polynomial (tfn-polynomial-approximation): vectorisable, no libm call.
  // CHECK-NOT: llvm.intr.exp
  // CHECK: llvm.intr.fma
  // CHECK: llvm.fdiv
  // CHECK-NOT: math.tanh
  %1 = "tfn.tanh"(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = "tfn.reduce_sum"(%1) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<?xf32>
  // CHECK: llvm.call @tfn_free_routed
  // CHECK: llvm.return %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  return %2 : tensor<?xf32>
}
// The C interface wrapper the runtime calls.
// CHECK-LABEL: llvm.func @_mlir_ciface_f(
// CHECK: llvm.call @f(
