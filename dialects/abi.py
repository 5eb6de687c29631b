"""The contract between compiled tfn code and the runtime: exported globals, their layouts and agreed codes.

Both sides import it: the lowerings that emit the globals and calls (passes/lowering/runtime_errors.py,
passes/lowering/callbacks.py), the runtime that reads and sets them (runtime/executable.py, runtime/callbacks.py),
and the frontend that declares callback sites while tracing (frontend/ops/py_function.py).

Error channel: a shared object that can report a bad run-time value defines `@tfn_error_flag : memref<i32>` (0, or
the code of the first error of the current call) and `@tfn_error_detail : memref<8xi64>` (up to DETAIL_LEN
integers the op's error formatter reads), one copy per thread (passes/tfn_thread_local_errors.py), and exports the
functions SLOT_FUNCTIONS that give the calling thread's copies. A positive code k names the k-th op (1-based,
pre-order walk) among the traced module's tfn ops that may fail; CALLBACK_FAILED is recorded when a callback's
handler failed, ALLOC_FAILED when a heap allocation failed (the function then returns at once, its results zeroed).
The runtime clears its thread's copy before a call, reads it after, restores what it found (a nested call) and
raises.

Callbacks: compiled code calls `i64 fn(i64 site, i64 args)` through the pointer in the exported global
`@tfn_callback_fn : memref<i64>`, which the runtime sets after loading. `args` points to the i64 array
`[n_in, n_out, phase, operand..., result...]` (CALLBACK_HEADER words, then per operand and result
`[dtype code, rank, data pointer, dims...]`, the dtype code being its index in DTYPES). Sites >= 0 index the traced
function's handlers; sites < 0 are the runtime's own (BUILTIN_*). A nonzero result means the handler failed.
"""
from mlir import ir
from mlir.dialects import func as func_d

from tfn.dialects import dtypes

ERROR_FLAG = "tfn_error_flag"
ERROR_DETAIL = "tfn_error_detail"
# The exported functions giving the calling thread's copy of each (`void *fn(void)`, passes/tfn_thread_local_errors.py)
SLOT_FUNCTIONS = {ERROR_FLAG: "tfn_error_flag_slot", ERROR_DETAIL: "tfn_error_detail_slot"}
DETAIL_LEN = 8
CALLBACK_FAILED = -1  # the error code a failed callback records (the runtime raises the handler's own error)
# The error code of a heap allocation that failed or would exceed the machine's memory (passes/tfn_check_allocs.py);
# details: [the allocation's ordinal among the bufferized module's memref.alloc ops (pre-order), its dims...].
ALLOC_FAILED = -2

CALLBACK_FN = "tfn_callback_fn"
CALLBACK_HEADER = 3
DTYPES = dtypes.ALL
BUILTIN_STRING_CONCAT = -1
BUILTIN_STRING_EQUAL = -2
BUILTIN_STRING_NOT_EQUAL = -3
BUILTIN_STRING_CONSTANT = -4

# On a private func.func declaration: the callback site a traced `func.call` of it runs (its integer value).
SITE_ATTR = "tfn.site"


def dtype_code(dtype):
    """The number a dtype has in the callback argument array."""
    return DTYPES.index(dtypes.as_dtype(dtype))


def declare_site(module, name, site, in_types, out_types):
    """Add `func.func private @name(...) attributes {tfn.site}` to the module (tfn types); returns it."""
    with ir.InsertionPoint(module.body):
        fn = func_d.FuncOp(name, ir.FunctionType.get([t.to_mlir() for t in in_types],
                                                     [t.to_mlir() for t in out_types]), visibility="private")
    fn.attributes[SITE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), site)
    return fn

# Dataset arguments of a tfn.function (frontend/data/native.py makes them at each call, passes/lowering/
# dataset_calls.py reads them): a 1-D int64 tensor of state words. Compiled code asks for element k by storing k
# at DATASET_K and calling `void fn(void **args)`, the pipeline's own compiled function (its packed C interface:
# args[0] -> the results struct, args[1] -> k's descriptor, then the source tensors' descriptors) or a Python one
# that pulls from the pipeline's Python iterator. The results struct holds one descriptor per component,
# {allocated, aligned, offset, sizes[r], strides[r]}; compiled code copies each into a buffer of its own and frees
# `allocated` with DATASET_FREE unless it is DATASET_SENTINEL (a constant, or an input: inputs are passed with it)
# or a buffer an earlier component already returned.
DATASET_FN = 0  # void fn(void **args): the producer
DATASET_ARGS = 1  # the args it is called with
DATASET_LENGTH = 2  # how many elements there are (DATASET_ENDLESS: as many as the producer gives)
DATASET_SLOT = 3  # i32 *slot(void): the producer's error flag for the calling thread (a compiled producer), or 0
DATASET_STATUS = 4  # 1 after the producer gave element k, 0 when it had none, -1 when it failed
DATASET_K = 5  # the index of the element asked for
DATASET_RESULTS = 6  # the address of the results struct
DATASET_HANDLE = 7  # the handle (frontend/data/handles.py) of the call's Python object (its errors, its dataset)
DATASET_FREE = 8  # libc's free
DATASET_COPY = 9  # libc's memcpy
DATASET_LOOP = 10  # which loop asks (a Python producer keeps one iterator per loop of the trace)
DATASET_PENDING = 11  # 1 while the results hold buffers no take has copied and freed yet (a loop left by `break`)
DATASET_HEADER = 12
DATASET_ENDLESS = 1 << 62
DATASET_SENTINEL = 0xDEADBEEF  # memref.get_global's `allocated`, and what inputs are passed with
# On a private func.func declaration: a traced call asking a dataset argument for element k ("fetch": has it one?)
# or for that element ("take"); its value is [kind, loop, error site (the callback site that raises the error),
# the components' ranks...].
DATASET_ATTR = "tfn.dataset"
DATASET_FETCH, DATASET_TAKE = 0, 1
