// RUN: tfn-opt %s '--tfn-parallelize=workers=2 tasks-per-worker=1' | FileCheck %s
// RUN: tfn-opt %s '--tfn-parallelize=workers=4 tasks-per-worker=1' | FileCheck %s --check-prefix=FOUR
// RUN: tfn-opt %s -p 'builtin.module(tfn-parallelize{workers=1})' | FileCheck %s --check-prefix=ONE
// The option `workers` sets the split: four quarters, or with one worker nothing at all.
// FOUR-LABEL: func.func @big
// FOUR: scf.forall (%{{.*}}) in (4) shared_outs
// FOUR: tensor.extract_slice {{.*}} [262144] [1]
// ONE-NOT: scf.forall
// RUN: tfn-opt %s --tfn-parallelize=workers=2 | FileCheck %s --check-prefix=TASKS
// By default each worker gets up to 4 tasks (dynamic load balance), none under 2**18 points unless there would be
// fewer tasks than workers: 2**20 points in 4 tasks, 2048 x 256 in 2 of 1024 rows.
// TASKS-LABEL: func.func @big
// TASKS: scf.forall (%{{.*}}) in (4) shared_outs
// TASKS: tensor.extract_slice {{.*}} [262144] [1]
// TASKS-LABEL: func.func @reductions
// TASKS: scf.forall (%{{.*}}) in (2) shared_outs
// TASKS: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024x256xf32>)
// 10**6 points would hold three tasks of 2**18 or more; three equal tasks on two workers take as long as four, so
// the count is rounded down to a multiple of the workers: two halves.
// TASKS-LABEL: func.func @million
// TASKS: scf.forall (%{{.*}}) in (2) shared_outs
// TASKS: tensor.extract_slice {{.*}} [500000] [1]


// A generic of 2**20 points is split in two halves of an scf.forall (one iteration per worker).
// CHECK-LABEL: func.func @big
func.func @big(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %e = tensor.empty() : tensor<1048576xf32>
  // CHECK: scf.forall (%{{.*}}) in (2) shared_outs
  // CHECK: tensor.extract_slice {{.*}} [524288] [1]
  // CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<524288xf32>)
  // CHECK: tensor.parallel_insert_slice
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<1048576xf32>) outs(%e : tensor<1048576xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.mulf %in, %in : f32
    linalg.yield %1 : f32
  } -> tensor<1048576xf32>
  return %0 : tensor<1048576xf32>
}

// A row reduction of 1 x 1000000 points: the split loop is the reduction's first parallel loop of extent >= 2 --
// here none (extent 1), so it is left alone; 2048 x 256 points are split along the rows.
// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<1x1000000xf32>, %y: tensor<2048x256xf32>, %a: tensor<1xf32>, %b: tensor<2048xf32>)
    -> (tensor<1xf32>, tensor<2048xf32>) {
  // CHECK-NOT: scf.forall
  // CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1000000xf32>)
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1x1000000xf32>) outs(%a : tensor<1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  // CHECK: scf.forall (%{{.*}}) in (2) shared_outs
  // CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024x256xf32>)
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<2048x256xf32>) outs(%b : tensor<2048xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<2048xf32>
  return %0, %1 : tensor<1xf32>, tensor<2048xf32>
}

// Small (under 2**19 points) and dynamic generics are untouched.
// CHECK-LABEL: func.func @small_and_dynamic
func.func @small_and_dynamic(%x: tensor<1000xf32>, %d: tensor<?xf32>, %m: tensor<32x8x8x32xf32>)
    -> (tensor<1000xf32>, tensor<?xf32>, tensor<32x8x8x32xf32>) {
  // CHECK-NOT: scf.forall
  %e = tensor.empty() : tensor<1000xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<1000xf32>) outs(%e : tensor<1000xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1000xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %d, %c0 : tensor<?xf32>
  %ed = tensor.empty(%n) : tensor<?xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%d : tensor<?xf32>) outs(%ed : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?xf32>
  // The digits CNN's 32 x 8 x 8 x 32 activations (2**16 points): a wake-up of the other thread costs more.
  %em = tensor.empty() : tensor<32x8x8x32xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%m : tensor<32x8x8x32xf32>) outs(%em : tensor<32x8x8x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<32x8x8x32xf32>
  // CHECK: return
  return %0, %1, %2 : tensor<1000xf32>, tensor<?xf32>, tensor<32x8x8x32xf32>
}

// CHECK-LABEL: func.func @million
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs
func.func @million(%x: tensor<1000000xf32>) -> tensor<1000000xf32> {
  %e = tensor.empty() : tensor<1000000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<1000000xf32>) outs(%e : tensor<1000000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.exp %in : f32
    linalg.yield %a : f32
  } -> tensor<1000000xf32>
  return %r : tensor<1000000xf32>
}
