"""tfn-async-parallel: run the scf.forall loops of tfn-parallelize / tfn-vectorize-kernels as tasks of an async runtime.

Upstream passes lower the loops: scf-forall-to-parallel, then async-parallel-for (option `workers` threads, default:
the cores available; min-task-size=1: a forall of tfn-parallelize or tfn-pack-matmul has one iteration per task, up
to `tasks-per-worker` per worker, and async-parallel-for makes each a block of its own (it is asked for up to
BLOCKS_PER_WORKER blocks per worker); the convolution's loop over output rows has one per row and is cut into
blocks of rows by async-parallel-for itself), which outlines the loop body as `parallel_compute_fn(block, ...)`.

Upstream then hands out the blocks statically: the calling thread runs block 0 and waits for the others, each an
async task of the runtime's thread pool. When another process holds a core, a pool thread may start its task
milliseconds late while the caller, its own block done, only waits: a 2-way split ran slower than no split at all.
So the blocks are handed out dynamically instead (take_blocks_text): the caller starts workers - 1 async tasks, then
itself and every task take the next block from an atomic counter (`memref.atomic_rmw`) until none is left. A worker
that starts late finds fewer blocks, or none. Out of blocks, the caller reads the count of finished ones for a
while (SPINS: a worker's last block often ends meanwhile), then waits (async.await_all) only if a block it did not
run is still being computed: a kernel whose pool thread never got a core returns as soon as the caller has run
every block. The counters live in a small heap block that the last of the caller and its tasks to finish frees (a
task may start after the kernel returned).

Then async-to-async-runtime, the reference-counting passes and convert-async-to-llvm, with the bodies of the
functions that hold no async op (all but the launchers, as a rule) set aside meanwhile: they would change nothing
there, and walking the caller's body was most of their time. They run only on modules
holding an scf.forall: convert-async-to-llvm declares the whole runtime API in every module it sees.

The lowered code calls the C interface of MLIR's async runtime (`mlirAsyncRuntimeExecute`, ...), which tfn
implements itself (runtime/_async_runtime.c, loaded by runtime/async_runtime.py into the process's global scope; the
compiled library links no runtime): a pool of the cores less one threads that, out of tasks, spin for a while
(TFN_ASYNC_SPIN_US, default 100 us) before they sleep, so that the next kernel's task starts at once instead of after
a wake-up of tens of microseconds (MLIR's pool always sleeps; TFN_ASYNC_RUNTIME=mlir runs it, to compare).
"""
from mlir import ir
from mlir.dialects import func
from mlir.passmanager import PassManager

from tfn.passes.options import WORKERS
from tfn.passes.registry import register, verify_each_pass
from tfn.passes.walk import callee_of, collect, contains

DISPATCH = "async_dispatch_fn"  # the functions async-parallel-for outlines: the dispatcher and the loop body
RELEASE = "tfn_release_blocks"
# Reads of the count of finished blocks before the caller, out of blocks to take, blocks in async.await_all (~20 us:
# about half a block of 2 x 128^3 flops). A worker finishing its last block in that time saves the caller a
# wake-up (tens of us on the 2-core VM): 256^3 AVX2 matmul on MLIR's runtime, the fastest call of ~1,800 at load 8,
# 0.32 ms without the spin (never faster than one core), 0.21-0.22 ms with it; the medians, at the one-core time, did
# not move. (tfn's runtime spins in async.await_all too, before it sleeps.)
SPINS = 3000


# The most blocks per worker a loop is cut into (a convolution's loop over its output rows; the other loops have
# fewer iterations, one per task, and each is a block). Blocks are taken one at a time (take_blocks_text), so smaller
# ones balance better when a thread starts late or loses its core for a while: the guide's convolution (198 rows, 2
# workers, AVX-512, same process) ran 37.4-37.5 ms in 16 blocks of 13 rows (upstream's 8 per worker) and 36.0-36.2 in
# 32 of 7 rows or 50 of 4.
BLOCKS_PER_WORKER = 16


def _oversharding_workers(blocks):
    """The num-workers to give async-parallel-for so that it cuts a loop into up to `blocks` blocks: it makes at most
    num-workers x f blocks, f = 8 up to 4 workers, 4 up to 8, 2 up to 16, 1 up to 32, 0.8 up to 64, else 0.6 (its
    "oversharding factor"). The count only sizes the blocks: take_blocks replaces the dispatch it makes with one
    that starts `workers` - 1 tasks."""
    nw = 1
    while int(nw * next(f for top, f in ((4, 8), (8, 4), (16, 2), (32, 1), (64, 0.8), (None, 0.6))
                        if top is None or nw <= top)) < blocks:
        nw += 1
    return nw


