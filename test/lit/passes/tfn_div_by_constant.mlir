// RUN: tfn-opt %s --tfn-div-by-constant | FileCheck %s

// Division by a constant whose reciprocal is a finite normal float becomes a multiplication: exact for powers of
// two (1/4 = 0.25), rounded once otherwise (1/3); splat vectors and f64 too.
// CHECK-LABEL: func.func @f
func.func @f(%x: f32, %v: vector<16xf32>, %d: f64, %y: f32) -> (f32, f32, vector<16xf32>, f64, f32, f32, f32) {
  %c4 = arith.constant 4.0 : f32
  %c3 = arith.constant 3.0 : f32
  %z = arith.constant 0.0 : f32
  %s = arith.constant dense<0.5> : vector<16xf32>
  %c10 = arith.constant 10.0 : f64
  %tiny = arith.constant 1.0e-39 : f32
  // CHECK: %[[Q:.*]] = arith.constant 2.500000e-01 : f32
  // CHECK: arith.mulf %{{.*}}, %[[Q]] : f32
  %0 = arith.divf %x, %c4 : f32
  // CHECK: %[[T:.*]] = arith.constant 0.333333343 : f32
  // CHECK: arith.mulf %{{.*}}, %[[T]] : f32
  %1 = arith.divf %x, %c3 : f32
  // CHECK: %[[TWO:.*]] = arith.constant dense<2.000000e+00> : vector<16xf32>
  // CHECK: arith.mulf %{{.*}}, %[[TWO]] : vector<16xf32>
  %2 = arith.divf %v, %s : vector<16xf32>
  // CHECK: %[[TENTH:.*]] = arith.constant 1.000000e-01 : f64
  // CHECK: arith.mulf %{{.*}}, %[[TENTH]] : f64
  %3 = arith.divf %d, %c10 : f64
  // Zero (x / 0 = inf or nan), a variable and a subnormal divisor (its reciprocal overflows) keep the division.
  // CHECK: arith.divf
  %4 = arith.divf %x, %z : f32
  // CHECK: arith.divf
  %5 = arith.divf %x, %y : f32
  // CHECK: arith.divf
  // CHECK-NOT: arith.divf
  %6 = arith.divf %x, %tiny : f32
  return %0, %1, %2, %3, %4, %5, %6 : f32, f32, vector<16xf32>, f64, f32, f32, f32
}

// Integer division and a divisor that is not a constant are left alone.
// CHECK-LABEL: func.func @untouched
func.func @untouched(%x: i32, %v: vector<4xf32>, %w: vector<4xf32>) -> (i32, vector<4xf32>) {
  %c2 = arith.constant 2 : i32
  // CHECK: arith.divsi
  %0 = arith.divsi %x, %c2 : i32
  // CHECK: arith.divf
  %1 = arith.divf %v, %w : vector<4xf32>
  return %0, %1 : i32, vector<4xf32>
}
