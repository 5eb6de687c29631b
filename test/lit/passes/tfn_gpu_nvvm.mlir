// REQUIRES: ptxas
// RUN: tfn-opt %s --tfn-gpu-nvvm | FileCheck %s
// The whole GPU pipeline: LLVM-dialect host code calling MLIR's CUDA runtime wrappers, one gpu.launch_func per
// kernel and each kernel's fatbin for sm_90 (built by ptxas) embedded as a gpu.binary.
// CHECK-LABEL: llvm.func @f(
// CHECK: llvm.call @mgpuStreamCreate
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: llvm.call @mgpuMemcpy
// CHECK-COUNT-5: gpu.launch_func
// CHECK: llvm.call @mgpuMemFree
// CHECK: llvm.call @mgpuStreamSynchronize
// CHECK: llvm.call @mgpuStreamDestroy
// CHECK: llvm.return
// CHECK-COUNT-5: gpu.binary @f_kernel{{.*}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}, "
func.func @f(%a: tensor<37x50xf32>, %b: tensor<50x29xf32>, %c: tensor<37x29xf32>) -> tensor<37xf32> {
  %0 = "tfn.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
  %1 = "tfn.tanh"(%0) : (tensor<37x29xf32>) -> tensor<37x29xf32>
  %2 = "tfn.add"(%1, %c) : (tensor<37x29xf32>, tensor<37x29xf32>) -> tensor<37x29xf32>
  %3 = "tfn.reduce_sum"(%2) {axis = array<i64: 1>, keepdims = false} : (tensor<37x29xf32>) -> tensor<37xf32>
  return %3 : tensor<37xf32>
}
