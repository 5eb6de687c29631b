// RUN: tfn-opt %s --tfn-to-linalg | FileCheck %s
// No tfn op survives the pass.
// RUN: tfn-opt %s --tfn-to-linalg | FileCheck %s --check-prefix=NOTFN
// NOTFN-NOT: "tfn.
// The result is valid input for the rest of the pipeline.
// RUN: tfn-opt %s --tfn-to-linalg --canonicalize --cse --one-shot-bufferize=bufferize-function-boundaries > /dev/null

// ---- elementwise: one linalg.generic each, dynamic sizes from tensor.dim

// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @unary(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK: tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
  // CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x4xf32>
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[X]] : tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf32>)
  // CHECK: math.absf
  %0 = "tfn.abs"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: math.cos
  %1 = "tfn.cos"(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: math.exp
  %2 = "tfn.exp"(%1) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: math.log
  %3 = "tfn.log"(%2) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.negf
  %4 = "tfn.negative"(%3) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: math.rsqrt
  %5 = "tfn.rsqrt"(%4) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // f32 sigmoid is built here, accurate (tfn-polynomial-approximation's): e**-|x| in parts, 1 / (1 + e**-|x|) refined
  // CHECK: math.absf
  // CHECK: math.floor
  // CHECK: arith.divf
  // CHECK: arith.cmpf olt
  // CHECK-NOT: math.exp
  // CHECK: linalg.yield
  %6 = "tfn.sigmoid"(%5) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.cmpf ogt
  // CHECK: arith.cmpf olt
  // CHECK: arith.subf
  %7 = "tfn.sign"(%6) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: math.sin
  %8 = "tfn.sin"(%7) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: math.sqrt
  %9 = "tfn.sqrt"(%8) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: %[[SQ:.*]] = arith.mulf %[[IN:.*]], %[[IN]] : f32
  %10 = "tfn.square"(%9) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: math.tanh
  %11 = "tfn.tanh"(%10) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: linalg.yield %[[V]] : f32
  %12 = "tfn.identity"(%11) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %12 : tensor<?x4xf32>
}

// log1p, expm1, erf, softplus are computed in float64 and rounded once; log1p and expm1 by Kahan's
// formulas from log/exp (convert-math-to-llvm would turn math.log1p into log(1 + x)), erf by libm.
// CHECK-LABEL: func.func @float64_inside
func.func @float64_inside(%x: tensor<4xf32>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) {
  // CHECK: arith.extf {{.*}} : f32 to f64
  // CHECK: math.log {{.*}} : f64
  // CHECK: arith.truncf {{.*}} : f64 to f32
  %0 = "tfn.log1p"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: math.exp {{.*}} : f64
  // CHECK: math.log {{.*}} : f64
  // CHECK: arith.truncf
  %1 = "tfn.expm1"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: math.erf {{.*}} : f64
  %2 = "tfn.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // softplus = max(x, 0) + log1p(exp(-|x|))
  // CHECK: arith.maximumf
  // CHECK: math.absf
  // CHECK: math.exp
  %3 = "tfn.softplus"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NOT: arith.extf
  // CHECK: math.erf {{.*}} : f64
  %4 = "tfn.erf"(%y) : (tensor<4xf64>) -> tensor<4xf64>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>
}

