// RUN: tfn-opt %s '--tfn-pack-matmul=vector-bits=512 vector-registers=32 workers=2 tasks-per-worker=1 min-parallel-flops=4194304 min-epilogue-elements=1' | FileCheck %s
// RUN: tfn-opt %s '--tfn-pack-matmul=vector-bits=256 vector-registers=16 workers=2 tasks-per-worker=1 min-parallel-flops=4194304' | FileCheck %s --check-prefix=AVX2
// RUN: tfn-opt %s '--tfn-pack-matmul=workers=1' | FileCheck %s --check-prefix=ONE
// The options set the register tile and the split: with 256-bit vectors and 16 registers (AVX2) the panels are
// 16 wide (two vectors) and the register tile 6 rows; when 6 does not divide M but 2 does, a product of at least
// min-parallel-flops gets 6-row tiles and one tail tile of the last M % 6 rows (a third tile list: @matmul_split's
// 60 + 4 rows), a smaller one 4-row tiles when 4 divides M (@matmul's 100 rows); A is padded in K only either way;
// with one worker nothing is split. The small products here
// are split because min-parallel-flops is lowered to 2 x 128^3 (the default, 2 x 256^3, keeps them on one thread).
// AVX2-LABEL: func.func @matmul
// AVX2: tensor.pad %{{.*}} low[0, 0] high[2, 14]
// AVX2: linalg.pack {{.*}} inner_tiles = [16] {{.*}}tfn.tiles = [array<i64: 1, 4, 16>]} : tensor<72x144xf32> -> tensor<9x72x16xf32>
// AVX2: tensor.pad %{{.*}} low[0, 0] high[0, 2]
// AVX2: tfn.kernel = "contract", tfn.tiles = [array<i64: 100, 9, 72, 0>, array<i64: 4, 1, 4, 0>]
// AVX2-LABEL: func.func @matmul_split
// AVX2: tfn.kernel = "contract", tfn.split = array<i64: 0, 8, 0, 0>, tfn.tiles = [array<i64: 60, 8, 128, 0>, array<i64: 6, 1, 4, 0>, array<i64: 60, 4>]
// ONE-NOT: tfn.split
// ONE-NOT: scf.forall
// RUN: tfn-opt %s '--tfn-pack-matmul=vector-bits=512 vector-registers=32 workers=2 min-parallel-flops=4194304' | FileCheck %s --check-prefix=TASKS
// By default a big contraction is cut into up to 4 tasks per worker, none under 2 * 256**3 flops: 2 * 512**3 flops
// in 8 tasks of two 32-wide panels each; 2 * 64 * 256 * 128 flops stay at one task per worker.
// TASKS-LABEL: func.func @matmul_split
// TASKS: tfn.split = array<i64: 0, 4, 0, 0>
// TASKS-LABEL: func.func @matmul_tasks
// TASKS: tfn.split = array<i64: 0, 2, 0, 0>
// RUN: tfn-opt %s '--tfn-pack-matmul=vector-bits=512 vector-registers=32 workers=16 min-parallel-flops=4194304' | FileCheck %s --check-prefix=WIDE
// Fewer tasks than workers when the work is small: with 16 workers, 2 * 64 * 256 * 128 flops are two tasks of 4
// panels (16 workers would not divide the 8 panels: the product would stay on one thread).
// WIDE-LABEL: func.func @matmul_split
// WIDE: tfn.split = array<i64: 0, 4, 0, 0>
// More tasks than panels: 2 * 512**3 flops in 64 tasks, the 16 panels one each times 4 blocks of 128 rows (each task
// packs its panel; rows alone would have B packed whole before the tasks).
// WIDE-LABEL: func.func @matmul_tasks
// WIDE: tfn.split = array<i64: 128, 1, 0, 0>

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
  // CHECK-SAME: tfn.kernel = "contract", tfn.tiles = [array<i64: 104, 5, 72, 0>, array<i64: 8, 1, 4, 0>]
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

