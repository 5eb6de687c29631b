"""The tfn runtime: compiling a traced module (`compile`), the artifact cache, loading and calling executables."""
from tfn.runtime.driver import STAGES, CompileOptions, compile, stage_ir

__all__ = ["STAGES", "CompileOptions", "compile", "stage_ir"]
