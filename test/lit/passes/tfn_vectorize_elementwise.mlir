// RUN: tfn-opt %s --tfn-vectorize-elementwise=lanes=64 | FileCheck %s
// RUN: tfn-opt %s --tfn-vectorize-elementwise=lanes=32 | FileCheck %s --check-prefix=LANES32
// LANES32-LABEL: func.func @heavy
// LANES32: scf.for %{{.*}} = %c0 to %c1000 step %c32
// LANES32: math.exp %{{.*}} : vector<32xf32>

// A body with exp and tanh: a loop over 64-element tiles, each one masked vector read, the body on
// vector<64xf32> and one masked write (1000 = 15 * 64 + 40: the mask covers the partial last tile).
// CHECK-LABEL: func.func @heavy
// CHECK: scf.for %{{.*}} = %c0 to %c1000 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1000xf32>)
// CHECK: affine.min
// CHECK: %[[M:.*]] = vector.create_mask %{{.*}} : vector<64xi1>
// CHECK: vector.transfer_read %{{.*}}, %[[M]] {in_bounds = [true]} : tensor<?xf32>, vector<64xf32>
// CHECK: math.exp %{{.*}} : vector<64xf32>
// CHECK: math.tanh %{{.*}} : vector<64xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[M]] {in_bounds = [true]} : vector<64xf32>, tensor<?xf32>
// CHECK-NOT: linalg.generic
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

// Two loops: rows one at a time, 64 columns per vector; the broadcast row operand is read per tile too.
// CHECK-LABEL: func.func @broadcast_rows
// CHECK: scf.for
// CHECK: scf.for {{.*}} step %c64
// CHECK: vector.create_mask %{{.*}}, %{{.*}} : vector<1x64xi1>
// CHECK: vector.transfer_read {{.*}} : tensor<1x?xf32>, vector<1x64xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<?xf32>, vector<1x64xf32>
// CHECK: math.exp %{{.*}} : vector<1x64xf32>
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