// Big enough for the workers (2 * 64 * 256 * 128 flops): split by panels, 4 of the 8 per worker, and the cache tiles
// are those of one worker's part.
// CHECK-LABEL: func.func @matmul_split
func.func @matmul_split(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>) -> tensor<64x256xf32> {
  // CHECK: linalg.generic
  // CHECK-SAME: tfn.kernel = "contract", tfn.split = array<i64: 0, 4, 0, 0>, tfn.tiles = [array<i64: 64, 4, 128, 0>, array<i64: 8, 1, 4, 0>]
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<64x256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %2 : tensor<64x256xf32>
}

func.func @matmul_tasks(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<512x512xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<512x512xf32>) -> tensor<512x512xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>) outs(%1 : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %2 : tensor<512x512xf32>
}

// No more columns than one vector holds (10 <= 16 with 512-bit vectors): panels of one vector, not two.
// CHECK-LABEL: func.func @narrow
func.func @narrow(%a: tensor<128x256xf32>, %b: tensor<256x10xf32>) -> tensor<128x10xf32> {
  // CHECK: linalg.pack {{.*}} inner_tiles = [16] {{.*}} tensor<256x16xf32> -> tensor<1x256x16xf32>
  // CHECK: tfn.kernel = "contract"{{.*}}tfn.tiles = [array<i64: 128, 1, 256, 0>, array<i64: 8, 1, 4, 0>]
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<128x10xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<128x10xf32>) -> tensor<128x10xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x10xf32>) outs(%1 : tensor<128x10xf32>) -> tensor<128x10xf32>
  return %2 : tensor<128x10xf32>
}

// A convolution, one output row (n, oh) at a time on the workers: per row a fill, then per filter tap a
// contraction of 32 output pixels (4 register tiles of 8) and one of the 6 left over (ow = 38), each reading a
// slice of input row oh + kh (the input is not padded: 20 channels are a multiple of KR), accumulating into the row.
// The 36 filters: 32 in one 32-wide panel, a view of its columns of the row, the other 4 in an 8-wide panel of their
// own (not a 64-wide one) computed into a scratch row, whose 4 real columns go into the row: the result has 36
// columns and is not sliced out of a wider one.
// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<1x30x40x20xf32>, %w: tensor<3x3x20x36xf32>) -> tensor<1x28x38x36xf32> {
  // CHECK-NOT: tensor.pad %arg0
  // CHECK: linalg.pack {{.*}} -> tensor<3x3x1x20x32xf32>
  // CHECK: tensor.pad {{.*}} high[0, 0, 0, 4]
  // CHECK: linalg.pack {{.*}} inner_tiles = [8] {{.*}} -> tensor<3x3x1x20x8xf32>
  // CHECK: scf.forall (%[[N:.*]], %[[OH:.*]]) in (1, 28) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x28x38x36xf32>)
  // CHECK: %[[ROW:.*]] = tensor.extract_slice %[[OUT]][%[[N]], %[[OH]], 0, 0] [1, 1, 38, 36] {{.*}} to tensor<38x36xf32>
  // CHECK: %[[MAIN:.*]] = tensor.extract_slice %[[ROW]][0, 0] [38, 32]
  // CHECK: %[[VIEW:.*]] = tensor.expand_shape %[[MAIN]] {{.*}} into tensor<38x1x32xf32>
  // CHECK: linalg.fill {tfn.kernel = "fill", tfn.tiles = [array<i64: 2, 1, 0>]} {{.*}} outs(%[[VIEW]] : tensor<38x1x32xf32>)
  // CHECK: tensor.extract_slice %arg0[%[[N]], %[[OH]], 0, 0] [1, 1, 32, 20] [1, 1, 1, 1] : tensor<1x30x40x20xf32> to tensor<32x20xf32>
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x20xf32>, tensor<1x20x32xf32>) outs(%{{.*}} : tensor<32x1x32xf32>)
  // CHECK-SAME: tfn.tiles = [array<i64: 32, 1, 20, 0>, array<i64: 8, 1, 4, 0>]
  // CHECK: tensor.extract_slice %arg0[%[[N]], %[[OH]], 32, 0] [1, 1, 6, 20] [1, 1, 1, 1] : tensor<1x30x40x20xf32> to tensor<6x20xf32>
  // CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<6x1x32xf32>)
  // CHECK-SAME: tfn.tiles = [array<i64: 6, 1, 20, 0>, array<i64: 6, 1, 4, 0>]
  // CHECK-COUNT-16: tfn.kernel = "contract"
  // CHECK: tensor.insert_slice {{.*}} into %[[ROW]][0, 0] [38, 32]
  // CHECK: %[[SCRATCH:.*]] = tensor.empty() : tensor<38x1x8xf32>
  // CHECK: outs(%[[SCRATCH]] : tensor<38x1x8xf32>)
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x20xf32>, tensor<1x20x8xf32>) outs(%{{.*}} : tensor<32x1x8xf32>)
  // CHECK-SAME: tfn.tiles = [array<i64: 32, 1, 20, 0>, array<i64: 8, 1, 4, 0>]
  // CHECK-COUNT-17: tfn.kernel = "contract"
  // CHECK-NOT: tfn.kernel = "contract"
  // CHECK: %[[TAIL:.*]] = tensor.extract_slice %{{.*}}[0, 0] [38, 4] [1, 1] : tensor<38x8xf32> to tensor<38x4xf32>
  // CHECK: tensor.insert_slice %[[TAIL]] into %{{.*}}[0, 32] [38, 4]
  // CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[N]], %[[OH]], 0, 0] [1, 1, 38, 36]
  // CHECK-NOT: tensor.extract_slice
  // CHECK: return
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<1x28x38x36xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x30x40x20xf32>, tensor<3x3x20x36xf32>) outs(%1 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  return %2 : tensor<1x28x38x36xf32>
}

