// RUN: tfn-opt %s --tfn-cache-large-buffers | FileCheck %s
// Each malloc and free call branches on the function its hook global holds (weak globals, zero at load: the runtime
// sets them to its buffer cache): non-null, an indirect call of it; null, the direct call, kept in place (the k-th
// malloc call stays the k-th, as tfn-return-on-failed-alloc counts them). Other allocators (aligned_alloc) are left
// alone.

// CHECK-DAG: llvm.mlir.global weak @tfn_malloc_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-DAG: llvm.mlir.global weak @tfn_free_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-DAG: llvm.mlir.global weak @tfn_shared_malloc_hook() {addr_space = 0 : i32} : !llvm.ptr
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

// The malloc of a buffer an in-place all-reduce helper takes (the allocated pointer of its memref descriptor) goes
// to tfn_shared_malloc_hook (the shared-memory arena of a job on one machine), and every free of it through
// tfn_free_hook, a failed allocation's way out too (an arena block is not a malloc block).
// CHECK-LABEL: llvm.func @h
// CHECK: llvm.mlir.addressof @tfn_shared_malloc_hook : !llvm.ptr
// CHECK: llvm.call @malloc(%arg0)
// CHECK: ^{{bb[0-9]+}}(%[[SHARED:.*]]: !llvm.ptr):
// CHECK: llvm.mlir.addressof @tfn_malloc_hook : !llvm.ptr
// CHECK: llvm.call @malloc(%arg0)
// CHECK: ^{{bb[0-9]+}}(%[[OTHER:.*]]: !llvm.ptr):
// CHECK: llvm.call @tfn_mpi_inplace_sum_4xf32
// CHECK: %[[HF:.*]] = llvm.mlir.addressof @tfn_free_hook : !llvm.ptr
// CHECK: %[[F:.*]] = llvm.load %[[HF]]
// CHECK: llvm.call @free(%[[SHARED]]) {tfn.failure_path}
// CHECK: llvm.call %[[F]](%[[SHARED]])
// CHECK-NOT: addressof
// CHECK: llvm.call @free(%[[OTHER]]) {tfn.failure_path}
// CHECK-NEXT: llvm.return
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
  llvm.call @free(%p) {tfn.failure_path} : (!llvm.ptr) -> ()
  llvm.call @free(%other) {tfn.failure_path} : (!llvm.ptr) -> ()
  llvm.return
}
