// RUN: tfn-opt %s --split-input-file '--tfn-pack-matmul=vector-bits=512 vector-registers=32 workers=2 min-parallel-flops=4194304 min-epilogue-elements=1' --tfn-vectorize-kernels | FileCheck %s

// The tagged pack, fill and contraction are tiled into static tiles and vectorised; no linalg op and no tag is
// left, the register tiles loop over panels, then 8-row blocks, then k (GotoBLAS order: one panel of B stays in L1),
// the 8x32 accumulator stays in registers (iter_args) across the k loop, and no vector is larger than a tile.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.pack
// CHECK-NOT: tfn.kernel
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<72x5x32xf32>, vector<4x32xf32>
// CHECK: tensor.pad
// CHECK: scf.for {{.*}} to %c5 step %c1
// CHECK-NEXT: scf.for {{.*}} to %c104 step %c8
// CHECK-NEXT: vector.transfer_read
// CHECK-NEXT: scf.for {{.*}} to %c72 step %c4 {{.*}} -> (tensor<104x5x32xf32>, vector<8x1x32xf32>)
// CHECK: vector.contract
// CHECK-NOT: vector<{{[0-9][0-9][0-9]+}}
// CHECK: return
// RUN: tfn-opt %s --split-input-file '--tfn-pack-matmul=vector-bits=256 vector-registers=16 workers=1 min-parallel-flops=1000000' --tfn-vectorize-kernels | FileCheck %s --check-prefix=AVX2
// With 16 registers (AVX2) a product of at least min-parallel-flops with M = 100 is split along its rows: rows
// 0-95 in 6x16 register tiles, rows 96-99 in one 4x16 tile, each accumulator tile kept in registers across its k
// loop; A is not padded in M, nor C sliced.
// AVX2-LABEL: func.func @matmul
// AVX2: tensor.pad %{{.*}} low[0, 0] high[0, 2]
// AVX2: tensor.extract_slice %{{.*}}[0, 0, 0] [96, 9, 16] [1, 1, 1] : tensor<100x9x16xf32> to tensor<96x9x16xf32>
// AVX2: scf.for {{.*}} to %c96 step %c6
// AVX2: scf.for {{.*}} to %c72 step %c4 {{.*}} -> (tensor<96x9x16xf32>, vector<6x1x16xf32>)
// AVX2: vector.contract {{.*}} : vector<6x4xf32>, vector<1x4x16xf32> into vector<6x1x16xf32>
// AVX2: tensor.extract_slice %{{.*}}[96, 0, 0] [4, 9, 16] [1, 1, 1] : tensor<100x9x16xf32> to tensor<4x9x16xf32>
// AVX2: scf.for {{.*}} to %c72 step %c4 {{.*}} -> (tensor<4x9x16xf32>, vector<4x1x16xf32>)
// AVX2: vector.contract {{.*}} : vector<4x4xf32>, vector<1x4x16xf32> into vector<4x1x16xf32>
// AVX2: return
func.func @matmul(%a: tensor<100x70xf32>, %b: tensor<70x130xf32>) -> tensor<100x130xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<100x130xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<100x130xf32>) -> tensor<100x130xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<100x70xf32>, tensor<70x130xf32>) outs(%1 : tensor<100x130xf32>) -> tensor<100x130xf32>
  return %2 : tensor<100x130xf32>
}

// A convolution's contractions already run inside its row forall: they are vectorised but not split again.
// CHECK-LABEL: func.func @conv
// CHECK: scf.forall
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.generic
// CHECK: vector.contract
// CHECK: return
func.func @conv(%x: tensor<1x30x40x20xf32>, %w: tensor<3x3x20x36xf32>) -> tensor<1x28x38x36xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<1x28x38x36xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x30x40x20xf32>, tensor<3x3x20x36xf32>) outs(%1 : tensor<1x28x38x36xf32>) -> tensor<1x28x38x36xf32>
  return %2 : tensor<1x28x38x36xf32>
}

