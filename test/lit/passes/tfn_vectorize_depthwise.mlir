// RUN: tfn-opt %s --tfn-to-linalg '--tfn-vectorize-depthwise=vector-bits=512 vector-registers=32' | FileCheck %s
// RUN: tfn-opt %s --tfn-to-linalg '--tfn-vectorize-depthwise=vector-bits=256 vector-registers=16' | FileCheck %s --check-prefix=AVX2
// The lowering's tagged generic becomes vector FMAs over the channels: CT = two vectors of lanes (32 for 512-bit
// vectors, 16 for 256-bit ones), OWT output columns (as many as half the registers hold: 8 and 4 here), one FMA per
// filter tap with the filter rows unrolled, so the accumulators are read once and written once per tile. The padded
// image is never made: the output is cut into column blocks, the border ones padding their own 2-column slice, the
// interior one reading the image itself and starting its accumulators as zero registers (its fill fused into the
// tile); the output is not zero-filled as a whole. With 256-bit vectors the 14 interior columns (OWT would be 2) are
// cut to 12 (OWT 4), the right block taking the other 2.

// CHECK-LABEL: func.func @dw
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<7x32xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill {{.*}} -> tensor<1x14x16x64xf32>
// CHECK: tensor.pad {{.*}} low[0, 0, 1, 0] high[0, 0, 0, 0]
// CHECK: } : tensor<1x16x2x64xf32> to tensor<1x16x3x64xf32>
// CHECK-COUNT-9: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.for {{.*}} step %c7
// CHECK: scf.for {{.*}} step %c32
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x16x16x64xf32>, vector<9x32xf32>
// CHECK: vector.fma {{.*}}, %[[ZERO]] : vector<7x32xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<7x32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<7x32xf32>, tensor<1x1x7x32xf32>
// CHECK: tensor.pad {{.*}} low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK-COUNT-9: vector.fma {{.*}} : vector<32xf32>
// AVX2-LABEL: func.func @dw
// AVX2-COUNT-9: vector.fma {{.*}} : vector<16xf32>
// AVX2: scf.for {{.*}} step %c4
// AVX2: scf.for {{.*}} step %c16
// AVX2-COUNT-9: vector.fma {{.*}} : vector<4x16xf32>
// AVX2: tensor.pad {{.*}} high[0, 0, 1, 0]
// AVX2-COUNT-9: vector.fma {{.*}} : vector<3x16xf32>
func.func @dw(%x: tensor<1x16x16x64xf32>, %w: tensor<3x3x64x1xf32>) -> tensor<1x14x16x64xf32> {
  %0 = "tfn.depthwise_conv2d"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = false, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x16x16x64xf32>, tensor<3x3x64x1xf32>) -> tensor<1x14x16x64xf32>
  return %0 : tensor<1x14x16x64xf32>
}

// Left to LLVM's loop vectoriser: a channel multiplier above 1, channels no vector divides, a dynamic width, a
// filter of more than 64 taps (each would be unrolled).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: linalg.generic {{.*}}tfn.depthwise
// CHECK-NOT: vector.fma
func.func @left_alone(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x2xf32>, %y: tensor<1x8x8x12xf32>, %v: tensor<3x3x12x1xf32>, %z: tensor<1x8x?x32xf32>, %u: tensor<3x3x32x1xf32>, %t: tensor<1x16x16x32xf32>, %s: tensor<9x9x32x1xf32>) -> (tensor<1x6x6x8xf32>, tensor<1x6x6x12xf32>, tensor<1x6x?x32xf32>, tensor<1x8x8x32xf32>) {
  %0 = "tfn.depthwise_conv2d"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = false, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x4xf32>, tensor<3x3x4x2xf32>) -> tensor<1x6x6x8xf32>
  %1 = "tfn.depthwise_conv2d"(%y, %v) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = false, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x12xf32>, tensor<3x3x12x1xf32>) -> tensor<1x6x6x12xf32>
  %2 = "tfn.depthwise_conv2d"(%z, %u) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = false, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x?x32xf32>, tensor<3x3x32x1xf32>) -> tensor<1x6x?x32xf32>
  %3 = "tfn.depthwise_conv2d"(%t, %s) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = false, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x16x16x32xf32>, tensor<9x9x32x1xf32>) -> tensor<1x8x8x32xf32>
  return %0, %1, %2, %3 : tensor<1x6x6x8xf32>, tensor<1x6x6x12xf32>, tensor<1x6x?x32xf32>, tensor<1x8x8x32xf32>
}

// A bias added along the channels becomes the accumulators' start (the interior tile reads it instead of zeros,
// each border block broadcasts it into its output) and the add is gone; with the convolution's result also
// returned, the add stays and the accumulators start from zero.
// CHECK-LABEL: func.func @dw_bias
// CHECK-NOT: arith.addf
// CHECK: linalg.generic {{.*}} ins(%arg2 : tensor<16xf32>) outs({{.*}} : tensor<2x1x1x16xf32>)
// CHECK: vector.transfer_read %arg2{{.*}} : tensor<16xf32>, vector<8x16xf32>
// CHECK-NOT: arith.addf
// CHECK: return
func.func @dw_bias(%x: tensor<2x6x10x16xf32>, %w: tensor<3x3x16x1xf32>, %b: tensor<16xf32>) -> tensor<2x6x10x16xf32> {
  %0 = "tfn.depthwise_conv2d"(%x, %w) {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, same = true, strides = array<i64: 1, 1>} : (tensor<2x6x10x16xf32>, tensor<3x3x16x1xf32>) -> tensor<2x6x10x16xf32>
  %1 = "tfn.add"(%0, %b) : (tensor<2x6x10x16xf32>, tensor<16xf32>) -> tensor<2x6x10x16xf32>
  return %1 : tensor<2x6x10x16xf32>
}

// CHECK-LABEL: func.func @dw_bias_kept
// CHECK: vector.fma {{.*}}, %cst{{.*}} : vector<8x16xf32>
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @dw_bias_kept(%x: tensor<2x6x10x16xf32>, %w: tensor<3x3x16x1xf32>, %b: tensor<16xf32>) -> (tensor<2x6x10x16xf32>, tensor<2x6x10x16xf32>) {
  %0 = "tfn.depthwise_conv2d"(%x, %w) {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, same = true, strides = array<i64: 1, 1>} : (tensor<2x6x10x16xf32>, tensor<3x3x16x1xf32>) -> tensor<2x6x10x16xf32>
  %1 = "tfn.add"(%0, %b) : (tensor<2x6x10x16xf32>, tensor<16xf32>) -> tensor<2x6x10x16xf32>
  return %1, %0 : tensor<2x6x10x16xf32>, tensor<2x6x10x16xf32>
}
