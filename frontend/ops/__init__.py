"""Public op functions by family (math, arrays, reductions, ...), tfn.cond/while_loop and TensorArray."""
