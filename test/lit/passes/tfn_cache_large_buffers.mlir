// RUN: tfn-opt %s --tfn-cache-large-buffers | FileCheck %s
// RUN: tfn-opt %s --tfn-cache-large-buffers --tfn-cache-large-buffers | FileCheck %s --check-prefix=TWICE
// Each malloc and free call becomes, where it is, a call of a (hidden) routing function that branches on the function
// its hook global holds (weak globals, zero at load: the runtime sets them to its buffer cache): non-null, an indirect
// call of it; null, the direct call (the k-th malloc call stays the k-th, as tfn-return-on-failed-alloc counts them).
// Other allocators (aligned_alloc) are left alone.

// CHECK-DAG: llvm.mlir.global weak @tfn_malloc_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-DAG: llvm.mlir.global weak @tfn_free_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-LABEL: llvm.func @f(
// CHECK-NEXT: %[[P:.*]] = llvm.call @tfn_malloc_routed(%arg0) : (i64) -> !llvm.ptr
// CHECK: llvm.call @aligned_alloc
// CHECK-NEXT: llvm.call @tfn_free_routed(%[[P]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func @g
// CHECK-NEXT: llvm.call @tfn_free_routed(%arg0) : (!llvm.ptr) -> ()
// CHECK-LABEL: llvm.func hidden @tfn_malloc_routed(%arg0: i64) -> !llvm.ptr
// CHECK: %[[HM:.*]] = llvm.mlir.addressof @tfn_malloc_hook : !llvm.ptr
// CHECK: %[[M:.*]] = llvm.load %[[HM]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[UNSET:.*]] = llvm.icmp "eq" %[[M]], %[[Z]] : !llvm.ptr
// CHECK: llvm.cond_br %[[UNSET]], ^[[PLAIN:bb[0-9]+]], ^[[CACHED:bb[0-9]+]]
// CHECK: ^[[PLAIN]]:
// CHECK-NEXT: %[[P1:.*]] = llvm.call @malloc(%arg0) : (i64) -> !llvm.ptr
// CHECK-NEXT: llvm.return %[[P1]] : !llvm.ptr
// CHECK: ^[[CACHED]]:
// CHECK-NEXT: %[[P2:.*]] = llvm.call %[[M]](%arg0) : !llvm.ptr, (i64) -> !llvm.ptr
// CHECK-NEXT: llvm.return %[[P2]] : !llvm.ptr
// CHECK-LABEL: llvm.func hidden @tfn_free_routed(%arg0: !llvm.ptr)
// CHECK: %[[HF:.*]] = llvm.mlir.addressof @tfn_free_hook : !llvm.ptr
// CHECK: %[[F:.*]] = llvm.load %[[HF]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.cond_br %{{.*}}, ^[[PLAIN2:bb[0-9]+]], ^[[CACHED2:bb[0-9]+]]
// CHECK: ^[[PLAIN2]]:
// CHECK-NEXT: llvm.call @free(%arg0) : (!llvm.ptr) -> ()
// CHECK: ^[[CACHED2]]:
// CHECK-NEXT: llvm.call %[[F]](%arg0) : !llvm.ptr, (!llvm.ptr) -> ()

// A module routed already is left as it is.
// TWICE-COUNT-1: llvm.func hidden @tfn_malloc_routed
// TWICE-NOT: tfn_malloc_routed_
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
llvm.func @g(%p: !llvm.ptr) {
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}
