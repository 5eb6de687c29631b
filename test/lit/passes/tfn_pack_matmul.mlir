// RUN: tfn-opt %s --tfn-pack-matmul | FileCheck %s

// A large static f32 matmul: A padded to 104x72 (MR = 8, KR = 4), B padded to 72x160 and packed into 32-wide
// panels (tile sizes: cache level, then register level), one tagged contraction over the panels, then collapsed and sliced back to 100x130.
// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<100x70xf32>, %b: tensor<70x130xf32>) -> tensor<100x130xf32> {
  // CHECK: tensor.pad %{{.*}} low[0, 0] high[2, 30]
  // CHECK: tensor<70x130xf32> to tensor<72x160xf32>
  // CHECK: linalg.pack {{.*}} outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [32] {{.*}}tfn.kernel = "pack"{{.*}} tensor<72x160xf32> -> tensor<5x72x32xf32>
  // CHECK: linalg.fill {tfn.kernel = "fill"{{.*}} -> tensor<104x5x32xf32>
  // CHECK: tensor.pad %{{.*}} low[0, 0] high[4, 2]
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]
  // CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<104x72xf32>, tensor<5x72x32xf32>) outs(%{{.*}} : tensor<104x5x32xf32>)
  // CHECK-SAME: tfn.kernel = "contract", tfn.tiles = [array<i64: 104, 1, 72, 0>, array<i64: 8, 1, 4, 0>]
  // CHECK: arith.mulf
  // CHECK: arith.addf
  // CHECK: tensor.collapse_shape {{.*}} into tensor<104x160xf32>
  // CHECK: tensor.extract_slice {{.*}}[0, 0] [100, 130] [1, 1] : tensor<104x160xf32> to tensor<100x130xf32>
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<100x130xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<100x130xf32>) -> tensor<100x130xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<100x70xf32>, tensor<70x130xf32>) outs(%1 : tensor<100x130xf32>) -> tensor<100x130xf32>
  return %2 : tensor<100x130xf32>
}

// A convolution: one contraction per filter tap over a strided slice of the padded input.
// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<1x30x40x20xf32>, %w: tensor<3x3x20x36xf32>) -> tensor<1x28x38x36xf32> {
  // CHECK: linalg.pack {{.*}} -> tensor<3x3x2x20x32xf32>
  // CHECK-COUNT-9: tfn.kernel = "contract"
  // CHECK: tensor.extract_slice {{.*}} to tensor<1x28x38x36xf32>
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<1x28x38x36xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x30x40x20xf32>, tensor<3x3x20x36xf32>) outs(%1 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  return %2 : tensor<1x28x38x36xf32>
}

// Small, dynamic or non-f32 products stay as they are.
// CHECK-LABEL: func.func @untouched
func.func @untouched(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<?x128xf32>, %d: tensor<128x128xf32>) -> (tensor<8x8xf32>, tensor<?x128xf32>) {
  // CHECK-NOT: linalg.pack
  // CHECK: linalg.matmul
  // CHECK: linalg.matmul
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<8x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%1 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %c, %c0 : tensor<?x128xf32>
  %3 = tensor.empty(%n) : tensor<?x128xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<?x128xf32>) -> tensor<?x128xf32>
  %5 = linalg.matmul ins(%c, %d : tensor<?x128xf32>, tensor<128x128xf32>) outs(%4 : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %2, %5 : tensor<8x8xf32>, tensor<?x128xf32>
}
