// RUN: tfn-opt %s --split-input-file --tfn-cache-large-buffers | FileCheck %s
// RUN: tfn-opt %s --split-input-file --tfn-cache-large-buffers --tfn-cache-large-buffers | FileCheck %s --check-prefix=TWICE
// RUN: tfn-opt %s --split-input-file --tfn-cache-large-buffers | FileCheck %s --check-prefix=SHARED
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

// -----
// The malloc of a buffer an in-place all-reduce helper takes (the allocated pointer of its memref descriptor) is
// routed through tfn_shared_malloc_routed, which branches on tfn_shared_malloc_hook (the shared-memory arena of a
// job on one machine); the other malloc and every free (a failed allocation's way out too) as above.
// SHARED-DAG: llvm.mlir.global weak @tfn_shared_malloc_hook() {addr_space = 0 : i32} : !llvm.ptr
// SHARED-LABEL: llvm.func @h
// SHARED-NEXT: %[[P:.*]] = llvm.call @tfn_shared_malloc_routed(%arg0) : (i64) -> !llvm.ptr
// SHARED-NEXT: %[[OTHER:.*]] = llvm.call @tfn_malloc_routed(%arg0) : (i64) -> !llvm.ptr
// SHARED: llvm.call @tfn_mpi_inplace_sum_4xf32
// SHARED-NEXT: llvm.call @tfn_free_routed(%[[P]]) : (!llvm.ptr) -> ()
// SHARED-NEXT: llvm.call @tfn_free_routed(%[[OTHER]]) : (!llvm.ptr) -> ()
// SHARED-LABEL: llvm.func hidden @tfn_shared_malloc_routed(%arg0: i64) -> !llvm.ptr
// SHARED: llvm.mlir.addressof @tfn_shared_malloc_hook : !llvm.ptr
// SHARED: llvm.call @malloc(%arg0) : (i64) -> !llvm.ptr
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @tfn_mpi_inplace_sum_4xf32(!llvm.ptr, !llvm.ptr, i64, i64, i64)
llvm.func @h(%n: i64) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %other = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %c0 = llvm.mlir.constant(0 : index) : i64
  %c1 = llvm.mlir.constant(1 : index) : i64
  %c4 = llvm.mlir.constant(4 : index) : i64
  %0 = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %1 = llvm.insertvalue %p, %0[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %2 = llvm.insertvalue %p, %1[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %3 = llvm.extractvalue %2[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %4 = llvm.extractvalue %2[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  llvm.call @tfn_mpi_inplace_sum_4xf32(%3, %4, %c0, %c4, %c1) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.call @free(%other) : (!llvm.ptr) -> ()
  llvm.return
}
