// RUN: tfn-opt %s --tfn-lower-mpi | FileCheck %s
// Each declared helper becomes an LLVM function calling MPI with MPICH's constants (MPI_COMM_WORLD = 0x44000000,
// MPI_FLOAT = 0x4c00040a, MPI_SUM = 0x58000003); the count is the buffer's element count (a 2x3 buffer is
// passed as 6 elements). Other functions are left alone.
// RUN: tfn-opt %s --tfn-lower-mpi | FileCheck %s --check-prefix=KEEP
// (The pipeline runs it on the LLVM dialect, where the declarations are llvm.func: tfn_lower_to_llvm.mlir.)

// CHECK-DAG: llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-DAG: llvm.func @MPI_Comm_rank(i32, !llvm.ptr) -> i32
// CHECK-LABEL: llvm.func @tfn_mpi_allreduce_sum_2x3xf32
// CHECK: llvm.mlir.constant(1140850688 : i64)
// CHECK: llvm.mlir.constant(6 : index)
// CHECK-DAG: llvm.mlir.constant(1275069450 : i32)
// CHECK-DAG: llvm.mlir.constant(1476395011 : i32)
// CHECK: llvm.call @MPI_Allreduce
// CHECK-LABEL: llvm.func @tfn_mpi_comm_rank() -> i32
// CHECK: llvm.call @MPI_Comm_rank
// CHECK-LABEL: llvm.func @tfn_mpi_comm_size() -> i32
// CHECK: llvm.call @MPI_Allreduce
// KEEP: func.func @user(
// KEEP-NOT: MPI_
func.func private @tfn_mpi_allreduce_sum_2x3xf32(memref<2x3xf32>, memref<2x3xf32>)
func.func private @tfn_mpi_comm_rank() -> i32
func.func private @tfn_mpi_comm_size() -> i32
func.func @user() {
  return
}
