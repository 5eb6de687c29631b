// RUN: tfn-opt %s --tfn-copy-strided-results | FileCheck %s

// A result that is a strided view cast to the identity layout (part of each row of a buffer with dynamic sizes)
// becomes a contiguous copy of the view.
// CHECK-LABEL: func.func @part_of_each_row
func.func @part_of_each_row(%arg0: memref<?x?xi32>) -> memref<?x?xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = memref.dim %arg0, %c0 : memref<?x?xi32>
  %d1 = memref.dim %arg0, %c1 : memref<?x?xi32>
  %alloc = memref.alloc(%d0, %d1) : memref<?x?xi32>
  // CHECK: %[[VIEW:.*]] = memref.subview
  %view = memref.subview %alloc[0, 0] [%d0, %c2] [1, 1] : memref<?x?xi32> to memref<?x?xi32, strided<[?, 1]>>
  %cast = memref.cast %view : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32>
  // CHECK: %[[R:.*]] = memref.dim %[[VIEW]], %{{.*}} : memref<?x?xi32, strided<[?, 1]>>
  // CHECK: %[[C:.*]] = memref.dim %[[VIEW]], %{{.*}} : memref<?x?xi32, strided<[?, 1]>>
  // CHECK: %[[COPY:.*]] = memref.alloc(%[[R]], %[[C]]) {alignment = 64 : i64} : memref<?x?xi32>
  // CHECK: memref.copy %[[VIEW]], %[[COPY]] : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32>
  // CHECK: return %[[COPY]] : memref<?x?xi32>
  return %cast : memref<?x?xi32>
}

// Left alone: a cast between identity layouts, and a result that is no cast.
// CHECK-LABEL: func.func @identity
func.func @identity(%arg0: memref<4xf32>) -> (memref<?xf32>, memref<4xf32>) {
  // CHECK-NOT: memref.copy
  // CHECK: %[[CAST:.*]] = memref.cast %arg0
  %cast = memref.cast %arg0 : memref<4xf32> to memref<?xf32>
  // CHECK: return %[[CAST]], %arg0
  return %cast, %arg0 : memref<?xf32>, memref<4xf32>
}
