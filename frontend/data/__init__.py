"""`tfn.data`: input pipelines (`tf.data`) that tfn.function compiles into one loop."""
from tfn.data import experimental  # noqa: F401
from tfn.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset  # noqa: F401
from tfn.data.iterator import Iterator, Optional  # noqa: F401
from tfn.data.spec import DatasetSpec, IteratorSpec  # noqa: F401
