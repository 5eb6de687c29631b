// RUN: tfn-opt %s --tfn-cache-large-buffers | FileCheck %s
// Each malloc and free call branches on the function its hook global holds (weak globals, zero at load: the runtime
// sets them to its buffer cache): non-null, an indirect call of it; null, the direct call, kept in place (the k-th
// malloc call stays the k-th, as tfn-return-on-failed-alloc counts them). Other allocators (aligned_alloc) are left
// alone.

// CHECK-DAG: llvm.mlir.global weak @tfn_malloc_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-DAG: llvm.mlir.global weak @tfn_free_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-LABEL: llvm.func @f
// CHECK: %[[HM:.*]] = llvm.mlir.addressof @tfn_malloc_hook : !llvm.ptr
// CHECK: %[[M:.*]] = llvm.load %[[HM]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[UNSET:.*]] = llvm.icmp "eq" %[[M]], %[[Z]] : !llvm.ptr
// CHECK: llvm.cond_br %[[UNSET]], ^[[PLAIN:bb[0-9]+]], ^[[CACHED:bb[0-9]+]]
// CHECK: ^[[PLAIN]]:
// CHECK-NEXT: %[[P1:.*]] = llvm.call @malloc(%arg0) : (i64) -> !llvm.ptr
// CHECK-NEXT: llvm.br ^[[JOIN:bb[0-9]+]](%[[P1]] : !llvm.ptr)
// CHECK: ^[[CACHED]]:
// CHECK-NEXT: %[[P2:.*]] = llvm.call %[[M]](%arg0) : !llvm.ptr, (i64) -> !llvm.ptr
// CHECK-NEXT: llvm.br ^[[JOIN]](%[[P2]] : !llvm.ptr)
// CHECK: ^[[JOIN]](%[[P:.*]]: !llvm.ptr):
// CHECK: llvm.call @aligned_alloc
// CHECK: %[[HF:.*]] = llvm.mlir.addressof @tfn_free_hook : !llvm.ptr
// CHECK: %[[F:.*]] = llvm.load %[[HF]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.cond_br %{{.*}}, ^[[PLAIN2:bb[0-9]+]], ^[[CACHED2:bb[0-9]+]]
// CHECK: ^[[PLAIN2]]:
// CHECK-NEXT: llvm.call @free(%[[P]]) : (!llvm.ptr) -> ()
// CHECK: ^[[CACHED2]]:
// CHECK-NEXT: llvm.call %[[F]](%[[P]]) : !llvm.ptr, (!llvm.ptr) -> ()
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

// A free tfn-return-on-failed-alloc added on a failed allocation's way out stays a direct call.
// CHECK-LABEL: llvm.func @g
// CHECK-NOT: tfn_free_hook
// CHECK: llvm.call @free(%arg0) {tfn.failure_path} : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
llvm.func @g(%p: !llvm.ptr) {
  llvm.call @free(%p) {tfn.failure_path} : (!llvm.ptr) -> ()
  llvm.return
}
