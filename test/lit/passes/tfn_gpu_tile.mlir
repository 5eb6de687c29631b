// RUN: tfn-opt %s --tfn-gpu-tile=block-size=256 | FileCheck %s
// RUN: tfn-opt %s --tfn-gpu-tile=block-size=128 | FileCheck %s --check-prefix=B128
// Elementwise ops become two nested scf.foralls: blocks of block-size elements along the innermost loop, then one
// element per thread; an op with identity maps is flattened first. Reductions and matmuls are only tagged.

// 37 x 100 flattened to 3700: 15 blocks of 256 threads.
// CHECK-LABEL: func.func @chain
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<37x100xf32> into tensor<3700xf32>
// CHECK: scf.forall (%{{.*}}) in (15) shared_outs
// CHECK: scf.forall (%{{.*}}) in (256) shared_outs
// CHECK: math.tanh
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<x>]}
// B128-LABEL: func.func @chain
// B128: scf.forall (%{{.*}}) in (29) shared_outs
// B128: scf.forall (%{{.*}}) in (128) shared_outs
// A broadcast operand keeps the 2-d shape: rows on block<y>, 256-element column tiles on block<x>.
// CHECK-LABEL: func.func @bcast
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (37, 1) shared_outs
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<y>, #gpu.block<x>]}
// CHECK-LABEL: func.func @rowsum
// CHECK: linalg.reduce {{.*}} dimensions = [1] {tfn.gpu_kernel = "reduce"}
// A rank-0 fill is one thread's work.
// CHECK-LABEL: func.func @fullmax
// CHECK: linalg.fill {tfn.gpu_kernel = "scalar"}
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.matmul {tfn.gpu_kernel = "matmul"}
func.func @chain(%x: tensor<37x100xf32>, %y: tensor<37x100xf32>) -> tensor<37x100xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<37x100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<37x100xf32>, tensor<37x100xf32>) outs(%e : tensor<37x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %t = math.tanh %m : f32
    %s = arith.subf %t, %one : f32
    linalg.yield %s : f32
  } -> tensor<37x100xf32>
  return %r : tensor<37x100xf32>
}

func.func @bcast(%x: tensor<37x100xf32>, %v: tensor<100xf32>) -> tensor<37x100xf32> {
  %e = tensor.empty() : tensor<37x100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %v : tensor<37x100xf32>, tensor<100xf32>) outs(%e : tensor<37x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<37x100xf32>
  return %r : tensor<37x100xf32>
}

func.func @rowsum(%x: tensor<37x100xf32>) -> tensor<37xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37xf32>) -> tensor<37xf32>
  %r = linalg.reduce ins(%x : tensor<37x100xf32>) outs(%f : tensor<37xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<37xf32>
}

func.func @fullmax(%x: tensor<7x1001xf32>) -> tensor<f32> {
  %low = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%low : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%x : tensor<7x1001xf32>) outs(%f : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

func.func @colsum(%x: tensor<37x300xf32>) -> tensor<300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<300xf32>) -> tensor<300xf32>
  %r = linalg.reduce ins(%x : tensor<37x300xf32>) outs(%f : tensor<300xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<300xf32>
}

func.func @matmul(%a: tensor<37x50xf32>, %b: tensor<50x29xf32>) -> tensor<37x29xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x29xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.matmul ins(%a, %b : tensor<37x50xf32>, tensor<50x29xf32>) outs(%f : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// A linalg.generic reduction of the same form (what keepdims lowers to) is tagged as well.
// CHECK-LABEL: func.func @keepdims
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}tfn.gpu_kernel = "reduce"
func.func @keepdims(%x: tensor<33x1x70xf32>, %o: tensor<33x1xf32>) -> tensor<33x1xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<33x1x70xf32>) outs(%o : tensor<33x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<33x1xf32>
  return %r : tensor<33x1xf32>
}

// A generic with reduction loops of another form (an argmax: two outputs) is a 'loop' kernel: its parallel loop on
// the blocks, one output point per thread (64 threads: the 37 rows rounded up to a power of two), the reduction
// looped over by that thread.
// CHECK-LABEL: func.func @argmax_like
// CHECK: scf.forall (%{{.*}}) in (1) shared_outs
// CHECK: scf.forall (%{{.*}}) in (64) shared_outs
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}ins(%{{.*}} : tensor<?x100xf32>)
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<x>]}
// Rank 4 with a transpose (not flattened): the innermost three loops on the grid, the outermost looped over by
// each thread.
// CHECK-LABEL: func.func @transpose4
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (5, 3, 1) shared_outs
// CHECK: scf.forall (%{{.*}}) in (32) shared_outs
// CHECK: {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @argmax_like(%x: tensor<37x100xf32>, %v: tensor<37xf32>, %i: tensor<37xi64>) -> (tensor<37xf32>, tensor<37xi64>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<37x100xf32>) outs(%v, %i : tensor<37xf32>, tensor<37xi64>) {
  ^bb0(%in: f32, %best: f32, %at: i64):
    %k = linalg.index 1 : index
    %k64 = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %in, %best : f32
    %b = arith.select %gt, %in, %best : f32
    %a = arith.select %gt, %k64, %at : i64
    linalg.yield %b, %a : f32, i64
  } -> (tensor<37xf32>, tensor<37xi64>)
  return %r#0, %r#1 : tensor<37xf32>, tensor<37xi64>
}

func.func @transpose4(%x: tensor<2x3x5x70xf32>) -> tensor<70x5x3x2xf32> {
  %e = tensor.empty() : tensor<70x5x3x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3, d2, d1, d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x5x70xf32>) outs(%e : tensor<70x5x3x2xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<70x5x3x2xf32>
  return %r : tensor<70x5x3x2xf32>
}
