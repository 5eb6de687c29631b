"""`tfn.errors`: TensorFlow's exception classes."""
from tfn.dialects.errors import (  # noqa: F401
    AlreadyExistsError,
    CompileError,
    DataLossError,
    FailedPreconditionError,
    InaccessibleTensorError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OperatorNotAllowedInGraphError,
    OpError,
    OutOfRangeError,
    ResourceExhaustedError,
    StagingError,
    UnimplementedError,
)