// A bias added along the filters becomes the accumulators' start: its 32 + 4 entries (the 4 padded to the 8-wide
// tail panel) broadcast into each panel of the row in place of the zero fill, and the add is dropped.
// CHECK-LABEL: func.func @conv_bias
func.func @conv_bias(%x: tensor<1x30x40x20xf32>, %w: tensor<3x3x20x36xf32>, %b: tensor<36xf32>) -> tensor<1x28x38x36xf32> {
  // CHECK: %[[B0:.*]] = tensor.extract_slice %arg2[0] [32] [1] : tensor<36xf32> to tensor<32xf32>
  // CHECK: %[[P0:.*]] = tensor.expand_shape %[[B0]] {{.*}} into tensor<1x32xf32>
  // CHECK: %[[B1:.*]] = tensor.extract_slice %arg2[32] [4] [1] : tensor<36xf32> to tensor<4xf32>
  // CHECK: %[[PAD:.*]] = tensor.pad %[[B1]] low[0] high[4]
  // CHECK: %[[P1:.*]] = tensor.expand_shape %[[PAD]] {{.*}} into tensor<1x8xf32>
  // CHECK: %[[R:.*]] = scf.forall
  // CHECK-NOT: linalg.fill
  // CHECK: linalg.generic {{.*}} ins(%[[P0]] : tensor<1x32xf32>) outs(%{{.*}} : tensor<38x1x32xf32>) attrs = {tfn.kernel = "fill", tfn.tiles = [array<i64: 2, 1, 0>]}
  // CHECK: linalg.generic {{.*}} ins(%[[P1]] : tensor<1x8xf32>) outs(%{{.*}} : tensor<38x1x8xf32>) attrs = {tfn.kernel = "fill"
  // CHECK: tensor.parallel_insert_slice
  // CHECK-NOT: arith.addf
  // CHECK: return %[[R]]
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<1x28x38x36xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x30x40x20xf32>, tensor<3x3x20x36xf32>) outs(%1 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %b : tensor<1x28x38x36xf32>, tensor<36xf32>) outs(%0 : tensor<1x28x38x36xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    linalg.yield %4 : f32
  } -> tensor<1x28x38x36xf32>
  return %3 : tensor<1x28x38x36xf32>
}

