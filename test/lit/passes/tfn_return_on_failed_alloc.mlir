// RUN: tfn-opt %s --tfn-return-on-failed-alloc | FileCheck %s
// A null malloc result (of a non-zero size) branches to the function's one failure block, which records
// ALLOC_FAILED (-2) with [-1, bytes, k] (k: which guarded call) unless an error is recorded already, and returns
// zeroed results; the error channel's globals are declared. Coroutines are left alone. A failed call first frees
// the buffers certainly still allocated (allocated on every path to it, not freed on any: @f's first, @g's %p),
// never one that is freed, or may be, before it (@g's %q freed through its descriptor, @h's %p freed on one path).

// CHECK: llvm.mlir.global external @tfn_error_detail
// CHECK: llvm.mlir.global external @tfn_error_flag
// CHECK-LABEL: llvm.func @f
// CHECK: %[[P:.*]] = llvm.call @malloc(%[[SIZE:.*]]) : (i64) -> !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.icmp "eq" %[[P]]
// CHECK: %[[SOME:.*]] = llvm.icmp "ne" %[[SIZE]]
// CHECK: %[[BAD:.*]] = llvm.and %[[NULL]], %[[SOME]]
// CHECK: %[[K0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.cond_br %[[BAD]], ^[[FAIL:bb[0-9]+]](%[[SIZE]], %[[K0]] : i64, i64), ^[[OK:bb[0-9]+]]
// CHECK: ^[[OK]]:
// CHECK: %[[Q:.*]] = llvm.call @malloc(%[[SIZE2:.*]]) : (i64) -> !llvm.ptr
// CHECK: %[[K1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: llvm.cond_br %{{.*}}, ^[[FREE:bb[0-9]+]], ^[[OK2:bb[0-9]+]]
// CHECK: ^[[FREE]]:
// CHECK-NEXT: llvm.call @free(%[[P]])
// CHECK-NEXT: llvm.br ^[[FAIL]](%[[SIZE2]], %[[K1]] : i64, i64)
// CHECK: ^[[OK2]]:
// CHECK: llvm.insertvalue %[[P]]
// CHECK: ^[[FAIL]](%{{.*}}: i64, %{{.*}}: i64):
// CHECK: llvm.mlir.addressof @tfn_error_flag
// CHECK: llvm.mlir.constant(-2 : i32)
// CHECK: llvm.store
// CHECK: %[[Z:.*]] = llvm.mlir.zero : !llvm.struct<(ptr, i64)>
// CHECK: llvm.return %[[Z]]
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @f(%n: i64) -> !llvm.struct<(ptr, i64)> {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %c = llvm.mlir.constant(16 : i64) : i64
  %q = llvm.call @malloc(%c) : (i64) -> !llvm.ptr
  %u = llvm.mlir.undef : !llvm.struct<(ptr, i64)>
  %a = llvm.insertvalue %p, %u[0] : !llvm.struct<(ptr, i64)>
  %b = llvm.insertvalue %n, %a[1] : !llvm.struct<(ptr, i64)>
  llvm.return %b : !llvm.struct<(ptr, i64)>
}

// CHECK-LABEL: llvm.func @coroutine
// CHECK: llvm.call @aligned_alloc
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.return
llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @coroutine(%n: i64) -> !llvm.ptr {
  %c = llvm.mlir.constant(64 : i64) : i64
  %id = llvm.mlir.constant(0 : i32) : i32
  %z = llvm.mlir.zero : !llvm.ptr
  %t = llvm.intr.coro.id %id, %z, %z, %z : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> !llvm.token
  %p = llvm.call @aligned_alloc(%c, %n) : (i64, i64) -> !llvm.ptr
  llvm.return %p : !llvm.ptr
}

// A loop body async-parallel-for outlined runs on a worker thread: left alone (tfn-guard-worker-allocs guarded it,
// reporting to the calling thread).
// CHECK-LABEL: llvm.func @parallel_compute_fn
// CHECK: llvm.call @malloc
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.return
llvm.func @parallel_compute_fn(%n: i64) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.return
}

// CHECK-LABEL: llvm.func @g
// CHECK: %[[P:.*]] = llvm.call @malloc
// CHECK: %[[Q:.*]] = llvm.call @malloc
// CHECK: llvm.call @free(%{{.*}})
// CHECK: llvm.call @malloc
// CHECK: llvm.cond_br %{{.*}}, ^[[FREE:bb[0-9]+]], ^{{bb[0-9]+}}
// CHECK: ^[[FREE]]:
// CHECK-NEXT: llvm.call @free(%[[P]])
// CHECK-NEXT: llvm.br
llvm.func @g(%n: i64) -> !llvm.ptr {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %q = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %u = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64)>
  %a = llvm.insertvalue %q, %u[0] : !llvm.struct<(ptr, ptr, i64)>
  %b = llvm.insertvalue %q, %a[1] : !llvm.struct<(ptr, ptr, i64)>
  %q2 = llvm.extractvalue %b[0] : !llvm.struct<(ptr, ptr, i64)>
  llvm.call @free(%q2) : (!llvm.ptr) -> ()
  %r = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.return %p : !llvm.ptr
}

// CHECK-LABEL: llvm.func @h
// CHECK: llvm.call @free
// CHECK: llvm.call @malloc
// CHECK: llvm.cond_br %{{.*}}, ^{{bb[0-9]+}}(%{{.*}}, %{{.*}} : i64, i64), ^{{bb[0-9]+}}
// CHECK-NOT: llvm.call @free
// CHECK: llvm.return
llvm.func @h(%n: i64, %c: i1) -> !llvm.ptr {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.cond_br %c, ^free, ^join
^free:
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.br ^join
^join:
  %r = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.return %r : !llvm.ptr
}
