// RUN: tfn-opt %s --tfn-hoist-error-slots | FileCheck %s
// Every address of the error channel, in nested regions too, becomes one get_global at the function's entry: the
// calling thread's copy, captured by the parallel bodies tfn-async-parallel outlines later.

memref.global "public" @tfn_error_flag : memref<i32> = dense<0>
memref.global "public" @tfn_error_detail : memref<8xi64> = dense<0>
memref.global "private" constant @other : memref<i32> = dense<7>

// CHECK-LABEL: func.func @f
// CHECK-NEXT: %[[D:.*]] = memref.get_global @tfn_error_detail : memref<8xi64>
// CHECK-NEXT: %[[F:.*]] = memref.get_global @tfn_error_flag : memref<i32>
// CHECK: scf.parallel
// CHECK-NOT: memref.get_global @tfn_error
// CHECK: memref.store %{{.*}}, %[[F]][] : memref<i32>
// CHECK: memref.store %{{.*}}, %[[D]][%{{.*}}] : memref<8xi64>
// CHECK: memref.get_global @other
// CHECK-NOT: memref.get_global @tfn_error
// CHECK: return
func.func @f(%n: index, %bad: i1) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.if %bad {
      %flag = memref.get_global @tfn_error_flag : memref<i32>
      %code = arith.constant 3 : i32
      memref.store %code, %flag[] : memref<i32>
      %detail = memref.get_global @tfn_error_detail : memref<8xi64>
      %v = arith.index_cast %i : index to i64
      memref.store %v, %detail[%c0] : memref<8xi64>
    }
    scf.reduce
  }
  %o = memref.get_global @other : memref<i32>
  %flag2 = memref.get_global @tfn_error_flag : memref<i32>
  %r = memref.load %flag2[] : memref<i32>
  return %r : i32
}