def async_passes(workers):
    """The upstream passes lowering scf.forall to tasks of the async runtime run by `workers` threads, as two
    pipelines: outlining (async-parallel-for), then lowering to the runtime (take_blocks runs in between)."""
    nw = _oversharding_workers(BLOCKS_PER_WORKER * workers)
    return (("scf-forall-to-parallel", f"async-parallel-for{{num-workers={nw} min-task-size=1}}"),
            ("async-to-async-runtime", "async-runtime-ref-counting", "async-runtime-ref-counting-opt",
             "convert-async-to-llvm"))


# The control block of one kernel call, memref<3xi64>: [next block to take, blocks done, holders of the block].
_RELEASE_TEXT = f"""
func.func private @{RELEASE}(%ctl: memref<3xi64>) {{
  %c2 = arith.constant 2 : index
  %one = arith.constant 1 : i64
  %minus = arith.constant -1 : i64
  %before = memref.atomic_rmw addi %minus, %ctl[%c2] : (i64, memref<3xi64>) -> i64
  %last = arith.cmpi eq, %before, %one : i64
  scf.if %last {{
    memref.dealloc %ctl : memref<3xi64>
  }}
  return
}}
"""


def take_blocks_text(compute, arg_types, workers, release=False):
    """Two functions for the loop body `compute(block, args...)`: `{compute}_take(ctl, n, args...)` runs blocks
    taken from the counter until all n are taken, and `{compute}_launch(n, args...)` runs the n blocks on the caller
    and up to workers - 1 async tasks, returning when all are done; with `release`, the text also defines the
    function releasing the control block (else declares it)."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    args = ", ".join(f"%a{i}" for i in range(len(arg_types)))
    types = ", ".join(str(t) for t in arg_types)
    sep = ", " if arg_types else ""
    return f"""
func.func private @{compute}(index{sep}{types})
{_RELEASE_TEXT if release else f"func.func private @{RELEASE}(memref<3xi64>)"}

func.func private @{compute}_take(%ctl: memref<3xi64>, %n: index{sep}{params}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %n64 = arith.index_cast %n : index to i64
  %last = scf.while : () -> i64 {{
    %i = memref.atomic_rmw addi %one, %ctl[%c0] : (i64, memref<3xi64>) -> i64
    %more = arith.cmpi slt, %i, %n64 : i64
    scf.condition(%more) %i : i64
  }} do {{
  ^bb0(%i: i64):
    %block = arith.index_cast %i : i64 to index
    func.call @{compute}(%block{sep}{args}) : (index{sep}{types}) -> ()
    %done = memref.atomic_rmw addi %one, %ctl[%c1] : (i64, memref<3xi64>) -> i64
    scf.yield
  }}
  return
}}

