// RUN: tfn-opt %s --tfn-cache-large-buffers | FileCheck %s
// Each malloc and free call becomes an indirect call of the function its hook global holds, or of malloc / free
// while the hook is null (weak globals, zero at load: the runtime sets them to its buffer cache). Other allocators
// (aligned_alloc) are left alone.

// CHECK-DAG: llvm.mlir.global weak @tfn_malloc_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-DAG: llvm.mlir.global weak @tfn_free_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-LABEL: llvm.func @f
// CHECK: %[[HM:.*]] = llvm.mlir.addressof @tfn_malloc_hook : !llvm.ptr
// CHECK: %[[M:.*]] = llvm.load %[[HM]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[UNSET:.*]] = llvm.icmp "eq" %[[M]], %[[Z]] : !llvm.ptr
// CHECK: %[[MALLOC:.*]] = llvm.mlir.addressof @malloc : !llvm.ptr
// CHECK: %[[FN:.*]] = llvm.select %[[UNSET]], %[[MALLOC]], %[[M]] : i1, !llvm.ptr
// CHECK: %[[P:.*]] = llvm.call %[[FN]](%arg0) : !llvm.ptr, (i64) -> !llvm.ptr
// CHECK: llvm.call @aligned_alloc
// CHECK: %[[HF:.*]] = llvm.mlir.addressof @tfn_free_hook : !llvm.ptr
// CHECK: %[[F:.*]] = llvm.load %[[HF]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[FREE:.*]] = llvm.mlir.addressof @free : !llvm.ptr
// CHECK: %[[FN2:.*]] = llvm.select %{{.*}}, %[[FREE]], %[[F]] : i1, !llvm.ptr
// CHECK: llvm.call %[[FN2]](%[[P]]) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK-NOT: llvm.call @malloc
// CHECK-NOT: llvm.call @free
// CHECK: llvm.return
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @f(%n: i64) -> !llvm.ptr {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %c = llvm.mlir.constant(64 : i64) : i64
  %q = llvm.call @aligned_alloc(%c, %n) : (i64, i64) -> !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return %q : !llvm.ptr
}
