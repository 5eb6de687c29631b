// RUN: tfn-opt %s --tfn-check-allocs | FileCheck %s
// A run-time sized allocation multiplies its byte count out with overflow checks; past the machine's memory it
// records ALLOC_FAILED (-2) with [ordinal, dims...] and asks malloc for ~2**62 bytes instead, which fails.
// A static allocation is left alone (its size was checked when the function was traced).

// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.*]] = arith.index_cast %arg0 : index to i64
// CHECK: %{{.*}}, %[[HIGH:.*]] = arith.mului_extended %c16_i64, %[[N]] : i64
// CHECK: arith.cmpi ne, %[[HIGH]]
// CHECK: arith.mului_extended
// CHECK: call @sysconf
// CHECK: %[[BAD:.*]] = arith.ori
// CHECK: scf.if %[[BAD]] {
// CHECK: arith.constant -2 : i32
// CHECK: %[[P:.*]] = arith.select %[[BAD]], %c288230376151711744, %arg0 : index
// CHECK: %[[Q:.*]] = arith.select %[[BAD]], %c1, %arg1 : index
// CHECK: memref.alloc(%[[P]], %[[Q]]) {alignment = 64 : i64} : memref<?x4x?xf32>
func.func @dynamic(%n: index, %m: index) -> memref<?x4x?xf32> {
  %a = memref.alloc(%n, %m) {alignment = 64 : i64} : memref<?x4x?xf32>
  return %a : memref<?x4x?xf32>
}

// CHECK-LABEL: func.func @static
// CHECK-NEXT: memref.alloc() : memref<8xi64>
// CHECK-NEXT: return
func.func @static() -> memref<8xi64> {
  %a = memref.alloc() : memref<8xi64>
  return %a : memref<8xi64>
}

// CHECK-LABEL: func.func @empty
// CHECK-NEXT: memref.alloc(%arg0) : memref<?x0xf32>
func.func @empty(%n: index) -> memref<?x0xf32> {
  %a = memref.alloc(%n) : memref<?x0xf32>
  return %a : memref<?x0xf32>
}
