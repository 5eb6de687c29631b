"""`tfn.data.experimental`: the names TF keeps there for what Dataset now has itself (sample_from_datasets,
choose_from_datasets, counters, cardinalities), and the transformation functions made for `Dataset.apply`."""
from tfn.data.combinators import assert_cardinality as _assert_cardinality
from tfn.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Counter", "assert_cardinality", "cardinality",
           "choose_from_datasets", "enumerate_dataset", "sample_from_datasets"]


def cardinality(dataset):
    """The dataset's number of elements as an int64 tensor (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY)."""
    return dataset.cardinality()


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def Counter(start=0, step=1, dtype=None):  # noqa: N802  (TF's name)
    return Dataset.counter(start, step) if dtype is None else Dataset.counter(start, step, dtype)


def enumerate_dataset(start=0):
    """For `Dataset.apply`: the dataset's elements as (index, element) pairs."""
    return lambda dataset: dataset.enumerate(start)


def assert_cardinality(expected_cardinality):
    """For `Dataset.apply`: the dataset, checked to hold `expected_cardinality` elements when iterated (TF's
    FailedPreconditionError otherwise); its cardinality() reads that number."""
    return lambda dataset: _assert_cardinality(dataset, expected_cardinality)
