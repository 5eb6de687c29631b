// RUN: tfn-opt %s --tfn-to-linalg | FileCheck %s
// The result is valid input for the rest of the pipeline: the producer is called through a pointer.
// RUN: tfn-opt %s --tfn-pipeline | FileCheck %s --check-prefix=LLVM

// ---- a loop over a dataset argument: its state words (dialects/abi.py) name the pipeline's producer

// CHECK-LABEL: func.func @loop
func.func @loop(%state: tensor<?xi64>) -> tensor<f32> {
  %zero = "tfn.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %k0 = "tfn.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %r:2 = scf.while (%k = %k0, %s = %zero) : (tensor<i64>, tensor<f32>) -> (tensor<i64>, tensor<f32>) {
    // fetch: only while k < the length word (2), store k (word 5) and the loop (word 10), call the producer (word 0)
    // with its args (word 1), then read the status (word 4) and the producer's error flag through its slot (word 3)
    // CHECK: %[[BUF:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?xi64> to memref<?xi64>
    // CHECK: %[[N:.*]] = memref.load %[[BUF]][%c2{{.*}}] : memref<?xi64>
    // CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : i64
    // CHECK: scf.if %[[IN]] -> (i1)
    // results an earlier element left untaken (word 11: its loop was left by `break`) are freed first
    // CHECK: %[[PENDING:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
    // CHECK: arith.cmpi ne, %[[PENDING]]
    // CHECK: llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr) -> ()
    // CHECK: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
    // CHECK: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
    // CHECK: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
    // CHECK: %[[FN:.*]] = memref.load %[[BUF]][%c0{{.*}}] : memref<?xi64>
    // CHECK: llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr) -> ()
    // CHECK: %[[STATUS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
    // CHECK: %[[GAVE:.*]] = arith.cmpi sgt, %[[STATUS]]
    // CHECK: %[[P:.*]] = arith.extui %[[GAVE]] : i1 to i64
    // CHECK: llvm.store %[[P]], %{{.*}} : i64, !llvm.ptr
    // CHECK: %[[SLOT:.*]] = memref.load %[[BUF]][%c3{{.*}}] : memref<?xi64>
    // CHECK: llvm.call %{{.*}}() : !llvm.ptr, () -> !llvm.ptr
    // CHECK: llvm.load %{{.*}} : !llvm.ptr -> i32
    // a failed producer: the error site (7) raises its error, the loop stops
    // CHECK: arith.constant 7 : i64
    // CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}) : !llvm.ptr, (i64, i64) -> i64
    // CHECK-NOT: call @dataset_fetch
    %has = func.call @dataset_fetch_7(%state, %k) : (tensor<?xi64>, tensor<i64>) -> tensor<i1>
    %c = tensor.extract %has[] : tensor<i1>
    scf.condition(%c) %k, %s : tensor<i64>, tensor<f32>
  } do {
  ^bb0(%k: tensor<i64>, %s: tensor<f32>):
    // take: per component, a buffer of its own (dims from the producer's results struct), memcpy (word 9) into
    // it, free (word 8) the producer's unless a constant/input (0xDEADBEEF) or returned before
    // CHECK: %[[D:.*]] = arith.index_cast %{{.*}} : i64 to index
    // CHECK: %[[M:.*]] = memref.alloc(%[[D]]) : memref<?x3xf32>
    // CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    // CHECK: arith.constant 3735928559 : i64
    // CHECK: llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr) -> ()
    // CHECK: bufferization.to_tensor %[[M]] restrict writable : memref<?x3xf32> to tensor<?x3xf32>
    // a bool component: bytes, as compiled code stores bools
    // CHECK: memref.alloc() : memref<i8>
    // nothing pending once taken
    // CHECK: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
    // CHECK-NOT: call @dataset_take
    %x:2 = func.call @dataset_take_7(%state) : (tensor<?xi64>) -> (tensor<?x3xf32>, tensor<i1>)
    %one = "tfn.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %k1 = "tfn.add"(%k, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %t = "tfn.reduce_sum"(%x#0) {axis = array<i64: 0, 1>, keepdims = false} : (tensor<?x3xf32>) -> tensor<f32>
    %s1 = "tfn.add"(%s, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %k1, %s1 : tensor<i64>, tensor<f32>
  }
  return %r#1 : tensor<f32>
}
// CHECK-NOT: func.func private @dataset_
func.func private @dataset_fetch_7(tensor<?xi64>, tensor<i64>) -> tensor<i1> attributes {tfn.dataset = array<i64: 0, 7, 7, 2, 0>}
func.func private @dataset_take_7(tensor<?xi64>) -> (tensor<?x3xf32>, tensor<i1>) attributes {tfn.dataset = array<i64: 1, 7, 7, 2, 0>}

// LLVM-LABEL: llvm.func @loop
// LLVM: llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr) -> ()
// LLVM: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
