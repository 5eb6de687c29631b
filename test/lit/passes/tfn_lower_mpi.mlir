// RUN: tfn-opt %s --tfn-lower-mpi | FileCheck %s
// Each declared helper becomes an LLVM function calling MPI with MPICH's constants (MPI_COMM_WORLD = 0x44000000,
// MPI_FLOAT = 0x4c00040a, MPI_SUM = 0x58000003); the count is the buffer's element count (a 2x3 buffer is
// passed as 6 elements). Other functions are left alone.
// RUN: tfn-opt %s --tfn-lower-mpi | FileCheck %s --check-prefix=KEEP
// (The pipeline runs it on the LLVM dialect, where the declarations are llvm.func: tfn_lower_to_llvm.mlir.)

// CHECK-DAG: llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-DAG: llvm.func @MPI_Comm_rank(i32, !llvm.ptr) -> i32
// CHECK-DAG: llvm.mlir.global weak @tfn_shm_allreduce_hook() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-LABEL: llvm.func @tfn_mpi_allreduce_sum_2x3xf32
// CHECK: llvm.mlir.constant(1140850688 : i64)
// CHECK: llvm.mlir.constant(6 : index)
// CHECK-DAG: llvm.mlir.constant(1275069450 : i32)
// CHECK-DAG: llvm.mlir.constant(1476395011 : i32)
// CHECK: llvm.call @MPI_Allreduce
// In place (tfn_mpi_inplace_*): one buffer, passed as the receive buffer, with MPI_IN_PLACE (MPICH: -1) as the
// send buffer. A sum first calls the shared-memory all-reduce the weak global tfn_shm_allreduce_hook holds (set by
// the runtime in a job on one machine) with the buffer's address, its element count and kind (1: f32), and calls
// MPI only while the hook is null or when it returns non-zero.
// CHECK-LABEL: llvm.func @tfn_mpi_inplace_sum_4x2xf32
// CHECK-DAG: %[[KIND:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[COUNT:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-DAG: %[[AT:.*]] = llvm.mlir.addressof @tfn_shm_allreduce_hook : !llvm.ptr
// CHECK: %[[HOOK:.*]] = llvm.load %[[AT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[UNSET:.*]] = llvm.icmp "eq" %[[HOOK]]
// CHECK: llvm.cond_br %[[UNSET]], ^[[MPI:bb[0-9]+]], ^[[SHARED:bb[0-9]+]]
// CHECK: ^[[SHARED]]:
// CHECK: %[[RC:.*]] = llvm.call %[[HOOK]](%{{.*}}, %[[COUNT]], %[[KIND]]) : !llvm.ptr, (!llvm.ptr, i64, i32) -> i32
// CHECK: llvm.cond_br %{{.*}}, ^[[END:bb[0-9]+]], ^[[MPI]]
// CHECK: ^[[MPI]]:
// CHECK: %[[MINUS_ONE:.*]] = llvm.mlir.constant(-1 : i64) : i64
// CHECK-NEXT: %[[IN_PLACE:.*]] = llvm.inttoptr %[[MINUS_ONE]] : i64 to !llvm.ptr
// CHECK: llvm.call @MPI_Allreduce(%[[IN_PLACE]],
// CHECK: ^[[END]]:
// CHECK-NEXT: llvm.return
// Other reductions (max) go to MPI directly.
// CHECK-LABEL: llvm.func @tfn_mpi_inplace_max_4xf32
// CHECK-NOT: tfn_shm_allreduce_hook
// CHECK: llvm.call @MPI_Allreduce
// CHECK-LABEL: llvm.func @tfn_mpi_comm_rank() -> i32
// CHECK: llvm.call @MPI_Comm_rank
// CHECK-LABEL: llvm.func @tfn_mpi_comm_size() -> i32
// CHECK: llvm.call @MPI_Allreduce
// KEEP: func.func @user(
// KEEP-NOT: MPI_
func.func private @tfn_mpi_allreduce_sum_2x3xf32(memref<2x3xf32>, memref<2x3xf32>)
func.func private @tfn_mpi_inplace_sum_4x2xf32(memref<4x2xf32>)
func.func private @tfn_mpi_inplace_max_4xf32(memref<4xf32>)
func.func private @tfn_mpi_comm_rank() -> i32
func.func private @tfn_mpi_comm_size() -> i32
func.func @user() {
  return
}
