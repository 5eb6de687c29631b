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
// In place (tfn_mpi_inplace_*): one buffer, passed as the receive buffer, with MPI_IN_PLACE (MPICH: -1) as the
// send buffer.
// CHECK-LABEL: llvm.func @tfn_mpi_inplace_sum_4x2xf32
// CHECK: llvm.mlir.constant(8 : index)
// CHECK: %[[MINUS_ONE:.*]] = llvm.mlir.constant(-1 : i64) : i64
// CHECK-NEXT: %[[IN_PLACE:.*]] = llvm.inttoptr %[[MINUS_ONE]] : i64 to !llvm.ptr
// CHECK: llvm.call @MPI_Allreduce(%[[IN_PLACE]],
// CHECK-LABEL: llvm.func @tfn_mpi_comm_rank() -> i32
// CHECK: llvm.call @MPI_Comm_rank
// CHECK-LABEL: llvm.func @tfn_mpi_comm_size() -> i32
// CHECK: llvm.call @MPI_Allreduce
// KEEP: func.func @user(
// KEEP-NOT: MPI_
func.func private @tfn_mpi_allreduce_sum_2x3xf32(memref<2x3xf32>, memref<2x3xf32>)
func.func private @tfn_mpi_inplace_sum_4x2xf32(memref<4x2xf32>)
func.func private @tfn_mpi_comm_rank() -> i32
func.func private @tfn_mpi_comm_size() -> i32
func.func @user() {
  return
}
