// RUN: tfn-opt %s --tfn-gpu-mapped | FileCheck %s
// A matmul, an elementwise chain on its result and a row sum, from the tfn dialect to kernels on device buffers:
// the arguments are copied in, each kernel is a gpu.launch (sizes 37 x 29 are not multiples of the tiles), the
// result is copied back into a host buffer and every device buffer is freed.
// CHECK-LABEL: func.func @f(%arg0: memref<37x50xf32>, %arg1: memref<50x29xf32>, %arg2: memref<37x29xf32>) -> memref<37xf32>
// CHECK: %[[A:.*]] = gpu.alloc  () : memref<37x50xf32>
// CHECK-NEXT: gpu.memcpy  %[[A]], %arg0
// CHECK: %[[B:.*]] = gpu.alloc  () : memref<50x29xf32>
// CHECK-NEXT: gpu.memcpy  %[[B]], %arg1
// CHECK: %[[C:.*]] = gpu.alloc  () : memref<37x29xf32>
// CHECK-NEXT: gpu.memcpy  %[[C]], %arg2
// The accumulator's fill: 1073 elements in 5 blocks of 256 threads.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c5, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) {
// The matmul: one block of 16 x 16 threads (a 64 x 64 tile of C), shared tiles.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c16, {{.*}} = %c16, {{.*}} = %c1) workgroup(
// tanh and add fused into one kernel.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c5, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// CHECK: math.tanh
// CHECK: arith.addf
// CHECK: gpu.terminator
// The row sum: its fill, then one block per row with shared memory.
// CHECK: gpu.launch
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c37, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) workgroup({{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: gpu.shuffle  xor
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<37xf32>
// CHECK-NEXT: gpu.memcpy  %[[OUT]], %[[R:.*]] : memref<37xf32>, memref<37xf32>
// CHECK-NEXT: gpu.dealloc  %[[R]]
// CHECK-NEXT: gpu.dealloc  %[[A]]
// CHECK-NEXT: gpu.dealloc  %[[B]]
// CHECK-NEXT: gpu.dealloc  %[[C]]
// CHECK-NEXT: return %[[OUT]] : memref<37xf32>
// CHECK-NOT: gpu.launch
func.func @f(%a: tensor<37x50xf32>, %b: tensor<50x29xf32>, %c: tensor<37x29xf32>) -> tensor<37xf32> {
  %0 = "tfn.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
  %1 = "tfn.tanh"(%0) : (tensor<37x29xf32>) -> tensor<37x29xf32>
  %2 = "tfn.add"(%1, %c) : (tensor<37x29xf32>, tensor<37x29xf32>) -> tensor<37x29xf32>
  %3 = "tfn.reduce_sum"(%2) {axis = array<i64: 1>, keepdims = false} : (tensor<37x29xf32>) -> tensor<37xf32>
  return %3 : tensor<37xf32>
}
