// RUN: tfn-opt %s --tfn-gpu-emulate=warp-size=32 | FileCheck %s
// A kernel with shared memory, a private accumulator, barriers inside a uniform loop and a warp shuffle, emulated:
// the grid is a loop nest, each stretch between sync points a thread loop nest, values used across a sync point go
// through per-thread storage, the shuffle reads its partner lane's element, device copies become host copies.
// CHECK-LABEL: func.func @k
// CHECK: %[[HOST:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK-NEXT: memref.copy %arg0, %[[HOST]]
// CHECK: %[[SH:.*]] = memref.alloc() : memref<32xf32>
// CHECK: %[[PRIV:.*]] = memref.alloc(%[[T:.*]]) : memref<?x1xf32>
// CHECK: scf.for {{.*}} to %c1 step
// CHECK-NEXT: scf.for {{.*}} to %c1 step
// CHECK-NEXT: scf.for %[[BX:.*]] = {{.*}} to %c2 step
// Segment 0: up to the loop holding the barriers.
// CHECK: scf.for {{.*}} to %c32 step
// CHECK: memref.subview %[[PRIV]][%{{.*}}, 0] [1, 1] [1, 1] : memref<?x1xf32> to memref<1xf32, strided<[1], offset: ?>>
// CHECK: arith.muli %[[BX]], %c32
// The uniform loop runs once per block; its body is two thread loop nests, split at the barriers.
// CHECK: scf.for {{.*}} = %c0 to %c4 step %c1 {
// CHECK: scf.for {{.*}} to %c32 step
// CHECK: memref.store %{{.*}}, %[[SH]][%{{.*}}] : memref<32xf32>
// CHECK: scf.for {{.*}} to %c32 step
// CHECK: memref.load %[[SH]]
// Segment 3 stores the shuffled value; segment 4 (after the shuffle) reads lane ^ 16's element.
// CHECK: scf.for {{.*}} to %c32 step
// CHECK: scf.for {{.*}} to %c32 step
// CHECK: arith.remui
// CHECK: arith.xori
// CHECK: arith.cmpi ult
// CHECK: arith.select
// CHECK: memref.load
// CHECK: memref.store {{.*}}, %arg1[
// CHECK: memref.dealloc %[[SH]]
// CHECK: memref.dealloc %[[HOST]]
// CHECK-NOT: gpu.
func.func @k(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c16i = arith.constant 16 : i32
  %c32i = arith.constant 32 : i32
  %d = gpu.alloc () : memref<64xf32>
  gpu.memcpy %d, %x : memref<64xf32>, memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sh : memref<32xf32, #gpu.address_space<workgroup>>)
             private(%acc : memref<1xf32, #gpu.address_space<private>>) {
    %base = arith.muli %bx, %c32 : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %d[%i] : memref<64xf32>
    memref.store %v, %acc[%c0] : memref<1xf32, #gpu.address_space<private>>
    scf.for %k = %c0 to %c4 step %c1 {
      %a = memref.load %acc[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %a, %sh[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %n = arith.subi %c32, %tx : index
      %n1 = arith.subi %n, %c1 : index
      %b = memref.load %sh[%n1] : memref<32xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %a, %b : f32
      memref.store %s, %acc[%c0] : memref<1xf32, #gpu.address_space<private>>
      gpu.barrier
    }
    %r = memref.load %acc[%c0] : memref<1xf32, #gpu.address_space<private>>
    %sh16, %ok = gpu.shuffle xor %r, %c16i, %c32i : f32
    %t = arith.addf %r, %sh16 : f32
    memref.store %t, %y[%i] : memref<64xf32>
    gpu.terminator
  }
  gpu.dealloc %d : memref<64xf32>
  return
}

// A loop holding barriers that carries a per-thread value: the value lives in per-thread storage, stored before the
// loop and at the end of each iteration, loaded at the start and after the loop; the loop itself has no results.
// CHECK-LABEL: func.func @carried
// CHECK: %[[CARRY:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.store %cst, %[[CARRY]]
// CHECK: scf.for {{.*}} = %c0 to %c4 step %c1 {
// CHECK: memref.load %[[CARRY]]
// CHECK: memref.store %{{.*}}, %[[CARRY]]
// CHECK: memref.load %[[CARRY]]
// CHECK: memref.store %{{.*}}, %arg0[
func.func @carried(%y: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sh : memref<32xf32, #gpu.address_space<workgroup>>) {
    %s = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      memref.store %acc, %sh[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %m = arith.subi %c31, %tx : index
      %v = memref.load %sh[%m] : memref<32xf32, #gpu.address_space<workgroup>>
      %one = arith.constant 1.0 : f32
      %n0 = arith.addf %acc, %v : f32
      %n = arith.addf %n0, %one : f32
      gpu.barrier
      scf.yield %n : f32
    }
    memref.store %s, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
