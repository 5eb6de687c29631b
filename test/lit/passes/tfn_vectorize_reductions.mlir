// RUN: tfn-opt %s '--tfn-vectorize-reductions=lanes=64 workers=2 tasks-per-worker=1' | FileCheck %s
// RUN: tfn-opt %s '--tfn-vectorize-reductions=lanes=16 workers=4 tasks-per-worker=1' | FileCheck %s --check-prefix=OTHER
// 16 lanes: blocks of 64 x 16 elements; four workers: the big reductions are split in four.
// OTHER-LABEL: func.func @rows_sum
// OTHER: scf.for {{.*}} step %c1024
// OTHER: scf.for {{.*}} step %c16
// OTHER: vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// OTHER-LABEL: func.func @big
// OTHER: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %arg2) -> (tensor<4096xf32>)
// OTHER: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<4xf32>)

// Reducing the trailing axes [1, 2]: collapsed to rows of 400, each a blocked loop of vector<64xf32> reads, a
// masked tail read padded with the identity (-0.0) and one tree reduction, added to the init element.
// CHECK-LABEL: func.func @rows_sum
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<8x4x100xf32> into tensor<8x400xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %arg1) -> (tensor<8xf32>)
// CHECK: scf.for {{.*}} step %c4096
// CHECK: scf.for {{.*}} step %c64
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true]} : tensor<8x400xf32>, vector<64xf32>
// CHECK: arith.addf {{.*}} : vector<64xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<8x400xf32>, vector<64xf32>
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<64xf32> into f32
// CHECK: tensor.insert
// CHECK-NOT: linalg.reduce
func.func @rows_sum(%x: tensor<8x4x100xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.reduce ins(%x : tensor<8x4x100xf32>) outs(%init : tensor<8xf32>) dimensions = [1, 2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// A full max of a dynamic vector: compare + select per lane and a NaN mask, so a NaN anywhere gives NaN.
// CHECK-LABEL: func.func @full_max
// CHECK: scf.for {{.*}} -> (vector<64xf32>, vector<64xi1>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: arith.select
// CHECK: arith.ori
// CHECK: vector.reduction <maximumf>
// CHECK: vector.reduction <or>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: arith.maximumf
// CHECK: tensor.insert %{{.*}} into %arg1[] : tensor<f32>
func.func @full_max(%x: tensor<?xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// RUN: tfn-opt %s '--tfn-vectorize-reductions=lanes=64 workers=2' | FileCheck %s --check-prefix=TASKS
// By default 4 tasks per worker: rows and columns in 8 parts, the 8 partial sums combined after the forall.
// TASKS-LABEL: func.func @big
// TASKS: scf.forall (%{{.*}}) in (8) shared_outs(%{{.*}} = %arg2) -> (tensor<4096xf32>)
// TASKS: scf.forall (%{{.*}}) in (8) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<8xf32>)
// TASKS-COUNT-7: arith.addf
// 2**24 elements and more are split across the two workers: rows divided in an scf.forall, and a full
// reduction cut into two column ranges whose partial results are combined after the forall.
// CHECK-LABEL: func.func @big
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %arg2) -> (tensor<4096xf32>)
// CHECK: tensor.extract_slice {{.*}} : tensor<4096x4096xf32> to tensor<?x4096xf32>
// CHECK: vector.reduction <minimumf>
// CHECK: tensor.parallel_insert_slice
// CHECK: tensor.collapse_shape %arg1 {{\[}}[0, 1]] : tensor<4096x4096xf32> into tensor<16777216xf32>
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<2xf32>)
// CHECK: tensor.from_elements
// CHECK: tensor.parallel_insert_slice
// CHECK: tensor.extract
// CHECK: tensor.extract
// CHECK: arith.addf
func.func @big(%x: tensor<4096x4096xf32>, %y: tensor<4096x4096xf32>, %rows: tensor<4096xf32>, %all: tensor<f32>)
    -> (tensor<4096xf32>, tensor<f32>) {
  %r = linalg.reduce ins(%x : tensor<4096x4096xf32>) outs(%rows : tensor<4096xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.minimumf %in, %acc : f32
      linalg.yield %s : f32
    }
  %a = linalg.reduce ins(%y : tensor<4096x4096xf32>) outs(%all : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r, %a : tensor<4096xf32>, tensor<f32>
}

// Reductions over leading axes (a bias gradient's column sums; max over two leading axes): per block of 64
// columns one vector, read from the init, combined with each row in order, written back; the last block masked.
// CHECK-LABEL: func.func @columns
// CHECK-NOT: linalg.reduce
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c256 step %c64 iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<256xf32>)
// CHECK: %[[START:.*]] = vector.transfer_read %[[OUT]][%[[J]]]{{.*}} {in_bounds = [true]} : tensor<256xf32>, vector<64xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c128 step %{{.*}} iter_args(%[[ACC:.*]] = %[[START]]) -> (vector<64xf32>)
// CHECK: %[[ROW:.*]] = vector.transfer_read %{{.*}}[%[[I]], %[[J]]]{{.*}} : tensor<128x256xf32>, vector<64xf32>
// CHECK: arith.addf %[[ROW]], %[[ACC]] : vector<64xf32>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<64xf32>, tensor<256xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<4x5x80xf32> into tensor<20x80xf32>
// CHECK: scf.for {{.*}} -> (tensor<80xf32>)
// CHECK: arith.maximumf {{.*}} : vector<64xf32>
// CHECK: vector.transfer_read %{{.*}}[%[[TAIL:.*]]], %{{.*}} : tensor<80xf32>, vector<64xf32>
// CHECK: arith.maximumf {{.*}} : vector<64xf32>
// CHECK: vector.transfer_write %{{.*}}[%[[TAIL]]] : vector<64xf32>, tensor<80xf32>
// CHECK: return
func.func @columns(%x: tensor<128x256xf32>, %a: tensor<256xf32>, %y: tensor<4x5x80xf32>, %b: tensor<80xf32>)
    -> (tensor<256xf32>, tensor<80xf32>) {
  %0 = linalg.reduce ins(%x : tensor<128x256xf32>) outs(%a : tensor<256xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  %1 = linalg.reduce ins(%y : tensor<4x5x80xf32>) outs(%b : tensor<80xf32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %t = arith.maximumf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %0, %1 : tensor<256xf32>, tensor<80xf32>
}

// Left alone: a leading-axis reduction as big as tfn-parallelize splits (2^20 elements) and one keeping fewer
// than 16 elements, a static row shorter than 16, a product, and an integer sum.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: linalg.reduce
// CHECK-NOT: vector.
func.func @kept(%x: tensor<100x100xf32>, %s: tensor<100x8xf32>, %i: tensor<100x100xi32>, %a: tensor<100xf32>,
                %b: tensor<100xi32>, %big: tensor<1024x1024xf32>, %c: tensor<1024xf32>, %d: tensor<8xf32>)
    -> (tensor<1024xf32>, tensor<100xf32>, tensor<100xf32>, tensor<100xi32>, tensor<8xf32>) {
  %0 = linalg.reduce ins(%big : tensor<1024x1024xf32>) outs(%c : tensor<1024xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  %4 = linalg.reduce ins(%s : tensor<100x8xf32>) outs(%d : tensor<8xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  %1 = linalg.reduce ins(%s : tensor<100x8xf32>) outs(%a : tensor<100xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  %2 = linalg.reduce ins(%x : tensor<100x100xf32>) outs(%a : tensor<100xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.mulf %in, %acc : f32
      linalg.yield %t : f32
    }
  %3 = linalg.reduce ins(%i : tensor<100x100xi32>) outs(%b : tensor<100xi32>) dimensions = [1]
    (%in: i32, %acc: i32) {
      %t = arith.addi %in, %acc : i32
      linalg.yield %t : i32
    }
  return %0, %1, %2, %3, %4 : tensor<1024xf32>, tensor<100xf32>, tensor<100xf32>, tensor<100xi32>, tensor<8xf32>
}

// Left alone: rows whose kept dims hold two dynamic sizes. Their results would be expanded back from one dynamic
// dim to two, which memref.expand_shape cannot hold (expand-strided-metadata asserted: an abort). One dynamic
// kept dim is vectorised.
// CHECK-LABEL: func.func @two_dynamic_kept
// CHECK: linalg.reduce
// CHECK-NOT: linalg.reduce
// CHECK: vector.reduction
// CHECK: tensor.expand_shape {{.*}} into tensor<?x4xf32>
func.func @two_dynamic_kept(%x: tensor<?x?x?xf32>, %init: tensor<?x?xf32>, %y: tensor<?x4x?xf32>,
                            %init1: tensor<?x4xf32>) -> (tensor<?x?xf32>, tensor<?x4xf32>) {
  %0 = linalg.reduce ins(%x : tensor<?x?x?xf32>) outs(%init : tensor<?x?xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %t = arith.maximumf %in, %acc : f32
      linalg.yield %t : f32
    }
  %1 = linalg.reduce ins(%y : tensor<?x4x?xf32>) outs(%init1 : tensor<?x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %t = arith.maximumf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %0, %1 : tensor<?x?xf32>, tensor<?x4xf32>
}
