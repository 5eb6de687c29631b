// RUN: tfn-opt %s --tfn-expand-strided-copies | FileCheck %s
// RUN: tfn-opt %s --tfn-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// A copy into a strided subview (a padded matmul panel) becomes a linalg.copy: loops, not a memrefCopy call.
// CHECK-LABEL: func.func @into_panel
// CHECK: %[[S:.*]] = memref.subview
// CHECK-NOT: memref.copy
// CHECK: linalg.copy {{.*}}ins(%{{.*}} : memref<256x10xf32>) outs(%[[S]] : memref<256x10xf32, strided<[32, 1]>>)
// LLVM-LABEL: llvm.func @into_panel
// LLVM-NOT: llvm.call @memrefCopy
// LLVM-LABEL: llvm.func @from_window
// LLVM-NOT: llvm.call @memrefCopy
// LLVM-LABEL: llvm.func @contiguous
// LLVM: llvm.call @memrefCopy
func.func @into_panel(%a: memref<256x10xf32>, %b: memref<256x32xf32>) {
  %s = memref.subview %b[0, 0] [256, 10] [1, 1] : memref<256x32xf32> to memref<256x10xf32, strided<[32, 1]>>
  memref.copy %a, %s : memref<256x10xf32> to memref<256x10xf32, strided<[32, 1]>>
  return
}

// A copy out of a subview with a dynamic offset too.
// CHECK-LABEL: func.func @from_window
// CHECK: linalg.copy
func.func @from_window(%a: memref<8x8xf32>, %i: index, %d: memref<2x8xf32>) {
  %s = memref.subview %a[%i, 0] [2, 8] [1, 1] : memref<8x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
  memref.copy %s, %d : memref<2x8xf32, strided<[8, 1], offset: ?>> to memref<2x8xf32>
  return
}

// Contiguous copies stay memref.copy (a memcpy) and unranked ones are left alone.
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to memref<4xf32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<*xf32> to memref<*xf32>
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<*xf32>, %d: memref<*xf32>) {
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  memref.copy %c, %d : memref<*xf32> to memref<*xf32>
  return
}
