// The bufferized output of tfn-gpu-tile goes through tfn-gpu-map: launch dimensions, shared memory, barriers and
// shuffles; the second run outlines the kernels and lowers them to NVVM (the nvvm ops they become).
// RUN: tfn-opt %s -p 'builtin.module(tfn-gpu-tile, tfn-mark-readonly-args, one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, canonicalize, tfn-gpu-map{block-size=256 matmul-tile=16 warp-size=32}, canonicalize)' | FileCheck %s
// RUN: tfn-opt %s -p 'builtin.module(tfn-gpu-tile, tfn-mark-readonly-args, one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, canonicalize, tfn-gpu-map{matmul-tile=8 matmul-per-thread=1}, canonicalize)' | FileCheck %s --check-prefix=T8
// RUN: tfn-opt %s -p 'builtin.module(tfn-gpu-tile, tfn-mark-readonly-args, one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, canonicalize, tfn-gpu-map, convert-linalg-to-loops, lower-affine, cse, canonicalize, gpu-kernel-outlining, gpu.module(convert-gpu-to-nvvm))' | FileCheck %s --check-prefix=NVVM

// Elementwise: 3700 elements in 15 blocks of 256 threads, one element each (transform.gpu mapping).
// CHECK-LABEL: func.func @chain
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C15]], {{.*}} = %[[C1]], {{.*}} = %[[C1]]) threads({{.*}}) in ({{.*}} = %[[C256]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// CHECK: gpu.thread_id  x
// CHECK: math.tanh
// CHECK-LABEL: func.func @bcast
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c37, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// Row reduction: one block of 256 threads per row (37 rows); 8 warps' partials in shared memory.
// CHECK-LABEL: func.func @rowsum
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c37, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[SH:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} step %c256 iter_args
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: memref.store %{{.*}}, %[[SH]][%{{.*}}] : memref<8xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load %[[SH]]
// CHECK: gpu.shuffle  xor
// Full reduction of 7007 elements: a one-thread fill, 4 blocks of partials, then one block combines them.
// CHECK-LABEL: func.func @fullmax
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// CHECK: arith.maximumf
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// Column reduction: a thread per column (2 blocks of 256 for 300 columns), each looping over the 37 rows.
// CHECK-LABEL: func.func @colsum
// CHECK: gpu.launch
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// CHECK: scf.for {{.*}} = %c0 to %c37 step %c1 iter_args
// Matmul 37x50 @ 50x29: one block (a 64 x 64 tile of C) of 16 x 16 threads, each computing 4 x 4 outputs; a 64 x 16
// tile of A and a 16 x 64 tile of B in shared memory per k step, 16 accumulators carried by the k loop (registers),
// a barrier after loading the tiles and one after using them; the product is unrolled into 16 FMAs.
// CHECK-LABEL: func.func @matmul
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c16, {{.*}} = %c16, {{.*}} = %c1) workgroup(%[[AS:.*]] : memref<64x16xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x64xf32, #gpu.address_space<workgroup>>) {
// CHECK: %{{.*}}:16 = scf.for {{.*}} = %c0 to %c50 step %c16 iter_args(
// CHECK: memref.store %{{.*}}, %[[AS]]
// CHECK: memref.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK: %{{.*}}:16 = scf.for {{.*}} = %c0 to %c16 step %c1 iter_args(
// CHECK-COUNT-16: math.fma
// CHECK: gpu.barrier
// One output per thread with 8 x 8 threads: 4 x 5 blocks.
// T8-LABEL: func.func @matmul
// T8: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}} = %c5, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c8, {{.*}} = %c8, {{.*}} = %c1) workgroup({{.*}} : memref<8x8xf32, #gpu.address_space<workgroup>>

// NVVM-LABEL: gpu.module @chain_kernel
// NVVM: llvm.func @chain_kernel({{.*}}gpu.known_block_size = array<i32: 256, 1, 1>, gpu.known_grid_size = array<i32: 15, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// NVVM: nvvm.read.ptx.sreg.ctaid.x
// NVVM: nvvm.read.ptx.sreg.tid.x
// NVVM-LABEL: gpu.module @rowsum_kernel_0
// NVVM: llvm.mlir.global internal @__wg_rowsum_kernel_0() {addr_space = 3 : i32} : !llvm.array<8 x f32>
// NVVM: gpu.known_block_size = array<i32: 256, 1, 1>, gpu.known_grid_size = array<i32: 1, 37, 1>
// NVVM: nvvm.shfl.sync  bfly
// NVVM: llvm.store {{.*}} !llvm.ptr<3>
// NVVM: nvvm.barrier0
// NVVM: llvm.load {{.*}} !llvm.ptr<3>
// NVVM: nvvm.shfl.sync  bfly
// NVVM-LABEL: gpu.module @matmul_kernel_4
// NVVM: llvm.mlir.global internal @__wg_matmul_kernel_0() {addr_space = 3 : i32} : !llvm.array<1024 x f32>
// NVVM: llvm.mlir.global internal @__wg_matmul_kernel_1() {addr_space = 3 : i32} : !llvm.array<1024 x f32>
// NVVM: gpu.known_block_size = array<i32: 16, 16, 1>, gpu.known_grid_size = array<i32: 1, 1, 1>
// NVVM: nvvm.read.ptx.sreg.tid.y
// NVVM: nvvm.barrier0
// NVVM: nvvm.barrier0
func.func @chain(%x: tensor<37x100xf32>, %y: tensor<37x100xf32>) -> tensor<37x100xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<37x100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<37x100xf32>, tensor<37x100xf32>) outs(%e : tensor<37x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %t = math.tanh %m : f32
    %s = arith.subf %t, %one : f32
    linalg.yield %s : f32
  } -> tensor<37x100xf32>
  return %r : tensor<37x100xf32>
}

func.func @bcast(%x: tensor<37x100xf32>, %v: tensor<100xf32>) -> tensor<37x100xf32> {
  %e = tensor.empty() : tensor<37x100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %v : tensor<37x100xf32>, tensor<100xf32>) outs(%e : tensor<37x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<37x100xf32>
  return %r : tensor<37x100xf32>
}

func.func @rowsum(%x: tensor<37x100xf32>) -> tensor<37xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37xf32>) -> tensor<37xf32>
  %r = linalg.reduce ins(%x : tensor<37x100xf32>) outs(%f : tensor<37xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<37xf32>
}

func.func @fullmax(%x: tensor<7x1001xf32>) -> tensor<f32> {
  %low = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%low : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%x : tensor<7x1001xf32>) outs(%f : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

func.func @colsum(%x: tensor<37x300xf32>) -> tensor<300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<300xf32>) -> tensor<300xf32>
  %r = linalg.reduce ins(%x : tensor<37x300xf32>) outs(%f : tensor<300xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<300xf32>
}

func.func @matmul(%a: tensor<37x50xf32>, %b: tensor<50x29xf32>) -> tensor<37x29xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x29xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.matmul ins(%a, %b : tensor<37x50xf32>, tensor<50x29xf32>) outs(%f : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}
