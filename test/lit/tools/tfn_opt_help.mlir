// RUN: tfn-opt --help | FileCheck %s
// RUN: tfn-opt -h | FileCheck %s
// RUN: tfn-opt --help | FileCheck %s --check-prefix=OPTS

// CHECK: usage: tfn-opt
// CHECK: --split-input-file
// CHECK: --verify-diagnostics
// CHECK: --mlir-print-ir-after-all
// CHECK-LABEL: tfn passes:
// CHECK-DAG: --tfn-verify{{ +}}Verify tfn ops against the type rules of the op table
// CHECK-DAG: --tfn-to-linalg{{ +}}Lower tfn ops to linalg
// CHECK-DAG: --tfn-mark-readonly-args{{ +}}Mark public function arguments
// CHECK-DAG: --tfn-gpu-generalize{{ +}}Rewrite tensor.pad, tensor.concat, tensor.insert_slice
// CHECK-DAG: --tfn-gpu-tile{{ +}}Tile elementwise linalg ops on tensors
// CHECK-DAG: --tfn-gpu-map{{ +}}Map tiled foralls to gpu.launch
// CHECK-DAG: --tfn-gpu-device-buffers{{ +}}Host side of GPU functions on device buffers
// CHECK-DAG: --tfn-gpu-emulate{{ +}}Emulate mapped gpu.launch kernels on the CPU
// CHECK-LABEL: tfn pipelines:
// CHECK-DAG: --tfn-lower-to-linalg{{ +}}Stage `linalg`
// CHECK-DAG: --tfn-bufferize{{ +}}Stage `bufferized`
// CHECK-DAG: --tfn-lower-to-llvm{{ +}}Stage `llvm`
// CHECK-DAG: --tfn-pipeline{{ +}}The whole CPU pipeline
// CHECK-DAG: --tfn-gpu-mapped{{ +}}GPU stage `mapped`
// CHECK-DAG: --tfn-gpu-nvvm{{ +}}The whole GPU pipeline for sm_90
// CHECK-DAG: --tfn-gpu-emulation{{ +}}The GPU kernels emulated on the CPU
// CHECK: Options go as --<pass>=<name>=<value>
// CHECK: Any upstream MLIR pass works

// Each tfn pass's options follow it (passes in name order), with their defaults on this machine's target.
// OPTS: --tfn-async-parallel{{ +}}Lower scf.forall loops
// OPTS-NEXT: {{^ +}}workers=<uint>{{ +}}worker threads {{.*}}[here: {{[0-9]+}}]
// OPTS: --tfn-gpu-emulate{{ +}}Emulate mapped gpu.launch
// OPTS-NEXT: {{^ +}}warp-size=<uint>{{ +}}threads of one warp{{.*}}[here: 32]
// OPTS-NEXT: --tfn-gpu-generalize{{ +}}Rewrite tensor.pad
// OPTS-NEXT: --tfn-gpu-map{{ +}}Map tiled foralls
// OPTS-NEXT: {{^ +}}block-size=<uint>{{ +}}threads per block{{.*}}[here: 256]
// OPTS-NEXT: {{^ +}}matmul-tile=<uint>{{ +}}the matmul kernel's threads per side{{.*}}[here: 16]
// OPTS-NEXT: {{^ +}}matmul-per-thread=<uint>{{ +}}outputs per side{{.*}}[here: 4]
// OPTS-NEXT: {{^ +}}warp-size=<uint>
// OPTS-NEXT: {{^ +}}guard-slack=<int>{{ +}}test hook{{.*}}[here: 0]
// OPTS-NEXT: --tfn-gpu-tile{{ +}}Tile elementwise
// OPTS-NEXT: {{^ +}}block-size=<uint>
// OPTS-NEXT: {{^ +}}dynamic-blocks=<uint>{{ +}}blocks of an elementwise kernel{{.*}}[here: 528]
// OPTS: --tfn-pack-matmul{{ +}}Rewrite large static f32 matmul
// OPTS-NEXT: {{^ +}}vector-bits=<uint>{{ +}}width of a vector register in bits {{.*}}[here: {{128|256|512}}]
// OPTS-NEXT: {{^ +}}vector-registers=<uint>{{ +}}number of vector registers {{.*}}[here: {{16|32}}]
// OPTS-NEXT: {{^ +}}workers=<uint>
// OPTS-NEXT: {{^ +}}tasks-per-worker=<uint>{{ +}}parallel tasks per worker thread {{.*}}[here: 4]
// OPTS-NEXT: {{^ +}}min-parallel-flops=<uint>{{ +}}least flops of a contraction split {{.*}}[here: 33554432]
// OPTS-NEXT: {{^ +}}min-epilogue-elements=<uint>{{ +}}least elements of a matmul{{.*}}[here: 65536]
// OPTS: --tfn-parallelize{{ +}}Tile big static linalg
// OPTS-NEXT: {{^ +}}workers=<uint>
// OPTS-NEXT: {{^ +}}tasks-per-worker=<uint>
// OPTS-NEXT: --tfn-polynomial-approximation
// OPTS: --tfn-to-linalg{{ +}}Lower tfn ops to linalg
// OPTS-NEXT: {{^ +}}verify=<uint>{{ +}}1: verify the tfn ops first{{.*}}[here: 1]
// OPTS-NEXT: --tfn-vectorize-depthwise{{ +}}Depthwise convolutions
// OPTS-NEXT: {{^ +}}vector-bits=<uint>
// OPTS-NEXT: {{^ +}}vector-registers=<uint>
// OPTS-NEXT: --tfn-vectorize-elementwise{{ +}}Tile compute-heavy
// OPTS-NEXT: {{^ +}}lanes=<uint>{{ +}}f32 lanes of one vector op
// OPTS-NEXT: {{^ +}}vector-bits=<uint>{{ +}}width of a vector register
// OPTS: --tfn-vectorize-reductions{{ +}}Rewrite f32 sum
// OPTS-NEXT: {{^ +}}lanes=<uint>
// OPTS-NEXT: {{^ +}}workers=<uint>
// OPTS-NEXT: {{^ +}}tasks-per-worker=<uint>
// OPTS-NEXT: --tfn-verify
// OPTS: Options go as --<pass>=<name>=<value>
