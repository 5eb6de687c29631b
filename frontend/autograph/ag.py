"""The namespace converted code sees as `ag__`: the operators and converted_call."""
from tfn.autograph.conversion import converted_call  # noqa: F401
from tfn.autograph.operators import (  # noqa: F401
    Undefined,
    UndefinedReturnValue,
    and_,
    autograph_artifact,
    for_stmt,
    if_exp,
    if_stmt,
    not_,
    or_,
    retval,
    while_stmt,
)
