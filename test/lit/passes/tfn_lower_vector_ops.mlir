// RUN: tfn-opt %s '--tfn-pack-matmul=vector-bits=512 vector-registers=32 workers=2' --tfn-vectorize-kernels --tfn-bufferize --tfn-lower-vector-ops | FileCheck %s

// After bufferization the contraction is lowered to FMAs on 1-D vectors: no vector.contract, no n-D transfer.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: vector.contract
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: vector.transfer_read {{.*}} vector<8x
// CHECK: return
func.func @matmul(%a: tensor<100x70xf32>, %b: tensor<70x130xf32>) -> tensor<100x130xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<100x130xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<100x130xf32>) -> tensor<100x130xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<100x70xf32>, tensor<70x130xf32>) outs(%1 : tensor<100x130xf32>) -> tensor<100x130xf32>
  return %2 : tensor<100x130xf32>
}

// Without vector ops the pass changes nothing.
// CHECK-LABEL: func.func @plain
// CHECK: arith.addf
func.func @plain(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  return %0 : f32
}
