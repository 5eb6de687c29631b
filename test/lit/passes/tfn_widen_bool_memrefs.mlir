// RUN: tfn-opt %s --tfn-widen-bool-memrefs | FileCheck %s
// The i1 memrefs that buffer-deallocation-pipeline makes (ownership arrays passed to its dealloc helper) become
// i8 memrefs; the lowered module then passes finalize-memref-to-llvm, which aborts on i1 loads and stores.
// RUN: tfn-opt %s --tfn-widen-bool-memrefs --tfn-lower-to-llvm > /dev/null

// CHECK-LABEL: func.func @ownership
// CHECK: %[[A:.*]] = memref.alloc() : memref<2xi8>
// CHECK: %[[W:.*]] = arith.extui %{{.*}} : i1 to i8
// CHECK: memref.store %[[W]], %[[A]][%{{.*}}] : memref<2xi8>
// CHECK: %[[C:.*]] = memref.cast %[[A]] : memref<2xi8> to memref<?xi8>
// CHECK: call @helper(%[[C]]) : (memref<?xi8>) -> ()
// CHECK: %[[L:.*]] = memref.load %[[A]][%{{.*}}] : memref<2xi8>
// CHECK: %[[N:.*]] = arith.trunci %[[L]] : i8 to i1
// CHECK: scf.if %[[N]]
// CHECK: memref.dealloc %[[A]] : memref<2xi8>
func.func @ownership(%flag: i1, %x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<2xi1>
  memref.store %flag, %a[%c0] : memref<2xi1>
  %cast = memref.cast %a : memref<2xi1> to memref<?xi1>
  call @helper(%cast) : (memref<?xi1>) -> ()
  %owned = memref.load %a[%c0] : memref<2xi1>
  scf.if %owned {
    memref.dealloc %x : memref<4xf32>
  }
  memref.dealloc %a : memref<2xi1>
  return
}

// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%[[ARG:.*]]: memref<?xi8>)
// CHECK: %[[F:.*]] = arith.extui %false : i1 to i8
// CHECK: memref.store %[[F]], %[[ARG]]
func.func private @helper(%conds: memref<?xi1>) {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  memref.store %false, %conds[%c0] : memref<?xi1>
  return
}

// Other memrefs are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-SAME: (%{{.*}}: memref<3xi32>) -> i32
// CHECK: memref.load %{{.*}} : memref<3xi32>
func.func @untouched(%m: memref<3xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<3xi32>
  return %v : i32
}
