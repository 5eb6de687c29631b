// RUN: tfn-opt %s --tfn-thread-local-errors | FileCheck %s
// The error channel's globals become thread-local (16-byte aligned), and two exported functions give the calling
// thread's copies to the runtime.

// CHECK: llvm.mlir.global external thread_local @tfn_error_flag(0 : i32) {addr_space = 0 : i32, alignment = 16 : i64}
// CHECK: llvm.mlir.global external thread_local @tfn_error_detail(dense<0> : tensor<8xi64>) {addr_space = 0 : i32, alignment = 16 : i64}
// CHECK: llvm.func @tfn_error_flag_slot() -> !llvm.ptr
// CHECK-NEXT: %[[F:.*]] = llvm.mlir.addressof @tfn_error_flag : !llvm.ptr
// CHECK-NEXT: llvm.return %[[F]] : !llvm.ptr
// CHECK: llvm.func @tfn_error_detail_slot() -> !llvm.ptr
// CHECK-NEXT: %[[D:.*]] = llvm.mlir.addressof @tfn_error_detail : !llvm.ptr
// CHECK-NEXT: llvm.return %[[D]] : !llvm.ptr
llvm.mlir.global external @tfn_error_flag(0 : i32) {addr_space = 0 : i32} : i32
llvm.mlir.global external @tfn_error_detail(dense<0> : tensor<8xi64>) {addr_space = 0 : i32} : !llvm.array<8 x i64>
