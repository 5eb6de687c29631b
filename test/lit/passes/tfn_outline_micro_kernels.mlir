// RUN: tfn-opt %s --split-input-file '--tfn-pack-matmul=vector-bits=512 vector-registers=32 workers=1' --tfn-vectorize-kernels --tfn-bufferize --tfn-outline-micro-kernels --tfn-outline-micro-kernels | FileCheck %s
// RUN: tfn-opt %s --split-input-file '--tfn-pack-matmul=vector-bits=512 vector-registers=32 workers=1 min-epilogue-elements=1' --tfn-vectorize-kernels --tfn-bufferize --tfn-outline-micro-kernels | FileCheck %s --check-prefix=EPI

// The register tiles of two products of different shapes (K = 72 and 96, other strides) call one function: the
// memrefs are cast to dynamic sizes and strides (the unit innermost stride kept), the indices and loop bounds are
// arguments, one per use. Run twice, the pass does not outline the function's own body again.
// CHECK-LABEL: func.func @two
// CHECK: memref.cast %{{.*}} : memref<104x5x32xf32> to memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: memref.cast %{{.*}} : memref<104x72xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK: func.call @__tfn_micro_kernel_0({{.*}}, %c72, %c4, {{.*}}) : (memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, index,
// CHECK-NOT: vector.contract
// CHECK: memref.cast %arg2 : memref<64x96xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK: func.call @__tfn_micro_kernel_0({{.*}}, %c96, %c4, {{.*}})
// CHECK-NOT: vector.contract
// CHECK: return

// A loop carrying a vector without a contraction stays where it is.
// CHECK-LABEL: func.func @sum
// CHECK-NOT: func.call
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf

// The function: private, internal linkage, inlinehint (LLVM's O3 build inlines it), the accumulators read, the k
// loop, the accumulators written; the padding constant copied in.
// CHECK: func.func private @__tfn_micro_kernel_0(%[[C:[^:]*]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index, %[[K0:[^:]*]]: index,
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>, passthrough = ["inlinehint"], tfn.micro_kernel
// CHECK-NEXT: %[[PAD:.*]] = ub.poison : f32
// CHECK-NEXT: %[[ACC:.*]] = vector.transfer_read %[[C]][%[[I]], %[[J]], %[[K0]]], %[[PAD]] {{.*}} vector<8x1x32xf32>
// CHECK-NEXT: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x1x32xf32>)
// CHECK: vector.contract
// CHECK: vector.transfer_write %[[R]], %[[C]]
// CHECK-NEXT: return
// CHECK-NOT: __tfn_micro_kernel_1
func.func @two(%a: tensor<100x70xf32>, %b: tensor<70x130xf32>, %c: tensor<64x96xf32>, %d: tensor<96x128xf32>) -> (tensor<100x130xf32>, tensor<64x128xf32>) {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<100x130xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<100x130xf32>) -> tensor<100x130xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<100x70xf32>, tensor<70x130xf32>) outs(%1 : tensor<100x130xf32>) -> tensor<100x130xf32>
  %3 = tensor.empty() : tensor<64x128xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %5 = linalg.matmul ins(%c, %d : tensor<64x96xf32>, tensor<96x128xf32>) outs(%4 : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %2, %5 : tensor<100x130xf32>, tensor<64x128xf32>
}

func.func @sum(%m: memref<16x8xf32>) -> vector<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f32
  %init = vector.transfer_read %m[%c0, %c0], %z {in_bounds = [true]} : memref<16x8xf32>, vector<8xf32>
  %r = scf.for %i = %c1 to %c16 step %c1 iter_args(%acc = %init) -> (vector<8xf32>) {
    %v = vector.transfer_read %m[%i, %c0], %z {in_bounds = [true]} : memref<16x8xf32>, vector<8xf32>
    %s = arith.addf %acc, %v : vector<8xf32>
    scf.yield %s : vector<8xf32>
  }
  return %r : vector<8xf32>
}

// -----

// With an epilogue (tfn-pack-matmul's fused_epilogue: bias add + ReLU), a register tile is the k loop starting from
// zero vectors, the epilogue's reads and vector math, and the write: all of it is the function's; the bias is one
// more memref argument.
// EPI-LABEL: func.func @epilogue
// EPI: memref.cast %{{.*}} : memref<2x32xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// EPI: func.call @__tfn_micro_kernel_0(
// EPI-NOT: vector.contract
// EPI-NOT: arith.maximumf
// EPI: return
// EPI: func.func private @__tfn_micro_kernel_0(
// EPI: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x1x32xf32>
// EPI: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x1x32xf32>)
// EPI: vector.contract
// EPI: vector.transfer_read {{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<32xf32>
// EPI: arith.addf %[[ACC]]
// EPI: arith.maximumf
// EPI: vector.transfer_write
// EPI-NEXT: return
func.func @epilogue(%a: tensor<128x64xf32>, %b: tensor<64x64xf32>, %bias: tensor<64xf32>) -> tensor<128x64xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<128x64xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x64xf32>) outs(%1 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2, %bias : tensor<128x64xf32>, tensor<64xf32>) outs(%0 : tensor<128x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    %5 = arith.maximumf %4, %cst : f32
    linalg.yield %5 : f32
  } -> tensor<128x64xf32>
  return %3 : tensor<128x64xf32>
}
