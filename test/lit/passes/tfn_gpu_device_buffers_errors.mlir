// RUN: not tfn-opt %s --tfn-gpu-device-buffers 2>&1 | FileCheck %s
// The host reading a buffer the kernels use is an error.
func.func @mixed(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  // CHECK: [[@LINE+1]]:8: error: tfn-gpu-device-buffers: memref.load would touch device memory on the host
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}