// A big matmul is split over the workers by panels (tfn.split): each forall iteration packs its half of B, fills its
// half of the accumulator and computes it; nothing runs before the forall.
// CHECK-LABEL: func.func @matmul_split
// CHECK-NOT: vector.transfer_write
// CHECK: scf.forall (%[[W:.*]]) in (2) shared_outs(%{{.*}}) -> (tensor<64x8x32xf32>)
// CHECK: vector.transfer_read {{.*}} : tensor<128x4x32xf32>, vector<4x32xf32>
// CHECK: vector.transfer_write %cst, {{.*}} : vector<8x1x32xf32>, tensor<64x4x32xf32>
// CHECK: vector.contract
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice {{.*}} : tensor<64x4x32xf32> into tensor<64x8x32xf32>
func.func @matmul_split(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>) -> tensor<64x256xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<64x256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %2 : tensor<64x256xf32>
}

// An inner dimension of 4 or less (K padded to one KR = 4 register step: one k iteration) is vectorised like any
// other: the k loop is not tiled at the register level, so no handle to a folded loop is left to hoist.
// CHECK-LABEL: func.func @matmul_k3
func.func @matmul_k3(%a: tensor<600x3xf32>, %b: tensor<3x600xf32>) -> tensor<600x600xf32> {
  // CHECK-NOT: linalg.generic
  // CHECK: scf.for
  // CHECK: vector.contract
  // CHECK-NOT: tfn.kernel
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<600x600xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<600x600xf32>) -> tensor<600x600xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<600x3xf32>, tensor<3x600xf32>) outs(%1 : tensor<600x600xf32>) -> tensor<600x600xf32>
  return %2 : tensor<600x600xf32>
}

// -----

// An epilogue (tfn-pack-matmul's fused_epilogue: bias add + ReLU) is tiled as the contraction would be, and the
// contraction and its fill are fused into its register tiles: the accumulators start as zero vectors, stay in
// registers across the k loop, and the bias add and ReLU run on them before the one write; no fill, no stored product.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x1x32xf32>
// CHECK-NOT: linalg.
// CHECK: scf.for {{.*}} to %c2 step %c1 {{.*}} -> (tensor<128x2x32xf32>)
// CHECK-NEXT: scf.for {{.*}} to %c128 step %c8
// CHECK-NEXT: %[[ACC:.*]] = scf.for {{.*}} to %c64 step %c4 iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x1x32xf32>)
// CHECK: vector.contract
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: vector.transfer_read {{.*}} : tensor<2x32xf32>, vector<32xf32>
// CHECK-NEXT: %[[B:.*]] = vector.broadcast
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[B]] : vector<8x1x32xf32>
// CHECK-NEXT: %[[RELU:.*]] = arith.maximumf %[[SUM]], %[[ZERO]]
// CHECK-NEXT: vector.transfer_write %[[RELU]]
// CHECK-NOT: linalg.
// CHECK: return
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

// Split over the workers: the forall is the epilogue's; the pack of the panels each worker reads is fused into it
// too, and each 8 x 32 tile of the SGD update reads w once and is written once.
// CHECK-LABEL: func.func @matmul_epilogue_split
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: vector.transfer_read {{.*}}permutation_map
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %cst_0) -> (vector<8x1x32xf32>)
// CHECK: vector.contract {{.*}} : vector<4x8xf32>, vector<1x4x32xf32> into vector<8x1x32xf32>
// CHECK: %[[W:.*]] = vector.transfer_read %expanded{{.*}} : tensor<256x4x32xf32>, vector<8x1x32xf32>
// CHECK-NEXT: %[[D:.*]] = arith.mulf
// CHECK-NEXT: arith.subf %[[W]], %[[D]]
// CHECK-NEXT: vector.transfer_write
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.
// CHECK: return
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
