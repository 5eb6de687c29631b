// RUN: tfn-opt %s --tfn-to-linalg | FileCheck %s
// The result is valid input for the rest of the pipeline.
// RUN: tfn-opt %s --tfn-to-linalg --canonicalize --cse --one-shot-bufferize=bufferize-function-boundaries > /dev/null

// Depthwise maps (printed at the top of the module; their functions are at the end of this file)
// CHECK-DAG: #[[MX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3, d2 * 2 + d4, d5 floordiv 2)>
// CHECK-DAG: #[[EX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3 * 2, d2 + d4 * 2, d5)>

// ---- conv2d: VALID is the named linalg op on a zero fill; SAME zero-pads H and W first (TF's split)

// CHECK-LABEL: func.func @conv_valid
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x8x3xf32>, %[[W:.*]]: tensor<3x3x3x4xf32>)
func.func @conv_valid(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x3x3x4xf32> {
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x3x3x4xf32>)
  // CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ACC]] : tensor<1x3x3x4xf32>)
  %0 = "tfn.conv2d"(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, same = false} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}

// CHECK-LABEL: func.func @conv_same
func.func @conv_same(%x: tensor<2x5x6x3xf32>, %w: tensor<3x2x3x4xf32>) -> tensor<2x5x6x4xf32> {
  // CHECK: tensor.pad %{{.*}} low[0, 1, 0, 0] high[0, 1, 1, 0]
  // CHECK: tensor<2x5x6x3xf32> to tensor<2x7x7x3xf32>
  // CHECK: linalg.conv_2d_nhwc_hwcf
  %0 = "tfn.conv2d"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = true} : (tensor<2x5x6x3xf32>, tensor<3x2x3x4xf32>) -> tensor<2x5x6x4xf32>
  return %0 : tensor<2x5x6x4xf32>
}

// Dynamic spatial dims: SAME pads computed at run time, output sizes from the padded input.
// CHECK-LABEL: func.func @conv_dynamic
func.func @conv_dynamic(%x: tensor<?x?x?x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<?x?x?x4xf32> {
  // CHECK: arith.ceildivsi
  // CHECK: tensor.pad %{{.*}} low[0, %{{.*}}, %{{.*}}, 0] high[0, %{{.*}}, %{{.*}}, 0]
  // CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} -> tensor<?x?x?x4xf32>
  %0 = "tfn.conv2d"(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, same = true} : (tensor<?x?x?x3xf32>, tensor<3x3x3x4xf32>) -> tensor<?x?x?x4xf32>
  return %0 : tensor<?x?x?x4xf32>
}

// ---- depthwise_conv2d: a channel multiplier M reads input channel k floordiv M; strides and dilations in the map

// CHECK-LABEL: func.func @depthwise_multiplier
func.func @depthwise_multiplier(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x3x3x6xf32> {
  // CHECK: tensor.collapse_shape %{{.*}} : tensor<3x3x3x2xf32> into tensor<3x3x6xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[MX]], {{.*}}} ins(%{{.*}}, %{{.*}} : tensor<1x8x8x3xf32>, tensor<3x3x6xf32>) outs(%{{.*}} : tensor<1x3x3x6xf32>)
  %0 = "tfn.depthwise_conv2d"(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, same = false, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x3x3x6xf32>
  return %0 : tensor<1x3x3x6xf32>
}

// Explicit pads: a static tensor.pad (top 1, bottom 2, left 0, right 1); dilation 2 in the map.
// CHECK-LABEL: func.func @depthwise_explicit
func.func @depthwise_explicit(%x: tensor<1x5x5x4xf32>, %w: tensor<2x2x4x1xf32>) -> tensor<1x6x4x4xf32> {
  // CHECK: tensor.pad %{{.*}} low[0, 1, 0, 0] high[0, 2, 1, 0]
  // CHECK: tensor<1x5x5x4xf32> to tensor<1x8x6x4xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[EX]],
  %0 = "tfn.depthwise_conv2d"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, same = false, pads = array<i64: 1, 2, 0, 1>} : (tensor<1x5x5x4xf32>, tensor<2x2x4x1xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// Dynamic dims: SAME pads at run time; the output's channels are the filter's times M.
// CHECK-LABEL: func.func @depthwise_dynamic
func.func @depthwise_dynamic(%x: tensor<?x?x?x?xf32>, %w: tensor<3x3x?x2xf32>) -> tensor<?x?x?x?xf32> {
  // CHECK: arith.ceildivsi
  // CHECK: tensor.pad %{{.*}} low[0, %{{.*}}, %{{.*}}, 0] high[0, %{{.*}}, %{{.*}}, 0]
  // CHECK: %[[C:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<3x3x?x2xf32>
  // CHECK: arith.muli %[[C]], %{{.*}} : index
  // CHECK: linalg.generic
  // CHECK: } -> tensor<?x?x?x?xf32>
  %0 = "tfn.depthwise_conv2d"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = true, pads = array<i64: 0, 0, 0, 0>} : (tensor<?x?x?x?xf32>, tensor<3x3x?x2xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