// When the convolution's result is used besides the bias add, the accumulators start at zero and the add stays.
// CHECK-LABEL: func.func @conv_bias_kept
func.func @conv_bias_kept(%x: tensor<1x30x40x20xf32>, %w: tensor<3x3x20x36xf32>, %b: tensor<36xf32>) -> (tensor<1x28x38x36xf32>, tensor<1x28x38x36xf32>) {
  // CHECK: %[[C:.*]] = scf.forall
  // CHECK: linalg.fill {tfn.kernel = "fill"
  // CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[C]], %arg2
  // CHECK: arith.addf
  // CHECK: return %[[S]], %[[C]]
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<1x28x38x36xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x30x40x20xf32>, tensor<3x3x20x36xf32>) outs(%1 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %b : tensor<1x28x38x36xf32>, tensor<36xf32>) outs(%0 : tensor<1x28x38x36xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    linalg.yield %4 : f32
  } -> tensor<1x28x38x36xf32>
  return %3, %2 : tensor<1x28x38x36xf32>, tensor<1x28x38x36xf32>
}

// A strided, dilated convolution too small for the workers: its rows are an scf.for nest; input rows oh * 2 + 2 kh,
// columns 2 ow + 2 kw (stride 2 in the slice); 7 channels padded to 8.
// CHECK-LABEL: func.func @conv_strided
func.func @conv_strided(%x: tensor<2x21x30x7xf32>, %w: tensor<2x3x7x40xf32>) -> tensor<2x10x13x40xf32> {
  // CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 0, 1]
  // CHECK-NOT: scf.forall
  // CHECK: scf.for %[[N:.*]] = {{.*}} iter_args
  // CHECK: scf.for %[[OH:.*]] = {{.*}} iter_args
  // CHECK: %[[R:.*]] = arith.muli %[[OH]], %c2
  // CHECK: tensor.extract_slice %{{.*}}[%[[N]], %[[R]], 0, 0] [1, 1, 8, 8] [1, 1, 2, 1] : tensor<2x21x30x8xf32> to tensor<8x8xf32>
  // CHECK: tensor.extract_slice %{{.*}}[%[[N]], %[[R]], 16, 0] [1, 1, 5, 8] [1, 1, 2, 1] : tensor<2x21x30x8xf32> to tensor<5x8xf32>
  // CHECK: tensor.extract_slice %{{.*}}[%[[N]], %[[R]], 2, 0] [1, 1, 8, 8] [1, 1, 2, 1]
  // CHECK: tensor.extract_slice %{{.*}}[%[[N]], %[[R]], 4, 0] [1, 1, 8, 8] [1, 1, 2, 1]
  // CHECK: %[[R1:.*]] = arith.addi %{{.*}}, %c2
  // CHECK: tensor.extract_slice %{{.*}}[%[[N]], %[[R1]], 0, 0] [1, 1, 8, 8] [1, 1, 2, 1]
  // CHECK: scf.yield
  // CHECK: scf.yield
  // CHECK-NOT: scf.forall
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<2x10x13x40xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x10x13x40xf32>) -> tensor<2x10x13x40xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x21x30x7xf32>, tensor<2x3x7x40xf32>) outs(%1 : tensor<2x10x13x40xf32>) -> tensor<2x10x13x40xf32>
  return %2 : tensor<2x10x13x40xf32>
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

// A filter with more than 49 taps stays on the generic path: unrolled tap by tap it would make an IR too big to
// bufferize in reasonable time.
// CHECK-LABEL: func.func @conv_huge_filter
func.func @conv_huge_filter(%x: tensor<1x64x64x4xf32>, %w: tensor<11x11x4x8xf32>) -> tensor<1x54x54x8xf32> {
  // CHECK-NOT: linalg.pack
  // CHECK: linalg.conv_2d_nhwc_hwcf
  // CHECK-NOT: tfn.kernel
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<1x54x54x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x54x54x8xf32>) -> tensor<1x54x54x8xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x64x64x4xf32>, tensor<11x11x4x8xf32>) outs(%1 : tensor<1x54x54x8xf32>) -> tensor<1x54x54x8xf32>
  return %2 : tensor<1x54x54x8xf32>
}

