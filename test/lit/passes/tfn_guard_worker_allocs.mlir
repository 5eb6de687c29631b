// RUN: tfn-opt %s --tfn-guard-worker-allocs | FileCheck %s
// An allocation in a forall body is checked for null: the error is recorded (ALLOC_FAILED = -2, details: its
// ordinal among the module's allocations and its dims) and the rest of the block is skipped, except the
// deallocation of buffers made before it. In an scf.for a skipped iteration yields its arguments unchanged.
// Allocations outside forall bodies are left alone.

// CHECK-LABEL: func.func @f
// CHECK: memref.alloc() : memref<4xf32>
// CHECK-NOT: extract_aligned_pointer
// CHECK: scf.forall
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x8xf32>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[NULL:.*]] = arith.cmpi eq, %[[P]], %{{.*}} : index
// CHECK: scf.if %[[NULL]] {
// CHECK: memref.get_global @tfn_error_flag
// CHECK: arith.constant -2 : i32
// CHECK: arith.constant 1 : i64
// CHECK: arith.constant 2 : i64
// CHECK: arith.constant 8 : i64
// CHECK: %[[OK:.*]] = arith.xori %[[NULL]], %true
// CHECK: scf.if %[[OK]] {
// CHECK: linalg.fill
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: }
// CHECK: scf.for %{{.*}} iter_args(%[[X:.*]] = %{{.*}}) -> (f32)
// CHECK: %[[B:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK-NOT: memref.dealloc
// CHECK: scf.yield %{{.*}} : f32
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[X]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: scf.yield %[[R]] : f32
func.func @f(%out: memref<4x8xf32>, %n: index) -> memref<4xf32> {
  %keep = memref.alloc() : memref<4xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.forall (%i) in (2) {
    %panel = memref.alloc() {alignment = 64 : i64} : memref<2x8xf32>
    linalg.fill ins(%zero : f32) outs(%panel : memref<2x8xf32>)
    memref.dealloc %panel : memref<2x8xf32>
  }
  scf.forall (%j) in (2) {
    %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
      %t = memref.alloc(%n) : memref<?xf32>
      memref.store %zero, %t[%c0] : memref<?xf32>
      %v = memref.load %t[%c0] : memref<?xf32>
      memref.dealloc %t : memref<?xf32>
      %w = arith.addf %acc, %v : f32
      scf.yield %w : f32
    }
    memref.store %s, %keep[%j] : memref<4xf32>
  }
  return %keep : memref<4xf32>
}
