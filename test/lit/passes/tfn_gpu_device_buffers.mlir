// RUN: tfn-opt %s --tfn-gpu-device-buffers | FileCheck %s
// Arguments are copied to device buffers at entry and freed before the return; host allocations become device
// allocations; the returned buffer is copied back into a fresh host buffer. The signature stays the same.

// CHECK-LABEL: func.func @scale(%arg0: memref<100xf32>) -> memref<100xf32>
// CHECK: %[[DIN:.*]] = gpu.alloc  () : memref<100xf32>
// CHECK-NEXT: gpu.memcpy  %[[DIN]], %arg0 : memref<100xf32>, memref<100xf32>
// CHECK: %[[DOUT:.*]] = gpu.alloc  () : memref<100xf32>
// CHECK: gpu.launch
// CHECK: memref.load %[[DIN]]
// CHECK: memref.store %{{.*}}, %[[DOUT]]
// CHECK: gpu.terminator
// CHECK: %[[HOST:.*]] = memref.alloc() : memref<100xf32>
// CHECK-NEXT: gpu.memcpy  %[[HOST]], %[[DOUT]]
// CHECK-NEXT: gpu.dealloc  %[[DOUT]]
// CHECK-NEXT: gpu.dealloc  %[[DIN]]
// CHECK-NEXT: return %[[HOST]] : memref<100xf32>
func.func @scale(%x: memref<100xf32>) -> memref<100xf32> {
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %two = arith.constant 2.0 : f32
  %out = memref.alloc() : memref<100xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c100, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<100xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %out[%tx] : memref<100xf32>
    gpu.terminator
  }
  return %out : memref<100xf32>
}

// A temporary between two kernels lives and dies on the device; a function without a launch is left alone.
// CHECK-LABEL: func.func @temp
// CHECK: %[[T:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK: gpu.launch
// CHECK: gpu.dealloc  %[[T]]
// CHECK-NOT: memref.dealloc
// CHECK-LABEL: func.func @host_only
// CHECK-NOT: gpu.
func.func @temp(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<4xf32>
    memref.store %v, %t[%tx] : memref<4xf32>
    %w = memref.load %t[%tx] : memref<4xf32>
    memref.store %w, %y[%tx] : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %t : memref<4xf32>
  return
}

func.func @host_only(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}