// The inverse, hyperbolic and other libm functions (atan, asin, acos, tan, sinh, cosh, asinh, acosh, atanh,
// erfc, atan2) are libm's in float64, rounded once, as erf.
// CHECK-LABEL: func.func @libm_float64
func.func @libm_float64(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: arith.extf {{.*}} : f32 to f64
  // CHECK: math.atan {{.*}} : f64
  // CHECK: arith.truncf {{.*}} : f64 to f32
  %0 = "tfn.atan"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: math.erfc {{.*}} : f64
  %1 = "tfn.erfc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: math.atan2 {{.*}} : f64
  %2 = "tfn.atan2"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// The others of the family, on float64 (no extension): one libm function each.
// CHECK-LABEL: func.func @libm_others
func.func @libm_others(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>,
                                               tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  // CHECK-NOT: arith.extf
  // CHECK: math.asin {{.*}} : f64
  %0 = "tfn.asin"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  // CHECK: math.acos {{.*}} : f64
  %1 = "tfn.acos"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  // CHECK: math.tan {{.*}} : f64
  %2 = "tfn.tan"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  // CHECK: math.sinh {{.*}} : f64
  %3 = "tfn.sinh"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  // CHECK: math.cosh {{.*}} : f64
  %4 = "tfn.cosh"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  // CHECK: math.asinh {{.*}} : f64
  %5 = "tfn.asinh"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  // CHECK: math.acosh {{.*}} : f64
  %6 = "tfn.acosh"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  // CHECK: math.atanh {{.*}} : f64
  %7 = "tfn.atanh"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>,
                                          tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}

// Broadcasting: the row vector is read through (d0, d1) -> (d1).
// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<4xf32>)
func.func @binary(%x: tensor<?x4xf32>, %y: tensor<4xf32>) -> tensor<?x4xf32> {
  // CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]]{{.*}} ins(%[[X]], %[[Y]] : tensor<?x4xf32>, tensor<4xf32>)
  // CHECK: arith.addf
  %0 = "tfn.add"(%x, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.subf
  %1 = "tfn.subtract"(%0, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.mulf
  %2 = "tfn.multiply"(%1, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.divf
  %3 = "tfn.divide"(%2, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.divf
  // CHECK-NEXT: math.floor
  %4 = "tfn.floordiv"(%3, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.remf
  %5 = "tfn.floormod"(%4, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.maximumf
  %6 = "tfn.maximum"(%5, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: arith.minimumf
  %7 = "tfn.minimum"(%6, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: math.powf
  %8 = "tfn.pow"(%7, %y) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %8 : tensor<?x4xf32>
}

// Comparisons produce bool tensors, stored as i8 after lowering.
// CHECK-LABEL: func.func @compare
// CHECK-SAME: -> (tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<3xi8>)
func.func @compare(%x: tensor<3xi32>, %y: tensor<3xi32>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  // CHECK: arith.cmpi eq
  // CHECK-NEXT: arith.extui %{{.*}} : i1 to i8
  %0 = "tfn.equal"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  // CHECK: arith.cmpi ne
  %1 = "tfn.not_equal"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  // CHECK: arith.cmpi slt
  %2 = "tfn.less"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  // CHECK: arith.cmpi sle
  %3 = "tfn.less_equal"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  // CHECK: arith.cmpi sgt
  %4 = "tfn.greater"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  // CHECK: arith.cmpi sge
  %5 = "tfn.greater_equal"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// CHECK-LABEL: func.func @logical
// CHECK-SAME: (%{{.*}}: tensor<3xi8>, %{{.*}}: tensor<3xi8>) -> tensor<3xi8>
func.func @logical(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // CHECK: arith.andi %{{.*}}, %{{.*}} : i8
  %0 = "tfn.logical_and"(%a, %b) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: arith.ori %{{.*}}, %{{.*}} : i8
  %1 = "tfn.logical_or"(%0, %b) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: arith.xori %{{.*}}, %{{.*}} : i8
  %2 = "tfn.logical_not"(%1) : (tensor<3xi1>) -> tensor<3xi1>
  return %2 : tensor<3xi1>
}

// CHECK-LABEL: func.func @select
func.func @select(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ^bb0(%[[C:.*]]: i8, %[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: %[[BIT:.*]] = arith.trunci %[[C]] : i8 to i1
  // CHECK-NEXT: arith.select %[[BIT]], %[[A]], %[[B]] : f32
  %0 = "tfn.select"(%c, %x, %y) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// Unsigned tensors become signless; the unsigned arithmetic is in the ops.
// CHECK-LABEL: func.func @unsigned
// CHECK-SAME: (%{{.*}}: tensor<3xi8>, %{{.*}}: tensor<3xi8>) -> (tensor<3xi8>, tensor<3xi8>, tensor<3xf32>)
func.func @unsigned(%a: tensor<3xui8>, %b: tensor<3xui8>) -> (tensor<3xui8>, tensor<3xi1>, tensor<3xf32>) {
  // CHECK: arith.divui
  %0 = "tfn.floordiv"(%a, %b) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  // CHECK: arith.cmpi ult
  %1 = "tfn.less"(%a, %b) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  // CHECK: arith.uitofp %{{.*}} : i8 to f32
  %2 = "tfn.cast"(%a) {dtype = f32} : (tensor<3xui8>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xui8>, tensor<3xi1>, tensor<3xf32>
}

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<?x4xf32>) -> tensor<?x4xi32> {
  // CHECK: arith.fptosi %{{.*}} : f32 to i32
  %0 = "tfn.cast"(%x) {dtype = i32} : (tensor<?x4xf32>) -> tensor<?x4xi32>
  return %0 : tensor<?x4xi32>
}

// CHECK-LABEL: func.func @constant
func.func @constant() -> tensor<3xf32> {
  // CHECK: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  // CHECK-NEXT: return %[[C]]
  %0 = "tfn.constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// ---- matmul: zero-filled accumulator, named linalg ops

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<?x3xf32>, %[[B:.*]]: tensor<3x5xf32>)
func.func @matmul(%a: tensor<?x3xf32>, %b: tensor<3x5xf32>) -> tensor<?x5xf32> {
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x5xf32>)
  // CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<?x3xf32>, tensor<3x5xf32>) outs(%[[ACC]] : tensor<?x5xf32>)
  %0 = "tfn.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<?x3xf32>, tensor<3x5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// CHECK-LABEL: func.func @batch_matmul
func.func @batch_matmul(%a: tensor<2x4x3xf32>, %b: tensor<2x5x3xf32>) -> tensor<2x4x5xf32> {
  // CHECK: %[[BT:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x5x3xf32>) outs(%{{.*}} : tensor<2x3x5xf32>) permutation = [0, 2, 1]
  // CHECK: linalg.batch_matmul ins(%{{.*}}, %[[BT]] : tensor<2x4x3xf32>, tensor<2x3x5xf32>)
  %0 = "tfn.matmul"(%a, %b) {transpose_a = false, transpose_b = true} : (tensor<2x4x3xf32>, tensor<2x5x3xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// ---- conv2d: linalg.conv_2d_nhwc_hwcf on a zero fill (SAME and dynamic cases: tfn_to_linalg_conv.mlir)

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32> {
  // CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
  %0 = "tfn.conv2d"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = false} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

// ---- max_pool2d: one elementwise generic over the windows' strided taps (dynamic batch kept)

// CHECK-LABEL: func.func @max_pool2d
func.func @max_pool2d(%x: tensor<?x4x4x3xf32>) -> tensor<?x2x2x3xf32> {
  // CHECK: tensor.extract_slice %arg0[0, 0, 0, 0] [%{{.*}}, 2, 2, 3] [1, 2, 2, 1]
  // CHECK: tensor.extract_slice %arg0[0, 1, 1, 0] [%{{.*}}, 2, 2, 3] [1, 2, 2, 1]
  // CHECK: linalg.generic
  // CHECK-COUNT-3: arith.maximumf
  %0 = "tfn.max_pool2d"(%x) {ksize = array<i64: 2, 2>, strides = array<i64: 2, 2>, same = false} : (tensor<?x4x4x3xf32>) -> tensor<?x2x2x3xf32>
  return %0 : tensor<?x2x2x3xf32>
}

// ---- max_pool2d_grad: one generic finds each window's first maximum and yields one part per tap; overlapping
// windows add their parts at the taps' strided places of the padded input, cropped to the input

// CHECK-LABEL: func.func @max_pool2d_grad
func.func @max_pool2d_grad(%x: tensor<1x5x5x2xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x5x5x2xf32> {
  // CHECK: tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
  // CHECK: %[[PARTS:.*]]:9 = linalg.generic
  // CHECK: arith.cmpf ogt
  // CHECK: linalg.yield {{.*}} : f32, f32, f32, f32, f32, f32, f32, f32, f32
  // CHECK-NEXT: } -> (tensor<1x3x3x2xf32>,
  // CHECK: linalg.fill
  // CHECK: tensor.insert_slice %[[PARTS]]#0 into %{{.*}}[0, 0, 0, 0] [1, 3, 3, 2] [1, 2, 2, 1]
  // CHECK: arith.addf
  // CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 0] [1, 3, 3, 2] [1, 2, 2, 1]
  // CHECK: tensor.extract_slice %{{.*}}[0, 1, 1, 0] [1, 5, 5, 2] [1, 1, 1, 1] : tensor<1x7x7x2xf32> to tensor<1x5x5x2xf32>
  %0 = "tfn.max_pool2d_grad"(%x, %g) {ksize = array<i64: 3, 3>, strides = array<i64: 2, 2>, same = true} : (tensor<1x5x5x2xf32>, tensor<1x3x3x2xf32>) -> tensor<1x5x5x2xf32>
  return %0 : tensor<1x5x5x2xf32>
}

// ---- depthwise_conv2d: one linalg.generic, taps outside the channel loop (more cases: tfn_to_linalg_conv.mlir)

// CHECK-LABEL: func.func @depthwise_conv2d
func.func @depthwise_conv2d(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x1xf32>) -> tensor<1x6x6x4xf32> {
  // CHECK: %[[ACC:.*]] = linalg.fill
  // CHECK: %[[W:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<3x3x4x1xf32> into tensor<3x3x4xf32>
  // CHECK: linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%{{.*}}, %[[W]] : {{.*}}) outs(%[[ACC]] : tensor<1x6x6x4xf32>)
  // CHECK: arith.mulf
  // CHECK: arith.addf
  %0 = "tfn.depthwise_conv2d"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, same = false, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x4xf32>, tensor<3x3x4x1xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

// ---- reductions: linalg.reduce from the identity element

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<?x4xf32>, %b: tensor<?x4xi1>) -> (tensor<?xf32>, tensor<?x1xf32>, tensor<4xf32>, tensor<f32>, tensor<?xf32>, tensor<?xi1>, tensor<4xi1>) {
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?xf32>)
  // CHECK: linalg.reduce ins(%{{.*}} : tensor<?x4xf32>) outs(%{{.*}} : tensor<?xf32>) dimensions = [1]
  // CHECK: arith.addf
  %0 = "tfn.reduce_sum"(%x) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<?xf32>
  // CHECK: arith.constant 0xFF800000 : f32
  // CHECK: linalg.reduce {{.*}} dimensions = [1]
  // CHECK: arith.maximumf
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf32> into tensor<?x1xf32>
  %1 = "tfn.reduce_max"(%x) {axis = array<i64: 1>, keepdims = true} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: arith.constant 0x7F800000 : f32
  // CHECK: linalg.reduce {{.*}} dimensions = [0]
  // CHECK: arith.minimumf
  %2 = "tfn.reduce_min"(%x) {axis = array<i64: 0>, keepdims = false} : (tensor<?x4xf32>) -> tensor<4xf32>
  // The mean divides the sum by the element count, computed from the dynamic sizes.
  // CHECK: linalg.reduce {{.*}} dimensions = [0, 1]
  // CHECK: arith.addf
  // CHECK: tensor.dim
  // CHECK: arith.sitofp
  // CHECK: arith.divf
  %3 = "tfn.reduce_mean"(%x) {axis = array<i64: 0, 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<f32>
  // CHECK: arith.constant 1.000000e+00 : f32
  // CHECK: linalg.reduce
  // CHECK: arith.mulf
  %4 = "tfn.reduce_prod"(%x) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xf32>) -> tensor<?xf32>
  // CHECK: linalg.reduce ins(%{{.*}} : tensor<?x4xi8>)
  // CHECK: arith.andi
  %5 = "tfn.reduce_all"(%b) {axis = array<i64: 1>, keepdims = false} : (tensor<?x4xi1>) -> tensor<?xi1>
  // CHECK: linalg.reduce ins(%{{.*}} : tensor<?x4xi8>)
  // CHECK: arith.ori
  %6 = "tfn.reduce_any"(%b) {axis = array<i64: 0>, keepdims = false} : (tensor<?x4xi1>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?xf32>, tensor<?x1xf32>, tensor<4xf32>, tensor<f32>, tensor<?xf32>, tensor<?xi1>, tensor<4xi1>
}

// argmax/argmin: one linalg.generic carrying (value, index), first index wins ties.
// CHECK-LABEL: func.func @arg
func.func @arg(%x: tensor<?x4xf32>) -> (tensor<?xi64>, tensor<4xi32>) {
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi64>)
  // CHECK: linalg.index 1 : index
  // CHECK: arith.cmpf ogt
  %0 = "tfn.argmax"(%x) {axis = 1 : i64, output_type = i64} : (tensor<?x4xf32>) -> tensor<?xi64>
  // CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi32>)
  // CHECK: linalg.index 0 : index
  // CHECK: arith.cmpf olt
  %1 = "tfn.argmin"(%x) {axis = 0 : i64, output_type = i32} : (tensor<?x4xf32>) -> tensor<4xi32>
  return %0, %1 : tensor<?xi64>, tensor<4xi32>
}

// ---- shape ops: tensor.* reshapes and named linalg ops

// CHECK-LABEL: func.func @shape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>)
func.func @shape(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x2x3xf32>, tensor<4x2x3xf32>) {
  // CHECK: tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %0 = "tfn.reshape"(%x) {shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  // CHECK: linalg.transpose ins(%[[X]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
  %1 = "tfn.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // CHECK: %[[EXP:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [1, 2, 3] : tensor<2x3xf32> into tensor<1x2x3xf32>
  %2 = "tfn.expand_dims"(%x) {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  // CHECK: tensor.collapse_shape %[[EXP]] {{\[\[}}0, 1], [2]] : tensor<1x2x3xf32> into tensor<2x3xf32>
  %3 = "tfn.squeeze"(%2) {axis = array<i64: 0>} : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
  // CHECK: tensor.concat dim(0) %[[X]], %[[Y]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %4 = "tfn.concat"(%x, %y) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK: tensor.insert_slice %[[X]] into %{{.*}}[0, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<2x3xf32> into tensor<2x2x3xf32>
  // CHECK: tensor.insert_slice %[[Y]] into %{{.*}}[1, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<2x3xf32> into tensor<2x2x3xf32>
  %5 = "tfn.stack"(%x, %y) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
  // CHECK: linalg.broadcast ins(%[[X]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) dimensions = [0]
  %6 = "tfn.broadcast_to"(%x) {shape = array<i64: 4, 2, 3>} : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  return %0, %1, %3, %4, %5, %6 : tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x2x3xf32>, tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @unstack
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @unstack(%x: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // CHECK: %[[R0:.*]] = tensor.extract_slice %[[X]][0, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
  // CHECK: %[[R1:.*]] = tensor.extract_slice %[[X]][1, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
  // CHECK: return %[[R0]], %[[R1]]
  %0:2 = "tfn.unstack"(%x) {num = 2 : i64, axis = 0 : i64} : (tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// tile broadcasts into [m0, d0, m1, d1, ...] (no dim where a multiple is 1) and collapses the pairs; a
// dynamic input dim stays dynamic.
// CHECK-LABEL: func.func @tile
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[D:.*]]: tensor<?x3xi32>)
func.func @tile(%x: tensor<2x3xf32>, %d: tensor<?x3xi32>) -> (tensor<4x3xf32>, tensor<0x6xf32>, tensor<?x9xi32>, tensor<2x3xf32>) {
  // CHECK: %[[B:.*]] = linalg.broadcast ins(%[[X]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x2x3xf32>) dimensions = [0]
  // CHECK: tensor.collapse_shape %[[B]] {{\[\[}}0, 1], [2]] : tensor<2x2x3xf32> into tensor<4x3xf32>
  %0 = "tfn.tile"(%x) {multiples = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK: %[[Z:.*]] = linalg.broadcast ins(%[[X]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<0x2x2x3xf32>) dimensions = [0, 2]
  // CHECK: tensor.collapse_shape %[[Z]] {{\[\[}}0, 1], [2, 3]] : tensor<0x2x2x3xf32> into tensor<0x6xf32>
  %1 = "tfn.tile"(%x) {multiples = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<0x6xf32>
  // CHECK: %[[N:.*]] = tensor.dim %[[D]], %{{.*}} : tensor<?x3xi32>
  // CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x3x3xi32>
  // CHECK: %[[DB:.*]] = linalg.broadcast ins(%[[D]] : tensor<?x3xi32>) outs(%[[E]] : tensor<?x3x3xi32>) dimensions = [1]
  // CHECK: tensor.collapse_shape %[[DB]] {{\[\[}}0], [1, 2]] : tensor<?x3x3xi32> into tensor<?x9xi32>
  %2 = "tfn.tile"(%d) {multiples = array<i64: 1, 3>} : (tensor<?x3xi32>) -> tensor<?x9xi32>
  // All multiples 1: x itself.
  // CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[X]] :
  %3 = "tfn.tile"(%x) {multiples = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<4x3xf32>, tensor<0x6xf32>, tensor<?x9xi32>, tensor<2x3xf32>
}

// ---- fill, gather, one_hot, range, strided_slice, eye, pad

// eye compares the row and column indices of each element.
// CHECK-LABEL: func.func @eye
func.func @eye() -> tensor<2x2x3xi32> {
  // CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2x3xi32>)
  // CHECK: %[[R:.*]] = linalg.index 1 : index
  // CHECK: %[[C:.*]] = linalg.index 2 : index
  // CHECK: arith.cmpi eq, %[[R]], %[[C]] : index
  // CHECK: arith.select
  %0 = "tfn.eye"() {shape = array<i64: 2, 2, 3>, dtype = i32} : () -> tensor<2x2x3xi32>
  return %0 : tensor<2x2x3xi32>
}

// pad fills the padded shape with the value, then inserts x at the `before` offsets; a dynamic dim grows by
// both paddings.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>, %[[V:.*]]: tensor<f32>)
func.func @pad(%x: tensor<?x3xf32>, %v: tensor<f32>) -> tensor<?x6xf32> {
  // CHECK: %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3xf32>
  // CHECK: %[[N:.*]] = arith.addi %[[D]], %{{.*}} : index
  // CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x6xf32>
  // CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x6xf32>)
  // CHECK: tensor.insert_slice %[[X]] into %[[F]][1, 2] [%{{.*}}, 3] [1, 1] : tensor<?x3xf32> into tensor<?x6xf32>
  %0 = "tfn.pad"(%x, %v) {paddings = array<i64: 1, 2, 2, 1>} : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}

// CHECK-LABEL: func.func @fill
// CHECK-SAME: (%[[V:.*]]: tensor<f32>, %[[X:.*]]: tensor<?x4xf32>)
func.func @fill(%v: tensor<f32>, %x: tensor<?x4xf32>) -> (tensor<2x3xf32>, tensor<?x4xf32>) {
  // CHECK: %[[S:.*]] = tensor.extract %[[V]][] : tensor<f32>
  // CHECK: linalg.fill ins(%[[S]] : f32) outs(%{{.*}} : tensor<2x3xf32>)
  %0 = "tfn.fill"(%v) {shape = array<i64: 2, 3>} : (tensor<f32>) -> tensor<2x3xf32>
  // fill_like takes the dynamic sizes of its shape operand.
  // CHECK: tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
  // CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x4xf32>
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x4xf32>)
  %1 = "tfn.fill_like"(%x, %v) : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<?x4xf32>
}

// gather reads params with tensor.extract inside a linalg.generic over the output; a bad index is reported
// through the run-time error flag instead of reading out of bounds.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[P:.*]]: tensor<?x4xf32>, %[[I:.*]]: tensor<3xi32>)
func.func @gather(%x: tensor<?x4xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32> {
  // CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<3xi32>) outs(%{{.*}} : tensor<3x4xf32>)
  // CHECK: arith.index_cast %{{.*}} : i32 to index
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: tensor.extract %[[P]][%{{.*}}, %{{.*}}] : tensor<?x4xf32>
  %0 = "tfn.gather"(%x, %i) {axis = 0 : i64, batch_dims = 0 : i64} : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// The checked tensor itself; a failed condition reports its details through the error channel.
// CHECK-LABEL: func.func @check
func.func @check(%x: tensor<3xf32>, %ok: tensor<i1>, %n: tensor<i64>) -> tensor<3xf32> {
  // CHECK-SAME: %[[X:[^:]*]]: tensor<3xf32>
  // CHECK: arith.cmpi eq
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: return %[[X]] : tensor<3xf32>
  %0 = "tfn.check"(%x, %ok, %n) {message = "n = {0}"} : (tensor<3xf32>, tensor<i1>, tensor<i64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @one_hot
func.func @one_hot(%i: tensor<3xi32>, %on: tensor<f32>, %off: tensor<f32>) -> tensor<3x4xf32> {
  // CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4xf32>)
  // CHECK: %[[POS:.*]] = linalg.index 1 : index
  // CHECK: arith.cmpi eq
  // CHECK: arith.select
  %0 = "tfn.one_hot"(%i, %on, %off) {axis = -1 : i64, depth = 4 : i64} : (tensor<3xi32>, tensor<f32>, tensor<f32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// range: the length is computed at run time, a zero delta sets the error flag; a length past 1 GiB asks the
// machine's memory (sysconf) and one that does not fit sets the error flag and gives an empty tensor.
// CHECK-LABEL: func.func @range
func.func @range(%start: tensor<i32>, %limit: tensor<i32>, %delta: tensor<i32>) -> tensor<?xi32> {
  // CHECK: arith.ceildivui
  // CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: %[[BIG:.*]] = scf.if
  // CHECK: func.call @sysconf
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: %[[SAFE:.*]] = arith.select %[[BIG]], %{{.*}}, %[[N]] : index
  // CHECK: %[[E:.*]] = tensor.empty(%[[SAFE]]) : tensor<?xi32>
  // CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<?xi32>)
  // CHECK: linalg.index 0
  // CHECK: arith.muli
  // CHECK: arith.addi
  %0 = "tfn.range"(%start, %limit, %delta) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// x[1:, ::2]: bounds clamped at run time for the dynamic dimension.
// CHECK-LABEL: func.func @strided_slice
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
func.func @strided_slice(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  // CHECK: tensor.extract_slice %[[X]][%{{.*}}, %{{.*}}] [%{{.*}}, %{{.*}}] [1, 2] : tensor<?x4xf32> to tensor<?x?xf32>
  // CHECK: tensor.cast %{{.*}} : tensor<?x?xf32> to tensor<?x2xf32>
  %0 = "tfn.strided_slice"(%x) {begin = array<i64: 1, 0>, begin_mask = array<i64: 1>, dynamic_begin = array<i64>, dynamic_end = array<i64>, end = array<i64: 0, 0>, end_mask = array<i64: 0, 1>, new_axis = array<i64>, shrink_axis = array<i64>, strides = array<i64: 1, 2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// tensor_scatter_update: an scf.for over the index rows inserting each update row at run-time offsets
// (tfn_to_linalg_control_flow.mlir checks the bounds check and the in-place update in detail).
// CHECK-LABEL: func.func @tensor_scatter_update
func.func @tensor_scatter_update(%t: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x3xf32>)
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%{{.*}}, 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
  %0 = "tfn.tensor_scatter_update"(%t, %i, %u) : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// tensor_scatter_add: as tensor_scatter_update, each row added to the slice already there (repeated rows add up)
// CHECK-LABEL: func.func @tensor_scatter_add
func.func @tensor_scatter_add(%t: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x3xf32>)
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: %[[THERE:.*]] = tensor.extract_slice %[[ACC]][%{{.*}}, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
  // CHECK: linalg.generic {{.*}} ins(%[[THERE]], %{{.*}} : tensor<3xf32>, tensor<3xf32>)
  // CHECK: arith.addf
  // CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%{{.*}}, 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
  %0 = "tfn.tensor_scatter_add"(%t, %i, %u) : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// gather_nd: a linalg.generic over the result reading each index row, checked against params' dims
// CHECK-LABEL: func.func @gather_nd
func.func @gather_nd(%p: tensor<4x3xf32>, %i: tensor<?x1xi64>) -> tensor<?x3xf32> {
  // CHECK: linalg.generic
  // CHECK: linalg.index 0
  // CHECK: tensor.extract %{{.*}}[%{{.*}}, %c0{{.*}}] : tensor<?x1xi64>
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: scf.if
  // CHECK: tensor.extract %{{.*}} : tensor<4x3xf32>
  %0 = "tfn.gather_nd"(%p, %i) : (tensor<4x3xf32>, tensor<?x1xi64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// check_numerics: a linalg.reduce of each element's class (2 NaN, 1 Inf) reported through the error channel; the
// operand passes through
// CHECK-LABEL: func.func @check_numerics
func.func @check_numerics(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // CHECK: linalg.reduce ins(%[[X:.*]] : tensor<?x3xf32>) {{.*}} dimensions = [0, 1]
  // CHECK: arith.cmpf uno
  // CHECK: math.absf
  // CHECK: arith.maxsi
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: return %[[X]]
  %0 = "tfn.check_numerics"(%x) {message = "x"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// ensure_shape: each dynamic dim the expected shape names is compared with it, then a cast to the refined type
// CHECK-LABEL: func.func @ensure_shape
func.func @ensure_shape(%x: tensor<?x?xf32>) -> tensor<?x4xf32> {
  // CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %c1
  // CHECK: arith.cmpi ne, %[[D]], %c4
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: tensor.cast %{{.*}} : tensor<?x?xf32> to tensor<?x4xf32>
  %0 = "tfn.ensure_shape"(%x) {shape = array<i64: -1, 4>} : (tensor<?x?xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// print: a run-time callback through the exported function pointer (tfn_to_linalg_callbacks.mlir has the details)
// CHECK-LABEL: func.func @print
func.func @print(%x: tensor<3xi32>) {
  // CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<3xi32> to memref<3xi32>
  // CHECK: memref.get_global @tfn_callback_fn : memref<i64>
  // CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}) : !llvm.ptr, (i64, i64) -> i64
  "tfn.print"(%x) {prefix = "x: ", site = 0 : i64, stream = "stderr", suffix = "\0A", summarize = 3 : i64} : (tensor<3xi32>) -> ()
  return
}

// shape: tensor.dim of each dimension, cast to the result type, gathered by tensor.from_elements
// CHECK-LABEL: func.func @shape_of
func.func @shape_of(%x: tensor<?x3xf32>, %s: tensor<f32>) -> (tensor<2xi64>, tensor<2xi32>, tensor<0xi32>) {
  // CHECK: %[[D0:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x3xf32>
  // CHECK: %[[C0:.*]] = arith.index_cast %[[D0]] : index to i64
  // CHECK: %[[D1:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x3xf32>
  // CHECK: %[[C1:.*]] = arith.index_cast %[[D1]] : index to i64
  // CHECK: tensor.from_elements %[[C0]], %[[C1]] : tensor<2xi64>
  %0 = "tfn.shape"(%x) {out_type = i64} : (tensor<?x3xf32>) -> tensor<2xi64>
  // CHECK: index_cast %{{.*}} : index to i32
  // CHECK: tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xi32>
  %1 = "tfn.shape"(%x) {out_type = i32} : (tensor<?x3xf32>) -> tensor<2xi32>
  // CHECK: arith.constant dense<{{.*}}> : tensor<0xi32>
  %2 = "tfn.shape"(%s) {out_type = i32} : (tensor<f32>) -> tensor<0xi32>
  return %0, %1, %2 : tensor<2xi64>, tensor<2xi32>, tensor<0xi32>
}

// integer pow: repeated squaring in an scf.while (math.ipowi has no LLVM lowering); a negative exponent reports.
// CHECK-LABEL: func.func @int_pow
func.func @int_pow(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi32> {
  // CHECK: linalg.generic
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: scf.while
  // CHECK: arith.shrui
  // CHECK-NOT: math.ipowi
  %0 = "tfn.pow"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// ---- integer bit operations (tfn.random's generator)

// CHECK-LABEL: func.func @bitwise_xor
func.func @bitwise_xor(%x: tensor<?xi64>, %y: tensor<i64>) -> tensor<?xi64> {
  // CHECK: linalg.generic
  // CHECK: arith.xori %{{.*}}, %{{.*}} : i64
  %0 = "tfn.bitwise_xor"(%x, %y) : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// Philox 4x32-10: one generic over the 3 counter blocks with four i32 results (ten rounds of 32 x 32 -> 64-bit
// products), then one interleaving them into 4 x 3 words widened to i64, of which the first 10 are the draw,
// expanded to its shape.
// CHECK-LABEL: func.func @philox4x32
func.func @philox4x32(%lo: tensor<i64>, %hi: tensor<i64>, %k0: tensor<i64>, %k1: tensor<i64>) -> tensor<2x5xi64> {
  // CHECK: linalg.generic
  // CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>)
  // CHECK-SAME: outs({{.*}} : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>)
  // CHECK-COUNT-20: arith.mului_extended
  // CHECK-NOT: arith.mului_extended
  // CHECK: linalg.generic
  // CHECK: arith.extui %{{.*}} : i32 to i64
  // CHECK: tensor.collapse_shape {{.*}} into tensor<12xi64>
  // CHECK: tensor.extract_slice {{.*}}[0] [10] [1] : tensor<12xi64> to tensor<10xi64>
  // CHECK: tensor.expand_shape {{.*}} output_shape [2, 5] : tensor<10xi64> into tensor<2x5xi64>
  %0 = "tfn.philox4x32"(%lo, %hi, %k0, %k1) {shape = array<i64: 2, 5>} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x5xi64>
  return %0 : tensor<2x5xi64>
}

// A shape known at run time (-1: the next `dims` operand): a negative size or a product past int64 or the
// machine's memory is reported and the draw is empty; otherwise max(ceil(count / 4), 1) blocks, the first count
// words reshaped to the sizes (tensor.reshape: expand_shape takes one run-time size per group at most).
// CHECK-LABEL: func.func @philox4x32_runtime_shape
func.func @philox4x32_runtime_shape(%lo: tensor<i64>, %hi: tensor<i64>, %k0: tensor<i64>, %k1: tensor<i64>, %n: tensor<i64>, %m: tensor<i64>) -> tensor<?x3x?xi64> {
  // CHECK: arith.cmpi slt
  // CHECK: arith.cmpi slt
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: arith.cmpf oge
  // CHECK: call @sysconf
  // CHECK: arith.ceildivui
  // CHECK: linalg.generic
  // CHECK-SAME: outs({{.*}} : tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>)
  // CHECK: tensor.extract_slice {{.*}}[0] [%{{.*}}] [1] : tensor<?xi64> to tensor<?xi64>
  // CHECK: tensor.from_elements {{.*}} : tensor<3xi64>
  // CHECK: tensor.reshape {{.*}} -> tensor<?x3x?xi64>
  %0 = "tfn.philox4x32"(%lo, %hi, %k0, %k1, %n, %m) {shape = array<i64: -1, 3, -1>} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?x3x?xi64>
  return %0 : tensor<?x3x?xi64>
}

// Collectives: the replicas first agree on the operand's signature (dtype and shape: one all-reduce of 2 x i64 with
// MPI_MAX, a mismatch reported through the error channel), then MPI sums the operand's buffer in place (a writable
// to_buffer: bufferization copies the operand first if anything reads it afterwards); broadcast and all_gather sum
// integer bit patterns to which every replica but the sender contributes zeros. The helpers are declared here and
// defined by tfn-lower-mpi.
// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>, tensor<4x3xf32>) {
  // CHECK: call @tfn_mpi_comm_rank() : () -> i32
  // CHECK: call @tfn_mpi_allreduce_max_2xi64(%{{.*}}, %{{.*}}) : (memref<2xi64>, memref<2xi64>) -> ()
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: %[[X:.*]] = bufferization.to_buffer %{{.*}} : tensor<2x3xf32> to memref<2x3xf32>
  // CHECK-NOT: memref.alloc
  // CHECK: scf.if
  // CHECK-NEXT: func.call @tfn_mpi_inplace_sum_2x3xf32(%[[X]])
  // CHECK: bufferization.to_tensor %[[X]] restrict writable : memref<2x3xf32> to tensor<2x3xf32>
  %0 = "tfn.all_reduce"(%x) {reduction = "sum"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: call @tfn_mpi_comm_size() : () -> i32
  // CHECK: arith.select
  // CHECK: func.call @tfn_mpi_inplace_sum_4xi32
  %1 = "tfn.broadcast"(%i) {root = 0 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK: arith.bitcast %{{.*}} : f32 to i32
  // CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0] [2, 3] [1, 1] : tensor<2x3xi32> into tensor<4x3xi32>
  // CHECK: func.call @tfn_mpi_inplace_sum_4x3xi32
  // CHECK: arith.bitcast %{{.*}} : i32 to f32
  %2 = "tfn.all_gather"(%x) {replicas = 2 : i64} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<4xi32>, tensor<4x3xf32>
}

// argsort: the keys (a float made canonical, its bits with the low bits flipped when negative, all bits flipped for
// descending) and the positions (two linalg.generics), a scratch pair (bufferization.alloc_tensor: cse never makes
// the two one buffer), then per line (an scf.for over the leading dim) a choice by the line's length at run time:
// 64 elements or more by radix (one loop counting the 4 passes' 8-bit digits, the counts made start offsets, 4
// scatters), fewer by merge sort (runs of 16 sorted by insertion, then an scf.while of two merge passes per
// iteration, keys and positions to the scratch pair and back; stable: the left element is taken unless the right
// one is smaller). A line longer than int32 positions can count is reported when the function runs.
// CHECK-LABEL: func.func @argsort
func.func @argsort(%x: tensor<?x?xf32>) -> tensor<?x?xi32> {
  // CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<?x?xf32>) outs(%{{.*}} : tensor<?x?xi32>)
  // CHECK: arith.cmpf uno
  // CHECK: arith.constant 0x7FC00000 : f32
  // CHECK: arith.cmpf oeq
  // CHECK: arith.bitcast %{{.*}} : f32 to i32
  // CHECK: arith.shrsi
  // CHECK: arith.constant -1 : i32
  // CHECK: arith.xori
  // CHECK: linalg.generic
  // CHECK: linalg.index 1
  // CHECK: arith.cmpi ugt, %{{.*}}, %c2147483647
  // CHECK: memref.get_global @tfn_error_flag
  // CHECK: bufferization.alloc_tensor
  // CHECK: bufferization.alloc_tensor
  // CHECK: scf.for
  // CHECK: %[[MIN:.*]] = arith.constant 64 : index
  // CHECK: arith.cmpi uge, %{{.*}}, %[[MIN]]
  // CHECK: scf.if
  // CHECK: linalg.fill {{.*}} -> tensor<4x256xi64>
  // CHECK-COUNT-4: arith.andi %{{.*}}, %c255_i64
  // CHECK: scf.for {{.*}} to %c256
  // CHECK-COUNT-4: scf.for {{.*}} -> (tensor<?x?xi32>, tensor<?x?xi32>, tensor<4x256xi64>)
  // CHECK: } else {
  // CHECK: %[[C16:.*]] = arith.constant 16 : index
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C16]]
  // CHECK: scf.while
  // CHECK: scf.while
  // CHECK: scf.for
  // CHECK: scf.for
  // CHECK: arith.cmpi slt
  // CHECK: tensor.insert
  // CHECK: tensor.insert
  // CHECK: scf.for
  // CHECK: scf.for
  %0 = "tfn.argsort"(%x) {descending = true} : (tensor<?x?xf32>) -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}

// A line of known length takes one way only: 10 x 300 int64 keys by radix (8 passes), 5 uint8 by merge sort; an
// unsigned key has its top bit flipped (signed compare), a signed one is itself, ascending flips no bits
// CHECK-LABEL: func.func @argsort_long_int64
func.func @argsort_long_int64(%x: tensor<10x300xi64>) -> tensor<10x300xi32> {
  // CHECK-NOT: tfn_error_flag
  // CHECK-NOT: scf.if
  // CHECK: linalg.fill {{.*}} -> tensor<8x256xi64>
  // CHECK-NOT: scf.while
  // CHECK: return
  %0 = "tfn.argsort"(%x) {descending = false} : (tensor<10x300xi64>) -> tensor<10x300xi32>
  return %0 : tensor<10x300xi32>
}

// CHECK-LABEL: func.func @argsort_uint8
func.func @argsort_uint8(%x: tensor<5xui8>) -> tensor<5xi32> {
  // CHECK: linalg.generic
  // CHECK: arith.constant -128 : i8
  // CHECK-NEXT: arith.xori
  // CHECK-NEXT: linalg.yield
  // CHECK-NOT: linalg.fill
  // CHECK: scf.while
  %0 = "tfn.argsort"(%x) {descending = false} : (tensor<5xui8>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}
