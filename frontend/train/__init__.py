"""`tfn.train`: checkpoints of the variables of objects (`tf.train.Checkpoint`, `CheckpointManager`)."""
from tfn.train.checkpoint import (  # noqa: F401
    Checkpoint,
    CheckpointManager,
    CheckpointReader,
    latest_checkpoint,
    list_variables,
    load_checkpoint,
)
