"""`tfn.errors`: TensorFlow's exception classes."""
from tfn.dialects.errors import (  # noqa: F401
    CompileError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OperatorNotAllowedInGraphError,
    OpError,
    OutOfRangeError,
    ResourceExhaustedError,
    UnimplementedError,
)
