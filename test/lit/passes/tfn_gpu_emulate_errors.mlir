// RUN: not tfn-opt %s --tfn-gpu-emulate 2>&1 | FileCheck %s
// A barrier under thread-dependent control flow has no loop-splitting emulation: an error at the op.
func.func @divergent(%y: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %low = arith.cmpi ult, %tx, %c16 : index
    // CHECK: [[@LINE+1]]:5: error: tfn-gpu-emulate: cannot emulate a gpu.barrier or gpu.shuffle inside scf.if
    scf.if %low {
      gpu.barrier
      memref.store %one, %y[%tx] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}
