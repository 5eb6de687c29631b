"""The frontend's core: tensors (eager and symbolic), shapes, specs, the trace in progress, op dispatch."""
