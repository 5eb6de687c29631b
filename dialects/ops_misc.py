"""Ops that make tensors from attributes: constant."""
from tfn.dialects.optable import define


def _constant_infer(types, attrs):
    return attrs["value"][1]


define("constant", [], _constant_infer, lambda arrays, attrs: attrs["value"][0].copy(),
       {"value": "dense"}, tf_name="Const", summary="a tensor from a dense attribute", differentiable=False,
       tf_api="constant")
