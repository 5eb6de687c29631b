"""`tfn.experimental`: features outside TensorFlow's tf.function API — ahead-of-time compilation for C
(`aot_compile`, frontend/aot.py)."""

_LAZY = ("aot_compile",)


def __getattr__(name):
    if name == "aot_compile":
        # start-up cost: the ahead-of-time compiler and its C generator load on first use, not at `import tfn`
        from tfn.aot import aot_compile

        return aot_compile
    raise AttributeError(f"module 'tfn.experimental' has no attribute '{name}'")


def __dir__():
    return sorted([*globals(), *_LAZY])
