// RUN: tfn-opt %s --tfn-return-on-failed-alloc | FileCheck %s
// A null malloc result (of a non-zero size) records ALLOC_FAILED (-2) with [-1, bytes] unless an error is recorded
// already, and returns zeroed results; the error channel's globals are declared. Coroutines are left alone.

// CHECK: llvm.mlir.global external @tfn_error_detail
// CHECK: llvm.mlir.global external @tfn_error_flag
// CHECK-LABEL: llvm.func @f
// CHECK: %[[P:.*]] = llvm.call @malloc(%[[SIZE:.*]]) : (i64) -> !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.icmp "eq" %[[P]]
// CHECK: %[[SOME:.*]] = llvm.icmp "ne" %[[SIZE]]
// CHECK: %[[BAD:.*]] = llvm.and %[[NULL]], %[[SOME]]
// CHECK: llvm.cond_br %[[BAD]], ^[[FAIL:.*]], ^[[OK:.*]]
// CHECK: ^[[FAIL]]:
// CHECK: llvm.mlir.addressof @tfn_error_flag
// CHECK: llvm.mlir.constant(-2 : i32)
// CHECK: llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.store
// CHECK: %[[Z:.*]] = llvm.mlir.zero : !llvm.struct<(ptr, i64)>
// CHECK: llvm.return %[[Z]]
// CHECK: ^[[OK]]:
// CHECK: llvm.insertvalue %[[P]]
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @f(%n: i64) -> !llvm.struct<(ptr, i64)> {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %u = llvm.mlir.undef : !llvm.struct<(ptr, i64)>
  %a = llvm.insertvalue %p, %u[0] : !llvm.struct<(ptr, i64)>
  %b = llvm.insertvalue %n, %a[1] : !llvm.struct<(ptr, i64)>
  llvm.return %b : !llvm.struct<(ptr, i64)>
}
