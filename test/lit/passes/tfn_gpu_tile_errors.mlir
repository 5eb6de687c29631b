// RUN: not tfn-opt %s --tfn-gpu-tile 2>&1 | FileCheck %s
// An op without a GPU kernel is an error at its location.
func.func @conv(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %o: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {
  // CHECK: [[@LINE+1]]:8: error: tfn-gpu-tile: linalg.conv_2d_nhwc_hwcf has no GPU kernel
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) outs(%o : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  return %r : tensor<1x6x6x4xf32>
}
