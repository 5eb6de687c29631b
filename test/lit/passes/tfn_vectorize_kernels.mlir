// RUN: tfn-opt %s --tfn-pack-matmul --tfn-vectorize-kernels | FileCheck %s

// The tagged pack, fill and contraction are tiled into static tiles and vectorised; no linalg op and no tag is
// left, the 8x32 accumulator stays in registers (iter_args) across the k loop, and no vector is larger than a tile.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.pack
// CHECK-NOT: tfn.kernel
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<72x5x32xf32>, vector<4x32xf32>
// CHECK: scf.for {{.*}} -> (tensor<104x1x32xf32>, vector<8x1x32xf32>)
// CHECK: vector.contract
// CHECK-NOT: vector<{{[0-9][0-9][0-9]+}}
// CHECK: return
func.func @matmul(%a: tensor<100x70xf32>, %b: tensor<70x130xf32>) -> tensor<100x130xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<100x130xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<100x130xf32>) -> tensor<100x130xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<100x70xf32>, tensor<70x130xf32>) outs(%1 : tensor<100x130xf32>) -> tensor<100x130xf32>
  return %2 : tensor<100x130xf32>
}