// Transposed operands (a matmul with transpose_a / transpose_b lowers to linalg.transpose + linalg.matmul) are read
// as stored: B^T [N, K] is packed directly into [N / NR, K, NR] panels (inner_dims_pos = [0]) and A^T [K, M] is read
// by the contraction through a (k, m) map; neither transposed copy is left.
// CHECK-LABEL: func.func @transposed_operands
// CHECK-NOT: linalg.transpose
// CHECK: linalg.pack %{{.*}} outer_dims_perm = [0, 1] inner_dims_pos = [0] inner_tiles = [32] {{.*}}tfn.kernel = "pack"{{.*}} : tensor<256x128xf32> -> tensor<8x128x32xf32>
// CHECK: linalg.generic {{.*}} ins(%arg0, %pack : tensor<128x64xf32>, tensor<8x128x32xf32>) {{.*}}tfn.kernel = "contract"
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @transposed_operands(%at: tensor<128x64xf32>, %bt: tensor<256x128xf32>) -> tensor<64x256xf32> {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x128xf32>
  %a = linalg.transpose ins(%at : tensor<128x64xf32>) outs(%e0 : tensor<64x128xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<128x256xf32>
  %b = linalg.transpose ins(%bt : tensor<256x128xf32>) outs(%e1 : tensor<128x256xf32>) permutation = [1, 0]
  %0 = tensor.empty() : tensor<64x256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %2 : tensor<64x256xf32>
}

// A matmul beside a reshape: upstream linalg-fuse-elementwise-ops folds the reshape's dims into the loops, making a
// linalg.generic (here M = 8 x 32 loops). It is recognised as a contraction: A collapsed to [256, 64], packed
// like a matmul, and the [256, 128] product expanded back to C's shape.
// CHECK-LABEL: func.func @matmul_beside_reshape
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<8x32x64xf32> into tensor<256x64xf32>
// CHECK: linalg.pack %arg1 {{.*}}tfn.kernel = "pack"
// CHECK: tfn.kernel = "contract"
// CHECK: tensor.expand_shape {{.*}} : tensor<256x128xf32> into tensor<8x32x128xf32>
func.func @matmul_beside_reshape(%a: tensor<8x32x64xf32>, %b: tensor<64x128xf32>) -> tensor<8x32x128xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<8x32x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x32x128xf32>) -> tensor<8x32x128xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x32x64xf32>, tensor<64x128xf32>) outs(%1 : tensor<8x32x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32x128xf32>
  return %2 : tensor<8x32x128xf32>
}

// The filter gradient's shape: g^T (a transpose of an NHWC tensor, K = n y x loops) times the input patches
// (K = the same loops): A [16, 8, 24, 24] collapsed to [16, 4608], B [8, 24, 24, 72] to [4608, 72].
// CHECK-LABEL: func.func @reduction_over_several_loops
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1, 2, 3]] : tensor<16x8x24x24xf32> into tensor<16x4608xf32>
// CHECK: tensor.collapse_shape %arg1 {{\[}}[0, 1, 2], [3]] : tensor<8x24x24x72xf32> into tensor<4608x72xf32>
// CHECK: tfn.kernel = "contract"
func.func @reduction_over_several_loops(%a: tensor<16x8x24x24xf32>, %b: tensor<8x24x24x72xf32>) -> tensor<16x72xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<16x72xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x72xf32>) -> tensor<16x72xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4, d1)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : tensor<16x8x24x24xf32>, tensor<8x24x24x72xf32>) outs(%1 : tensor<16x72xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16x72xf32>
  return %2 : tensor<16x72xf32>
}

