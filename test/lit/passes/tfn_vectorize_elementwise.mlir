// RUN: tfn-opt %s '--tfn-vectorize-elementwise=lanes=64 vector-bits=512' | FileCheck %s
// RUN: tfn-opt %s '--tfn-vectorize-elementwise=lanes=32 vector-bits=256' | FileCheck %s --check-prefix=LANES32
// RUN: tfn-opt %s -p 'builtin.module(tfn-vectorize-elementwise{lanes=64 vector-bits=512}, canonicalize)' | FileCheck %s --check-prefix=CANON
// LANES32-LABEL: func.func @heavy
// LANES32: scf.for %{{.*}} = %c0 to %c992 step %c32
// LANES32: math.exp %{{.*}} : vector<32xf32>
// LANES32: scf.for %{{.*}} = %c992 to %c1000 step %c32
// LANES32: scf.for %{{.*}} step %c8
// LANES32: math.exp %{{.*}} : vector<8xf32>

// A body with exp and tanh: a loop over the 15 full 64-element tiles, then the partial last tile (1000 = 15 * 64 +
// 40) peeled off into a loop of its own, in steps of one register (16 lanes of 512 bits), the only reads and writes
// that are masked.
// CHECK-LABEL: func.func @heavy
// CHECK: scf.for %{{.*}} = %c0 to %c960 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1000xf32>)
// CHECK: math.exp %{{.*}} : vector<64xf32>
// CHECK: math.tanh %{{.*}} : vector<64xf32>
// CHECK: scf.for %{{.*}} = %c960 to %c1000 step %c64
// CHECK: scf.for %{{.*}} step %c16
// CHECK: %[[M:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: vector.transfer_read %{{.*}}, %[[M]] {in_bounds = [true]} : tensor<?xf32>, vector<16xf32>
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: math.tanh %{{.*}} : vector<16xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[M]] {in_bounds = [true]} : vector<16xf32>, tensor<?xf32>
// CHECK-NOT: linalg.generic
// Canonicalised, the full tiles are static 64-element slices read and written without a mask, the last tile is
// 16-element steps, masked.
// CANON-LABEL: func.func @heavy
// CANON: scf.for %{{.*}} = %c0 to %c960 step %c64
// CANON-NOT: mask
// CANON: vector.transfer_read %{{.*}}[%c0], %{{.*}} {in_bounds = [true]} : tensor<64xf32>, vector<64xf32>
// CANON-NOT: mask
// CANON: vector.transfer_write %{{.*}}, %{{.*}}[%c0] {in_bounds = [true]} : vector<64xf32>, tensor<64xf32>
// CANON: scf.yield
// CANON: scf.for %{{.*}} = %c0 to %c40 step %c16
// CANON: %[[M:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CANON: vector.transfer_read %{{.*}}, %[[M]] {in_bounds = [true]} : tensor<?xf32>, vector<16xf32>
// CANON: vector.transfer_write %{{.*}}, %[[M]] {in_bounds = [true]} : vector<16xf32>, tensor<?xf32>
func.func @heavy(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %e = tensor.empty() : tensor<1000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<1000xf32>) outs(%e : tensor<1000xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.exp %in : f32
      %b = math.tanh %a : f32
      linalg.yield %b : f32
  } -> tensor<1000xf32>
  return %r : tensor<1000xf32>
}

// Two loops: rows one at a time, 64 columns per vector (three full tiles, then the last 8 columns masked); the
// broadcast row operand is read per tile too.
// CHECK-LABEL: func.func @broadcast_rows
// CHECK: scf.for
// CHECK: scf.for {{.*}} = %c0 to %c192 step %c64
// CHECK: vector.transfer_read {{.*}} : tensor<1x?xf32>, vector<1x64xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<?xf32>, vector<1x64xf32>
// CHECK: math.exp %{{.*}} : vector<1x64xf32>
// CHECK: scf.for {{.*}} = %c192 to %c200 step %c64
// CHECK: scf.for {{.*}} step %c16
// CHECK: vector.create_mask %{{.*}}, %{{.*}} : vector<1x16xi1>
// CHECK: math.exp %{{.*}} : vector<1x16xf32>
func.func @broadcast_rows(%x: tensor<?x200xf32>, %b: tensor<200xf32>, %init: tensor<?x200xf32>) -> tensor<?x200xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<?x200xf32>, tensor<200xf32>) outs(%init : tensor<?x200xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %s = arith.addf %in, %bias : f32
      %e = math.exp %s : f32
      linalg.yield %e : f32
  } -> tensor<?x200xf32>
  return %r : tensor<?x200xf32>
}

