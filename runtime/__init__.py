"""The tfn runtime: compiling a traced module (`compile`), the artifact cache, loading and calling executables."""
from tfn.passes.target import current as current_target
from tfn.runtime.driver import STAGES, CompileOptions, compile, stage_ir

__all__ = ["STAGES", "CompileOptions", "compile", "current_target", "stage_ir"]
