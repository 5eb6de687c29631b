// RUN: tfn-opt %s --tfn-polynomial-approximation | FileCheck %s

// f32 exp/log/tanh become arithmetic (no libm call is left); vectors too.
// CHECK-LABEL: func.func @f32
func.func @f32(%x: f32, %v: vector<16xf32>) -> (f32, f32, f32, vector<16xf32>) {
  // CHECK-NOT: math.exp
  // CHECK-NOT: math.log
  // CHECK-NOT: math.tanh
  // exp: n = floor(x log2(e) + 1/2), r = x - n ln2 (two fmas), 1 + r + r**2 P(r) as a sum of two floats,
  // 2**n from exponent bits in two factors (the result may overflow or be subnormal), one rounding fma, nan quieted
  // CHECK: math.floor
  // CHECK: math.fma
  // CHECK: math.fma
  // CHECK: arith.fptosi
  // CHECK: arith.shrsi
  // CHECK: arith.shli
  // CHECK: arith.bitcast {{.*}} : i32 to f32
  // CHECK: math.fma
  // CHECK: arith.cmpf uno
  %0 = math.exp %x : f32
  // log: exponent and mantissa from the bits, polynomial in m - 1, then -inf / nan / inf special cases
  // CHECK: arith.bitcast {{.*}} : f32 to i32
  // CHECK: arith.shrui
  // CHECK: arith.sitofp
  // CHECK: arith.cmpf ult
  %1 = math.log %x : f32
  // tanh: t + t**3 P(t**2) below 0.55, else 1 - 2 / (1 + e**2t) with the reciprocal refined; sign copied back
  // CHECK: math.absf
  // CHECK: arith.cmpf olt
  // CHECK: math.floor
  // CHECK: arith.divf
  // CHECK: arith.cmpf oge
  // CHECK: math.copysign
  %2 = math.tanh %x : f32
  // CHECK: math.fma {{.*}} : vector<16xf32>
  // CHECK: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
  %3 = math.exp %v : vector<16xf32>
  return %0, %1, %2, %3 : f32, f32, f32, vector<16xf32>
}

// erf has no LLVM intrinsic: a vector erf becomes one scalar erf per element (libm's, later).
// CHECK-LABEL: func.func @erf
func.func @erf(%v: vector<2x2xf64>) -> vector<2x2xf64> {
  // CHECK: vector.shape_cast {{.*}} : vector<2x2xf64> to vector<4xf64>
  // CHECK-COUNT-4: math.erf {{.*}} : f64
  // CHECK: vector.from_elements
  // CHECK: vector.shape_cast {{.*}} : vector<4xf64> to vector<2x2xf64>
  %0 = math.erf %v : vector<2x2xf64>
  return %0 : vector<2x2xf64>
}

// f64 keeps libm's exact-rounded functions.
// CHECK-LABEL: func.func @f64
func.func @f64(%x: f64) -> f64 {
  // CHECK: math.exp %{{.*}} : f64
  // CHECK-NOT: math.fma
  %0 = math.exp %x : f64
  return %0 : f64
}