func.func private @{compute}_launch(%n: index{sep}{params}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %workers = arith.constant {workers} : index
  %zero = arith.constant 0 : i64
  %ctl = memref.alloc() : memref<3xi64>
  %takers = arith.minsi %n, %workers : index
  %holders = arith.index_cast %takers : index to i64
  memref.store %zero, %ctl[%c0] : memref<3xi64>
  memref.store %zero, %ctl[%c1] : memref<3xi64>
  memref.store %holders, %ctl[%c2] : memref<3xi64>
  %helpers = arith.subi %takers, %c1 : index
  %group = async.create_group %helpers : !async.group
  scf.for %h = %c1 to %takers step %c1 {{
    %token = async.execute {{
      func.call @{compute}_take(%ctl, %n{sep}{args}) : (memref<3xi64>, index{sep}{types}) -> ()
      func.call @{RELEASE}(%ctl) : (memref<3xi64>) -> ()
      async.yield
    }}
    %rank = async.add_to_group %token, %group : !async.token
  }}
  func.call @{compute}_take(%ctl, %n{sep}{args}) : (memref<3xi64>, index{sep}{types}) -> ()
  %n64 = arith.index_cast %n : index to i64
  %spins = arith.constant {SPINS} : index
  %tries, %done = scf.while (%s = %c0) : (index) -> (index, i64) {{
    %now = memref.atomic_rmw addi %zero, %ctl[%c1] : (i64, memref<3xi64>) -> i64
    %running = arith.cmpi slt, %now, %n64 : i64
    %young = arith.cmpi slt, %s, %spins : index
    %again = arith.andi %running, %young : i1
    scf.condition(%again) %s, %now : index, i64
  }} do {{
  ^bb0(%s: index, %now: i64):
    %next = arith.addi %s, %c1 : index
    scf.yield %next : index
  }}
  %pending = arith.cmpi slt, %done, %n64 : i64
  cf.cond_br %pending, ^wait, ^finish
^wait:
  async.await_all %group
  cf.br ^finish
^finish:
  func.call @{RELEASE}(%ctl) : (memref<3xi64>) -> ()
  return
}}
"""


def _top_function(op):
    """The name of the module-level function holding op."""
    while op.parent is not None and op.parent.name != "builtin.module":
        op = op.parent
    return ir.StringAttr(op.attributes["sym_name"]).value if op.name == "func.func" else None


def take_blocks(module_op, workers):
    """Replace each static dispatch of async-parallel-for (`create_group`, `call @async_dispatch_fn(group, 0, n,
    args...)`, `await_all group`) by a call of `{compute}_launch(n, args...)` (take_blocks_text); returns the names
    of the functions that hold async ops afterwards (the launchers, and any function with async ops of its own)."""
    body = module_op.regions[0].blocks[0]
    computes = {}  # dispatcher name -> the loop body it runs (its own first block, its last call)
    for op in [o.operation for o in body.operations]:
        name = ir.StringAttr(op.attributes["sym_name"]).value if op.name == "func.func" else ""
        if name.startswith(DISPATCH):
            computes[name] = [callee_of(c) for c in collect(op, lambda c: c.name == "func.call")
                              if not callee_of(c).startswith(DISPATCH)][-1]
            op.erase()
    calls, async_ops = [], []

    def visit(op):  # one walk: the dispatches to replace, and the async ops of the module
        name = op.name
        if name == "func.call" and callee_of(op) in computes:
            calls.append(op)
        elif name.startswith("async."):
            async_ops.append(op)
        return ir.WalkResult.ADVANCE

    module_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    # The async ops are looked at only as the walk gave them: asking a value for its owner makes an OpView, which for
    # an async op costs ~80 us (the bindings look for a Python module `mlir.dialects.async`, in vain, every time).
    tops = [_top_function(op) for op in async_ops]
    erased = set()  # indices into async_ops
    added = []
    for call in calls:
        compute = computes[callee_of(call)]
        group, _, n, *args = call.operands
        if f"{compute}_launch" not in added:
            parsed = ir.Module.parse(take_blocks_text(compute, [a.type for a in args], workers, RELEASE not in added),
                                     context=module_op.context)
            for op in [o.operation for o in parsed.body.operations]:
                if op.regions[0].blocks:  # not the declarations of the body and of the release function
                    body.append(op.detach_from_parent())
                    added.append(ir.StringAttr(op.attributes["sym_name"]).value)
        mine = [i for i, op in enumerate(async_ops) if i not in erased and
                (op.name == "async.await_all" and op.operands[0] == group or
                 op.name == "async.create_group" and op.results[0] == group)]
        with ir.InsertionPoint(call), call.location:
            func.CallOp([], f"{compute}_launch", [n, *args])
        call.erase()
        for i in sorted(mine, key=lambda i: async_ops[i].name != "async.await_all"):  # the awaits, then the group
            op = async_ops[i]
            if op.name == "async.await_all" or not list(op.results[0].uses):
                op.erase()
                erased.add(i)
    return {top for i, top in enumerate(tops) if i not in erased} | {name for name in added if name.endswith("_launch")}


def _hide_bodies(module_op, holding):
    """Move the bodies of the module's function definitions not named in `holding` into detached holder ops, so that
    the async lowering passes, which change nothing in them, do not walk them (the training step's main function is
    ~90 % of the module: ~5 ms). Functions whose type mentions an async type stay. Returns [(name, holder, public)];
    a hidden function is a private declaration until _restore_bodies puts its body back."""
    hidden = []
    for op in [o.operation for o in module_op.regions[0].blocks[0].operations]:
        if op.name != "func.func" or not op.regions[0].blocks:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name in holding or "!async." in str(op.attributes["function_type"]):
            continue
        holder = ir.Operation.create("scf.execute_region", regions=1, loc=op.location)
        for block in list(op.regions[0].blocks):
            block.append_to(holder.regions[0])
        public = "sym_visibility" not in op.attributes
        if public:  # (a public declaration does not verify)
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        hidden.append((name, holder, public))
    return hidden


def _restore_bodies(module_op, hidden):
    table = ir.SymbolTable(module_op)
    for name, holder, public in hidden:
        fn = table[name].operation
        for block in list(holder.regions[0].blocks):
            block.append_to(fn.regions[0])
        if public:
            del fn.attributes["sym_visibility"]
        holder.erase()


@register("tfn-async-parallel", "Lower scf.forall loops to tasks of the async runtime, blocks taken dynamically "
          "by the caller and the worker threads; modules without scf.forall are left untouched", options=[WORKERS])
def async_parallel(module_op, workers):
    if not contains(module_op, lambda op: op.name == "scf.forall"):
        return
    outline, lower = async_passes(workers)
    _run(outline, module_op)
    hidden = _hide_bodies(module_op, take_blocks(module_op, workers))
    try:
        _run(lower, module_op)
    finally:
        _restore_bodies(module_op, hidden)



def _run(passes, module_op):
    """Run upstream `passes` on module_op, verifying after each only as registry.run would (verify_each_pass): the
    pipeline verifies the module at its end."""
    pm = PassManager.parse(f"builtin.module({','.join(passes)})", context=module_op.context)
    pm.enable_verifier(verify_each_pass())
    pm.run(module_op)