// Left to LLVM's vectoriser: a cheap body (memory-bound), an innermost loop shorter than 64, a transposed read.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NOT: vector.
// CHECK: return
func.func @left_alone(%x: tensor<1000xf32>, %y: tensor<100x8xf32>, %z: tensor<100x100xf32>)
    -> (tensor<1000xf32>, tensor<100x8xf32>, tensor<100x100xf32>) {
  %e = tensor.empty() : tensor<1000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<1000xf32>) outs(%e : tensor<1000xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %in, %in : f32
      linalg.yield %a : f32
  } -> tensor<1000xf32>
  %e2 = tensor.empty() : tensor<100x8xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<100x8xf32>) outs(%e2 : tensor<100x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.exp %in : f32
      linalg.yield %a : f32
  } -> tensor<100x8xf32>
  %e3 = tensor.empty() : tensor<100x100xf32>
  %r3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<100x100xf32>) outs(%e3 : tensor<100x100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.exp %in : f32
      linalg.yield %a : f32
  } -> tensor<100x100xf32>
  return %r, %r2, %r3 : tensor<1000xf32>, tensor<100x8xf32>, tensor<100x100xf32>
}

// A long body without transcendental math (16 ops): vectors of twice the lanes (eight registers' worth, to hide the
// latency of its dependent ops), no peeled loop when the extent is a multiple of them; an innermost loop shorter than
// twice the lanes keeps the lanes.
// CHECK-LABEL: func.func @long_arith
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c128
// CHECK: arith.mulf %{{.*}} : vector<128xf32>
// CHECK-NOT: scf.for
// CHECK: return
func.func @long_arith(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a0 = arith.addf %in, %in : f32
      %a1 = arith.mulf %a0, %a0 : f32
      %a2 = arith.addf %a1, %in : f32
      %a3 = arith.mulf %a2, %a2 : f32
      %a4 = arith.addf %a3, %in : f32
      %a5 = arith.mulf %a4, %a4 : f32
      %a6 = arith.addf %a5, %in : f32
      %a7 = arith.mulf %a6, %a6 : f32
      %a8 = arith.addf %a7, %in : f32
      %a9 = arith.mulf %a8, %a8 : f32
      %a10 = arith.addf %a9, %in : f32
      %a11 = arith.mulf %a10, %a10 : f32
      %a12 = arith.addf %a11, %in : f32
      %a13 = arith.mulf %a12, %a12 : f32
      %a14 = arith.addf %a13, %in : f32
      %a15 = arith.mulf %a14, %a14 : f32
      linalg.yield %a15 : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// CHECK-LABEL: func.func @long_arith_short
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c64
// CHECK: arith.mulf %{{.*}} : vector<64xf32>
// CHECK: scf.for %{{.*}} = %c64 to %c100 step %c64
// CHECK: arith.mulf %{{.*}} : vector<16xf32>
func.func @long_arith_short(%x: tensor<100xf32>) -> tensor<100xf32> {
  %e = tensor.empty() : tensor<100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<100xf32>) outs(%e : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a0 = arith.addf %in, %in : f32
      %a1 = arith.mulf %a0, %a0 : f32
      %a2 = arith.addf %a1, %in : f32
      %a3 = arith.mulf %a2, %a2 : f32
      %a4 = arith.addf %a3, %in : f32
      %a5 = arith.mulf %a4, %a4 : f32
      %a6 = arith.addf %a5, %in : f32
      %a7 = arith.mulf %a6, %a6 : f32
      %a8 = arith.addf %a7, %in : f32
      %a9 = arith.mulf %a8, %a8 : f32
      %a10 = arith.addf %a9, %in : f32
      %a11 = arith.mulf %a10, %a10 : f32
      %a12 = arith.addf %a11, %in : f32
      %a13 = arith.mulf %a12, %a12 : f32
      %a14 = arith.addf %a13, %in : f32
      %a15 = arith.mulf %a14, %a14 : f32
      linalg.yield %a15 : f32
  } -> tensor<100xf32>
  return %r : tensor<100xf32>
}