// C stored [N, M] (C^T = B^T A^T): the input holding C's leading loops becomes A. Here that input (%b, [64, 96])
// holds K first, so it is read transposed; %a [200, 64] holds N then K, so it is padded to 224 rows and packed as a transposed B.
// CHECK-LABEL: func.func @output_transposed
// CHECK: tensor.pad %arg0 low[0, 0] high[24, 0]
// CHECK: linalg.pack {{.*}}inner_dims_pos = [0]{{.*}} : tensor<224x64xf32> -> tensor<7x64x32xf32>
// CHECK: linalg.generic {{.*}} ins(%arg1, %pack : tensor<64x96xf32>, tensor<7x64x32xf32>) {{.*}}tfn.kernel = "contract"
func.func @output_transposed(%a: tensor<200x64xf32>, %b: tensor<64x96xf32>) -> tensor<96x200xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<96x200xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<96x200xf32>) -> tensor<96x200xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d1, d0)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<200x64xf32>, tensor<64x96xf32>) outs(%1 : tensor<96x200xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x200xf32>
  return %2 : tensor<96x200xf32>
}

// Not contractions this pass knows: a batch loop (in all three operands), a body that is not a mul-add, and a
// K run split around M in A (no reshape makes it [M, K]) stay as they are.
// CHECK-LABEL: func.func @not_recognised
// CHECK-NOT: tfn.kernel
// CHECK: return
func.func @not_recognised(%a: tensor<4x128x128xf32>, %b: tensor<4x128x128xf32>, %c: tensor<8x128x16xf32>,
                          %d: tensor<8x16x128xf32>) -> (tensor<4x128x128xf32>, tensor<4x128x128xf32>, tensor<128x128xf32>) {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<4x128x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x128x128xf32>, tensor<4x128x128xf32>) outs(%1 : tensor<4x128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x128x128xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x128x128xf32>, tensor<4x128x128xf32>) outs(%1 : tensor<4x128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.maximumf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x128x128xf32>
  %4 = tensor.empty() : tensor<128x128xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<128x128xf32>) -> tensor<128x128xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%c, %d : tensor<8x128x16xf32>, tensor<8x16x128xf32>) outs(%5 : tensor<128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<128x128xf32>
  return %2, %3, %6 : tensor<4x128x128xf32>, tensor<4x128x128xf32>, tensor<128x128xf32>
}

// 3 panels of B do not split in two: the rows are cut among the workers, in 4-row tiles (no 6-row tiles with a tail)
// AVX2-LABEL: func.func @matmul_rows
// AVX2: tfn.kernel = "contract", tfn.split = array<i64: 64, 0, 0, 0>, tfn.tiles = [array<i64: 64, 3, 512, 0>, array<i64: 4, 1, 4, 0>]}
func.func @matmul_rows(%a: tensor<128x512xf32>, %b: tensor<512x48xf32>) -> tensor<128x48xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<128x48xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<128x48xf32>) -> tensor<128x48xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<128x512xf32>, tensor<512x48xf32>) outs(%1 : tensor<128x48xf32>) -> tensor<128x48xf32>
  return %2 : tensor<128x48xf32>
}

// RUN: tfn-opt %s --tfn-pack-matmul | FileCheck %s --check-prefix=SMALL
// By default only a result of at least 2^16 elements gets its consumer as an epilogue (min-epilogue-elements).
// SMALL-LABEL: func.func @matmul_epilogue(
// SMALL-NOT: "epilogue"
// SMALL: return

