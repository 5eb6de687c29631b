// RUN: tfn-opt %s --tfn-gpu-generalize | FileCheck %s
// What tfn-gpu-tile has no kernel kind for becomes a linalg.generic: tensor.pad, tensor.concat and
// tensor.insert_slice gather from their sources inside the generic (tensor.extract at a clamped index); a named
// convolution is generalized; linalg.matmul keeps its kernel.

// A pad reads the source at the index less `low` where it falls inside, the padding value elsewhere.
// CHECK-LABEL: func.func @pad
// CHECK: %[[CST:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<7x6xf32>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: %[[X:.*]] = tensor.extract %arg0[%{{.*}}, %{{.*}}] : tensor<4x3xf32>
// CHECK: arith.select %{{.*}}, %[[X]], %[[CST]] : f32
// CHECK-NOT: tensor.pad
func.func @pad(%x: tensor<4x3xf32>) -> tensor<7x6xf32> {
  %cst = arith.constant 0.5 : f32
  %r = tensor.pad %x low[1, 0] high[2, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<4x3xf32> to tensor<7x6xf32>
  return %r : tensor<7x6xf32>
}

// Each point from the input whose range along dim 1 holds it.
// CHECK-LABEL: func.func @concat
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: tensor.extract %arg1
// CHECK: tensor.extract %arg0
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK-NOT: tensor.concat
func.func @concat(%x: tensor<4x3xf32>, %y: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %r = tensor.concat dim(1) %x, %y : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// A strided slice: the source where (index - offset) is a multiple of the stride below size x stride, else the
// destination (read as the generic's input).
// CHECK-LABEL: func.func @insert_strided
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<5x9xf32>) outs(%{{.*}} : tensor<5x9xf32>)
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: tensor.extract %arg0
// CHECK-NOT: tensor.insert_slice
func.func @insert_strided(%x: tensor<2x3xf32>, %d: tensor<5x9xf32>) -> tensor<5x9xf32> {
  %r = tensor.insert_slice %x into %d[1, 2] [2, 3] [2, 3] : tensor<2x3xf32> into tensor<5x9xf32>
  return %r : tensor<5x9xf32>
}

// CHECK-LABEL: func.func @conv
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
func.func @conv(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %o: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) outs(%o : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  return %r : tensor<1x6x6x4xf32>
}

// CHECK-LABEL: func.func @matmul_kept
// CHECK: linalg.matmul
func.func @matmul_kept(%a: tensor<4x5xf32>, %b: tensor<5x6xf32>, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x5xf32>, tensor<5x6xf32>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}
