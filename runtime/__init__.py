"""The tfn runtime: compiling a traced module (`compile`), the artifact cache, loading and calling executables."""
from tfn.passes.target import current as current_target
from tfn.runtime.driver import STAGES, CompileOptions, compile, native_code, native_fingerprint, stage_ir

__all__ = ["STAGES", "CompileOptions", "compile", "current_target", "native_code", "native_fingerprint", "stage_ir"]
