// RUN: tfn-opt %s --split-input-file --verify-diagnostics --tfn-gpu-device-abi | FileCheck %s
// Arguments are device memory already (no copy in); a result the function allocated is returned as that device
// buffer; an argument or a view returned is copied into a fresh gpu.alloc; temporaries become gpu.alloc/dealloc.

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[X:.*]]: memref<128xf32>) -> memref<128xf32>
// CHECK-NOT: gpu.memcpy
// CHECK: %[[T:.*]] = gpu.alloc () : memref<128xf32>
// CHECK: %[[R:.*]] = gpu.alloc () : memref<128xf32>
// CHECK: gpu.launch
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[R]]
// CHECK: gpu.dealloc %[[T]]
// CHECK-NOT: gpu.memcpy
// CHECK-NOT: memref.alloc
// CHECK: return %[[R]] : memref<128xf32>
func.func @scale(%x: memref<128xf32>) -> memref<128xf32> {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %t = memref.alloc() : memref<128xf32>
  %r = memref.alloc() : memref<128xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<128xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %t[%tx] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %t[%tx] : memref<128xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %r[%tx] : memref<128xf32>
    gpu.terminator
  }
  memref.dealloc %t : memref<128xf32>
  return %r : memref<128xf32>
}

// -----

// An argument returned, and one result returned twice: each gets a device buffer of its own.
// CHECK-LABEL: func.func @aliases
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>)
// CHECK: %[[R:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: gpu.launch
// CHECK: %[[C1:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: gpu.memcpy %[[C1]], %[[X]]
// CHECK: %[[C2:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: gpu.memcpy %[[C2]], %[[R]]
// CHECK: return %[[R]], %[[C1]], %[[C2]]
func.func @aliases(%x: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %r = memref.alloc() : memref<4x8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx, %tx] : memref<4x8xf32>
    memref.store %v, %r[%bx, %tx] : memref<4x8xf32>
    gpu.terminator
  }
  return %r, %x, %r : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>
}

// -----

// A host op reading device memory is an error naming it.
func.func @host_read(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  // expected-error @+1 {{tfn-gpu-device-abi: memref.load would touch device memory on the host}}
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}

// -----

// Functions without a kernel are left as they are.
// CHECK-LABEL: func.func @cpu_only
// CHECK: memref.alloc
// CHECK-NOT: gpu.
func.func @cpu_only(%x: memref<4xf32>) -> memref<4xf32> {
  %r = memref.alloc() : memref<4xf32>
  memref.copy %x, %r : memref<4xf32> to memref<4xf32>
  return %r : memref<4xf32>
}
