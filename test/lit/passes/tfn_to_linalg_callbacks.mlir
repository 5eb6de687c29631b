// RUN: tfn-opt %s --tfn-to-linalg | FileCheck %s
// The result is valid input for the rest of the pipeline: the callback becomes an indirect llvm.call.
// RUN: tfn-opt %s --tfn-pipeline | FileCheck %s --check-prefix=LLVM

// ---- run-time callbacks: i64 tfn_callback_fn(i64 site, i64 args) through an exported function pointer

// CHECK: memref.global "public" @tfn_callback_fn : memref<i64> = dense<0>
// LLVM: llvm.mlir.global external @tfn_callback_fn(0 : i64) {{.*}} : i64

// CHECK-LABEL: func.func @print
func.func @print(%x: tensor<2x?xf32>) {
  // one argument array per site, on the stack of the function's entry block:
  // [n_in, n_out, phase, dtype code, rank, pointer, dims...]
  // CHECK: %[[ARGS:.*]] = memref.alloca() : memref<8xi64>
  // CHECK: %[[BUF:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x?xf32> to memref<2x?xf32>
  // CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]]
  // CHECK: %[[FN:.*]] = memref.get_global @tfn_callback_fn : memref<i64>
  // CHECK: %[[F:.*]] = memref.load %[[FN]][] : memref<i64>
  // CHECK: %[[FP:.*]] = llvm.inttoptr %[[F]] : i64 to !llvm.ptr
  // CHECK: %[[SITE:.*]] = arith.constant 3 : i64
  // CHECK: %[[STATUS:.*]] = llvm.call %[[FP]](%[[SITE]], %{{.*}}) : !llvm.ptr, (i64, i64) -> i64
  // a failed handler (nonzero status) sets the run-time error flag to -1 (loops stop; the call raises its error)
  // CHECK: %[[FAILED:.*]] = arith.cmpi ne, %[[STATUS]], %{{.*}} : i64
  // CHECK: scf.if %[[FAILED]]
  // CHECK: memref.get_global @tfn_error_flag : memref<i32>
  // CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<i32>
  // LLVM-LABEL: llvm.func @print
  // LLVM: %[[G:.*]] = llvm.mlir.addressof @tfn_callback_fn : !llvm.ptr
  // LLVM: llvm.load %[[G]]
  // LLVM: llvm.call %{{.*}}(%{{.*}}, %{{.*}}) : !llvm.ptr, (i64, i64) -> i64
  "tfn.print"(%x) {prefix = "x: ", site = 3 : i64, stream = "stderr", suffix = "\0A", summarize = 3 : i64} : (tensor<2x?xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @py_function
func.func @py_function(%a: tensor<f32>, %b: tensor<3xi1>) -> tensor<?xf32> {
  // phase 0 runs the function and writes the result's dims; compiled code allocates the result; phase 1 fills it
  // CHECK: llvm.call
  // CHECK: %[[N:.*]] = memref.load %{{.*}}[%c{{.*}}] : memref<{{.*}}xi64>
  // CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
  // CHECK: %[[R:.*]] = memref.alloc(%[[NI]]) : memref<?xf32>
  // CHECK: llvm.call
  // CHECK: bufferization.to_tensor %[[R]] restrict writable : memref<?xf32> to tensor<?xf32>
  // CHECK-NOT: call @py_function_0
  %r = func.call @py_function_0(%a, %b) : (tensor<f32>, tensor<3xi1>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
// CHECK-NOT: func.func private @py_function_0
func.func private @py_function_0(tensor<f32>, tensor<3xi1>) -> tensor<?xf32> attributes {tfn.site = 0 : i64}

// CHECK-LABEL: func.func @strings
// string tensors are i64 handles; ops on them call the runtime's own sites (< 0)
// CHECK-SAME: (%{{.*}}: tensor<2xi64>) -> tensor<2xi8>
func.func @strings(%s: tensor<2x!tfn.string>) -> tensor<2xi1> {
  // CHECK: arith.constant dense<[97, 98]> : tensor<2xi8>
  // CHECK: arith.constant -4 : i64
  // CHECK: tensor.reshape
  // CHECK: arith.constant -1 : i64
  // CHECK: arith.constant -2 : i64
  %c = "tfn.constant"() {value = dense<"ab"> : tensor<!tfn.string>} : () -> tensor<!tfn.string>
  %t = "tfn.add"(%s, %c) : (tensor<2x!tfn.string>, tensor<!tfn.string>) -> tensor<2x!tfn.string>
  %e = "tfn.equal"(%t, %s) : (tensor<2x!tfn.string>, tensor<2x!tfn.string>) -> tensor<2xi1>
  return %e : tensor<2xi1>
}
