"""TensorFlow's exception classes (`tfn.errors`), defined at the bottom layer so every layer can raise them."""


class OpError(Exception):
    """Base of the errors an op raises at run time, as `tf.errors.OpError`."""

    def __init__(self, message, node_def=None, op=None, error_code=None):
        super().__init__(message)
        self.message = message
        self.node_def = node_def
        self.op = op
        self.error_code = error_code


class InvalidArgumentError(OpError):
    pass


class NotFoundError(OpError):
    pass


class OutOfRangeError(OpError):
    pass


class AlreadyExistsError(OpError):
    """What was to be created exists already (a file cache another iterator is writing)."""


class UnimplementedError(OpError):
    pass


class InternalError(OpError):
    pass


class FailedPreconditionError(OpError):
    pass


class ResourceExhaustedError(OpError):
    pass


class DataLossError(OpError):
    """Unrecoverable data loss or corruption (a saved file whose bytes are not those its manifest names)."""


class OperatorNotAllowedInGraphError(TypeError):
    pass


class CompileError(InternalError):
    """tfn could not compile a traced function (an MLIR pass or the native toolchain failed)."""


class StagingError(Exception):
    """A function that cannot be staged: TF's AutoGraph StagingError (an Exception, as TF's), raised for a
    tf.function recursing on tensors and for what the user's code raised while tracing that TF does not re-raise
    with its own class ("in user code: ...")."""


class InaccessibleTensorError(ValueError):
    """A symbolic tensor used outside the control-flow branch or loop body that made it."""
