// RUN: tfn-opt %s --split-input-file --tfn-polynomial-approximation | FileCheck %s

// f32 exp/log/tanh become arithmetic (no libm call is left); vectors too.
// CHECK-LABEL: func.func @f32
func.func @f32(%x: f32, %v: vector<16xf32>) -> (f32, f32, f32, vector<16xf32>, vector<16xf32>) {
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
  // A vector exp branches once per vector: when every lane lies in [-86.5, 88] (nan fails), 2**n (hi + lo) is
  // normal, and n goes straight into the exponent field of the rounded sum, with no clamps, no second factor and no
  // nan select; otherwise the whole scalar recipe runs on the vector.
  // CHECK: %[[LO:.*]] = arith.cmpf oge, %{{.*}}, %{{.*}} : vector<16xf32>
  // CHECK: %[[HI:.*]] = arith.cmpf ole, %{{.*}}, %{{.*}} : vector<16xf32>
  // CHECK: %[[IN:.*]] = arith.andi %[[LO]], %[[HI]] : vector<16xi1>
  // CHECK: %[[ALL:.*]] = vector.reduction <and>, %[[IN]] : vector<16xi1> into i1
  // CHECK: scf.if %[[ALL]] -> (vector<16xf32>)
  // CHECK-NOT: arith.cmpf
  // CHECK: arith.shli
  // CHECK-NEXT: arith.addi {{.*}} : vector<16xi32>
  // CHECK-NEXT: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
  // CHECK-NEXT: scf.yield
  // CHECK: } else {
  // CHECK: arith.shrsi
  // CHECK: arith.cmpf uno
  // CHECK: scf.yield
  %3 = math.exp %v : vector<16xf32>
  // A vector tanh whose lanes are all below 0.55 in magnitude takes the polynomial alone (no exp, no division).
  // CHECK: %[[T:.*]] = math.absf %{{.*}} : vector<16xf32>
  // CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[T]], %{{.*}} : vector<16xf32>
  // CHECK: %[[ALLSMALL:.*]] = vector.reduction <and>, %[[SMALL]] : vector<16xi1> into i1
  // CHECK: scf.if %[[ALLSMALL]] -> (vector<16xf32>)
  // CHECK-NOT: arith.divf
  // CHECK: math.copysign
  // CHECK-NEXT: scf.yield
  // CHECK: } else {
  // CHECK: arith.divf
  // CHECK: math.copysign
  // CHECK: scf.yield
  %4 = math.tanh %v : vector<16xf32>
  return %0, %1, %2, %3, %4 : f32, f32, f32, vector<16xf32>, vector<16xf32>
}

// Vectors of any shape reduce their lane test flattened.
// CHECK-LABEL: func.func @vector_2d
func.func @vector_2d(%v: vector<1x16xf32>) -> vector<1x16xf32> {
  // CHECK: vector.shape_cast {{.*}} : vector<1x16xi1> to vector<16xi1>
  // CHECK: vector.reduction <and>
  // CHECK: scf.if
  %0 = math.exp %v : vector<1x16xf32>
  return %0 : vector<1x16xf32>
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

// So do atan2 (two operands, extracted element by element) and the other libm-only functions.
// CHECK-LABEL: func.func @atan2
func.func @atan2(%y: vector<2xf64>, %x: vector<2xf64>) -> (vector<2xf64>, vector<2xf64>) {
  // CHECK-COUNT-2: math.atan2 {{.*}} : f64
  // CHECK: vector.from_elements
  %0 = math.atan2 %y, %x : vector<2xf64>
  // CHECK-COUNT-2: math.acosh {{.*}} : f64
  %1 = math.acosh %x : vector<2xf64>
  return %0, %1 : vector<2xf64>, vector<2xf64>
}

// f64 keeps libm's exact-rounded functions.
// CHECK-LABEL: func.func @f64
func.func @f64(%x: f64) -> f64 {
  // CHECK: math.exp %{{.*}} : f64
  // CHECK-NOT: math.fma
  %0 = math.exp %x : f64
  return %0 : f64
}

// -----

// A tanh of another type is expanded here too, by upstream's math-expand-ops (exp-based), which this pass runs only
// when such a tanh is left, on the whole module (its greedy rewrite folds the rest too): no tanh reaches libm.
// CHECK-LABEL: func.func @other_tanh
func.func @other_tanh(%x: f64, %h: vector<4xf16>) -> (f64, vector<4xf16>) {
  // CHECK-NOT: math.tanh
  // CHECK: math.exp %{{.*}} : f64
  // CHECK: arith.divf %{{.*}}, %{{.*}} : f64
  // CHECK: math.exp %{{.*}} : vector<4xf16>
  // CHECK: arith.divf %{{.*}}, %{{.*}} : vector<4xf16>
  // CHECK-NOT: math.tanh
  %0 = math.tanh %x : f64
  %1 = math.tanh %h : vector<4xf16>
  return %0, %1 : f64, vector<4xf16>
}
