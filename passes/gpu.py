"""The GPU pipelines for a chip, for the runtime: `pipeline_for(kind="nvvm" | "emulate" | "mapped", chip=...)`.

- "mapped": tfn to `gpu.launch` kernels on device buffers (tfn-gpu-tile, bufferization, tfn-gpu-map,
  tfn-gpu-device-buffers): the stage both others start from.
- "nvvm": then gpu-kernel-outlining, gpu-async-region and gpu-lower-to-nvvm-pipeline: LLVM-dialect host code with
  the kernels' fatbin for `chip` embedded (a `gpu.binary`); translating it to LLVM IR turns each
  `gpu.launch_func` into mgpuModuleLoad / mgpuModuleGetFunction / mgpuLaunchKernel calls. The host ABI (which
  mgpu* functions of libmlir_cuda_runtime.so the code calls, how buffers are passed) is described in
  passes/tfn_gpu_device_buffers.py; the compiled function keeps the CPU path's signature (host memrefs in, fresh
  host memrefs out).
- "emulate": then tfn-gpu-emulate (the same launches as CPU loop nests) and the CPU lowering: runtime.compile
  with this pipeline runs the GPU kernels on any machine.
"""
from tfn.passes import pipelines
from tfn.passes.target import gpu_target

KINDS = ("mapped", "nvvm", "emulate")


def pipeline_for(kind="nvvm", chip=None, **map_options):
    """The pipeline text for `kind` and `chip` (default: TFN_GPU_CHIP, else sm_90); map_options (block_size,
    matmul_tile, warp_size, guard_slack) are given to tfn-gpu-map (and block_size to tfn-gpu-tile)."""
    if kind not in KINDS:
        raise ValueError(f"unknown GPU pipeline kind {kind!r}; expected one of {', '.join(KINDS)}")
    target = gpu_target(chip)
    mapped = list(pipelines.GPU_MAPPED)
    if map_options:
        text = " ".join(f"{k.replace('_', '-')}={v}" for k, v in sorted(map_options.items()))
        mapped[mapped.index("tfn-gpu-map")] = f"tfn-gpu-map{{{text}}}"
        if "block_size" in map_options:
            mapped[mapped.index("tfn-gpu-tile")] = f"tfn-gpu-tile{{block-size={map_options['block_size']}}}"
    if kind == "mapped":
        tail = ()
    elif kind == "nvvm":
        tail = pipelines.gpu_nvvm_tail(target.chip, target.ptx_features)
    else:
        tail = (f"tfn-gpu-emulate{{warp-size={map_options.get('warp_size', target.warp_size)}}}", "canonicalize",
                "tfn-lower-to-llvm")
    return ", ".join((*mapped, *tail))
