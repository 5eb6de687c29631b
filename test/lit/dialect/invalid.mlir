// RUN: tfn-opt %s --split-input-file --verify-diagnostics

func.func @wrong_result_shape(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'tfn.add' op result #0 has type tensor<3xf32>, but its operands give tensor<2xf32>}}
  %0 = "tfn.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @wrong_result_dtype(%a: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "tfn.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  // expected-error @above {{result #0 has type tensor<2xf64>, but its operands give tensor<2xf32>}}
  return %0 : tensor<2xf64>
}

// -----

func.func @dtype_mismatch(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @below {{'tfn.add' op cannot compute AddV2 as input #1(zero-based) was expected to be a float32 tensor but is a int32 tensor}}
  %0 = "tfn.add"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @incompatible_shapes(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error-re @+1 {{'tfn.add' op {{.*}}Incompatible shapes{{.*}}}}
  %0 = "tfn.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @missing_attribute(%a: tensor<2xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'tfn.cast' op attribute "dtype" is expected but not provided}}
  %0 = "tfn.cast"(%a) : (tensor<2xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @wrong_attribute_kind(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'tfn.reduce_sum' op expected a i64s attribute, got 1 : i64}}
  %0 = "tfn.reduce_sum"(%a) {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @non_tensor_operand(%a: f32) -> tensor<f32> {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.f32'}}
  %0 = "tfn.exp"(%a) : (f32) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @non_tensor_result(%a: tensor<2xf32>) -> i32 {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.integer'}}
  %0 = "tfn.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> i32
  return %0 : i32
}

// -----

func.func @operand_count(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{op expects exactly 2 operands, but got 1}}
  %0 = "tfn.add"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @unknown_dtype(%a: tensor<2xui16>) -> tensor<2xui16> {
  // expected-error @+1 {{'tfn.abs' op Cannot convert 'ui16' to a tfn dtype}}
  %0 = "tfn.abs"(%a) : (tensor<2xui16>) -> tensor<2xui16>
  return %0 : tensor<2xui16>
}

// -----

func.func @type_mismatch_at_use(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-note @+1 {{prior use here}}
  %0 = "tfn.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  // expected-error @+1 {{use of value '%0' expects different type than prior uses: 'tensor<3xf32>' vs 'tensor<2xf32>'}}
  return %0 : tensor<3xf32>
}

// -----

// A size that overflows int64 is rejected before any pass: MLIR's size computations would abort on it.
// expected-error @+1 {{type tensor<4611686018427387904x4xf32> has more elements or bytes than int64 can count}}
func.func @size_overflows_int64(%a: tensor<4xf32>) -> tensor<4611686018427387904x4xf32> {
  // expected-error @+1 {{type tensor<4611686018427387904x4xf32> has more elements or bytes than int64 can count}}
  %0 = "tfn.broadcast_to"(%a) {shape = array<i64: 4611686018427387904, 4>} : (tensor<4xf32>) -> tensor<4611686018427387904x4xf32>
  // expected-error @+1 {{type tensor<4611686018427387904x4xf32> has more elements or bytes than int64 can count}}
  return %0 : tensor<4611686018427387904x4xf32>
}

// -----

// expected-error @+1 {{type memref<2305843009213693952x2xf32> has more elements or bytes than int64 can count}}
func.func @bytes_overflow_int64(%a: memref<2305843009213693952x2xf32>) {
  return
}
