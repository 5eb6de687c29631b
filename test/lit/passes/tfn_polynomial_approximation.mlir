// RUN: tfn-opt %s --tfn-polynomial-approximation | FileCheck %s

// f32 exp/log/tanh become arithmetic (no libm call is left); vectors too.
// CHECK-LABEL: func.func @f32
func.func @f32(%x: f32, %v: vector<16xf32>) -> (f32, f32, f32, vector<16xf32>) {
  // CHECK-NOT: math.exp
  // CHECK-NOT: math.log
  // CHECK-NOT: math.tanh
  // exp: n = floor(x log2(e) + 1/2), Cephes polynomial, 2**n from exponent bits, nan passed through
  // CHECK: math.floor
  // CHECK: math.fma
  // CHECK: arith.fptosi
  // CHECK: arith.shli
  // CHECK: arith.bitcast {{.*}} : i32 to f32
  // CHECK: arith.cmpf uno
  %0 = math.exp %x : f32
  // log: exponent and mantissa from the bits, polynomial in m - 1, then -inf / nan / inf special cases
  // CHECK: arith.bitcast {{.*}} : f32 to i32
  // CHECK: arith.shrui
  // CHECK: arith.sitofp
  // CHECK: arith.cmpf ult
  %1 = math.log %x : f32
  // tanh: Eigen's rational approximation on the clamped input
  // CHECK: arith.minimumf
  // CHECK: arith.maximumf
  // CHECK: arith.divf
  // CHECK: math.copysign
  %2 = math.tanh %x : f32
  // CHECK: math.fma {{.*}} : vector<16xf32>
  // CHECK: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
  %3 = math.exp %v : vector<16xf32>
  return %0, %1, %2, %3 : f32, f32, f32, vector<16xf32>
}

// f64 keeps libm's exact-rounded functions.
// CHECK-LABEL: func.func @f64
func.func @f64(%x: f64) -> f64 {
  // CHECK: math.exp %{{.*}} : f64
  // CHECK-NOT: math.fma
  %0 = math.exp %x : f64
  return %0 : f64
}