// A matmul whose only use is an elementwise generic (bias add + ReLU) that reads it through the identity map and
// a bias as a row: the generic is rebuilt on the packed layout [M, N / NR, NR] (the bias expanded to [N / NR, NR])
// and tagged "epilogue" with the contraction's tiles, for tfn-vectorize-kernels to compute in the register tiles.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK: %[[C:.*]] = linalg.generic {{.*}}tfn.kernel = "contract", tfn.tiles = [array<i64: 128, 2, 64, 0>, array<i64: 8, 1, 4, 0>]
// CHECK: %[[B:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 32] : tensor<64xf32> into tensor<2x32xf32>
// CHECK: %[[E:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[C]], %[[B]] : tensor<128x2x32xf32>, tensor<2x32xf32>)
// CHECK-SAME: tfn.kernel = "epilogue", tfn.tiles = [array<i64: 128, 2, 64, 0>, array<i64: 8, 1, 4, 0>]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: tensor.collapse_shape %[[E]] {{.*}} into tensor<128x64xf32>
func.func @matmul_epilogue(%a: tensor<128x64xf32>, %b: tensor<64x64xf32>, %bias: tensor<64xf32>) -> tensor<128x64xf32> {
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

// An SGD update of w by the gradient A^T B (A^T read as stored), big enough for the workers: the worker split moves
// from the contraction to the epilogue (without the k dim), whose other input w is expanded to the packed layout.
// CHECK-LABEL: func.func @matmul_epilogue_split
// CHECK: %[[C:.*]] = linalg.generic {{.*}}tfn.kernel = "contract", tfn.tiles
// CHECK-NOT: tfn.split
// CHECK: %[[W:.*]] = tensor.expand_shape %arg2 {{\[\[}}0], [1, 2]] output_shape [256, 4, 32] : tensor<256x128xf32> into tensor<256x4x32xf32>
// CHECK: linalg.generic {{.*}}ins(%[[C]], %[[W]] : tensor<256x4x32xf32>, tensor<256x4x32xf32>)
// CHECK-SAME: tfn.kernel = "epilogue", tfn.split = array<i64: 0, 2, 0>
// CHECK: arith.mulf
// CHECK: arith.subf
func.func @matmul_epilogue_split(%a: tensor<128x256xf32>, %b: tensor<128x128xf32>, %w: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %cst = arith.constant 0.0 : f32
  %lr = arith.constant 0.01 : f32
  %0 = tensor.empty() : tensor<256x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<256x128xf32>) -> tensor<256x128xf32>
  %t0 = tensor.empty() : tensor<256x128xf32>
  %at = linalg.transpose ins(%a : tensor<128x256xf32>) outs(%t0 : tensor<256x128xf32>) permutation = [1, 0]
  %2 = linalg.matmul ins(%at, %b : tensor<256x128xf32>, tensor<128x128xf32>) outs(%1 : tensor<256x128xf32>) -> tensor<256x128xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w, %2 : tensor<256x128xf32>, tensor<256x128xf32>) outs(%0 : tensor<256x128xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.mulf %in_0, %lr : f32
    %5 = arith.subf %in, %4 : f32
    linalg.yield %5 : f32
  } -> tensor<256x128xf32>
  return %3 : tensor<256x128xf32>
}

// Not an epilogue: C is padded (100 x 130 in 104 x 160), or the product has a second use; the consumer stays.
// CHECK-LABEL: func.func @matmul_epilogue_not
// CHECK-NOT: "epilogue"
// CHECK: return
func.func @matmul_epilogue_not(%a: tensor<100x70xf32>, %b: tensor<70x130xf32>, %c: tensor<128x64xf32>, %d: tensor<64x64xf32>) -> (tensor<100x130xf32>, tensor<128x64xf32>, tensor<128x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<100x130xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<100x130xf32>) -> tensor<100x130xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<100x70xf32>, tensor<70x130xf32>) outs(%1 : tensor<100x130xf32>) -> tensor<100x130xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<100x130xf32>) outs(%0 : tensor<100x130xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.maximumf %in, %cst : f32
    linalg.yield %4 : f32
  } -> tensor<100x130xf32>
  %5 = tensor.empty() : tensor<128x64xf32>
  %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %7 = linalg.matmul ins(%c, %d : tensor<128x64xf32>, tensor<64x64xf32>) outs(%6 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<128x64xf32>) outs(%5 : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.maximumf %in, %cst : f32
    linalg.yield %9 : f32
  } -> tensor<128x64xf32>
  return %3, %7, %8 : tensor<100x130xf32>, tensor<128x64xf32>, tensor<128x64xf32>
}
