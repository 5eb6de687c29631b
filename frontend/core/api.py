"""The public function of each op, registered under the op's name (the completeness test reads this)."""
OP_API = {}


def op_api(*op_names):
    """Mark a public function as the API of the given table ops."""
    def deco(fn):
        for name in op_names:
            OP_API.setdefault(name, fn)
        return fn
    return deco
