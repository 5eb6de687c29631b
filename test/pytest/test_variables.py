"""Variables, Modules, init_scope and captures: what the guide's variable programs do beyond what they print,
and more."""
import gc
import tracemalloc
import weakref

import guide
import numpy as np
import pytest

import tfn as tf

# --- the guide's programs (examples/sections/variables.py; test_guide_sections checks what they print) ----------

def test_init_scope_runs_eagerly_inside_a_trace():
    seen = []

    @tf.function
    def f(x):
        with tf.init_scope():
            seen.append(tf.executing_eagerly())
        return x + 1

    assert f(tf.constant(1)).numpy() == 2 and seen == [True]


def test_count_creates_its_variable_once():
    c = guide.run("variables.py").namespace["c"]  # the guide's Count module, called twice
    assert c.variables == (c.count,) and c.count.numpy() == 2


def test_reads_and_writes_happen_in_program_order():
    ns = guide.run("variables.py").namespace  # g: a.assign(y * b); b.assign_add(x * a); return a + b
    a, b, g = ns["a"], ns["b"], ns["g"]
    assert (a.numpy(), b.numpy()) == (4.0, 6.0)  # after g(1.0, 2.0), which returned 10
    assert g(1.0, 2.0).numpy() == 30.0  # a = 2 * 6, b = 6 + 1 * 12
    assert (a.numpy(), b.numpy()) == (12.0, 18.0)


# --- tfn.Variable --------------------------------------------------------------------------------------------

def test_variable_eager_api():
    v = tf.Variable(1.0)
    assert repr(v) == str(v) == "<tfn.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>"
    assert v.name == "Variable:0" and v.dtype is tf.float32 and v.shape == () and v.trainable
    new = v.assign(2.5)
    assert isinstance(new, tf.Tensor) and new.numpy() == 2.5 and v.numpy() == 2.5
    assert v.assign_add(1.5).numpy() == 4.0 and v.assign_sub(1).numpy() == 3.0
    assert v.read_value().numpy() == v.value().numpy() == 3.0
    assert (v + 1).numpy() == 4.0 and (2 * v).numpy() == 6.0 and (-v).numpy() == -3.0 and float(v) == 3.0
    assert bool(v > 2.0) and tf.is_tensor(v)
    w = tf.Variable([[1, 2], [3, 4]], name="w", trainable=False, dtype=tf.int64)
    assert repr(w) == ("<tfn.Variable 'w:0' shape=(2, 2) dtype=int64, numpy=\narray([[1, 2],\n       [3, 4]])>")
    assert not w.trainable and w.dtype is tf.int64
    assert tf.reduce_sum(w).numpy() == 10 and w[1].numpy().tolist() == [3, 4]
    assert np.array_equal(np.asarray(w), [[1, 2], [3, 4]]) and tf.add(1, w).dtype is tf.int64
    assert tf.Variable(lambda: tf.ones([3]) * 2.0).numpy().tolist() == [2.0, 2.0, 2.0]
    assert tf.Variable(v).numpy() == 3.0


def test_a_read_value_is_a_snapshot():
    v = tf.Variable([1.0, 2.0])
    before = v.read_value()
    v.assign([5.0, 6.0])
    assert before.numpy().tolist() == [1.0, 2.0]
    src = np.array([7.0, 8.0], np.float32)
    v.assign(src)
    src[0] = 0.0
    assert v.numpy().tolist() == [7.0, 8.0]


def test_variable_dtype_and_shape_are_fixed():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"Cannot assign value to variable 'Variable:0': Shape mismatch. The "
                                         r"variable shape \(2,\), and the assigned value shape \(3,\) are "
                                         r"incompatible.\n  at .*test_variables.py:\d+"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor with dtype int32"):
        v.assign(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="Incompatible type conversion requested to type int32 for variable of "
                                         "type float32"):
        tf.convert_to_tensor(v, tf.int32)
    with pytest.raises(ValueError, match="The initial value must be specified."):
        tf.Variable()
    assert v.numpy().tolist() == [1.0, 2.0]

    @tf.function
    def grow():
        v.assign([1.0, 2.0, 3.0])

    with pytest.raises(ValueError, match=r"Shape mismatch(.|\n)*in tfn.function 'grow' at .*test_variables.py"):
        grow()


def test_declared_shape_with_unknown_dims_accepts_other_sizes():
    v = tf.Variable([1.0, 2.0], shape=tf.TensorShape([None]))
    assert v.shape.as_list() == [None]

    @tf.function
    def extend(x):
        v.assign(tf.concat([v.read_value(), x], 0))
        return tf.reduce_sum(v)

    assert extend(tf.constant([3.0])).numpy() == 6.0
    assert extend(tf.constant([4.0, 5.0])).numpy() == 15.0
    assert v.numpy().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(ValueError, match="not compatible with the explicitly supplied `shape`"):
        tf.Variable([1.0, 2.0], shape=[3])


def test_a_size_known_only_at_run_time_is_checked_when_written_back():
    v = tf.Variable([1.0, 2.0])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def put(x):
        v.assign(x)
        return tf.reduce_sum(v)

    assert put(tf.constant([3.0, 4.0])).numpy() == 7.0 and v.numpy().tolist() == [3.0, 4.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"variable shape \(2,\), and the assigned value shape "
                                                             r"\(3,\) are incompatible.\n  in tfn.function 'put'"):
        put(tf.constant([3.0, 4.0, 5.0]))
    assert v.numpy().tolist() == [3.0, 4.0]


def test_variable_inside_a_trace_is_symbolic():
    v = tf.Variable(1.0)
    seen = []

    @tf.function
    def f():
        seen.append(repr(v))
        with pytest.raises(NotImplementedError, match="only available when eager execution is enabled"):
            v.numpy()
        return v.read_value()

    assert f().numpy() == 1.0
    assert seen == ["<tfn.Variable 'Variable:0' shape=() dtype=float32>"]


def test_assigning_a_leaked_symbolic_tensor_eagerly_is_out_of_scope():
    leaked = []

    @tf.function
    def f(x):
        leaked.append(x + 1)
        return x

    f(tf.constant(1.0))
    with pytest.raises(TypeError, match="out of scope"):
        tf.Variable(0.0).assign(leaked[0])


# --- variables created inside a function --------------------------------------------------------------------

def test_initial_values_from_arguments_and_other_new_variables_are_initialised_once(capsys):
    class Acc(tf.Module):
        def __init__(self):
            super().__init__(name="acc")
            self.a = None

        @tf.function
        def __call__(self, x):
            print("tracing")
            if self.a is None:
                self.a = tf.Variable(x * 2.0)  # depends on the argument: set by the first call
                self.b = tf.Variable(self.a + 1.0)  # depends on a new variable
                self.c = tf.Variable(lambda: tf.ones([2]) * 3.0, trainable=False)  # callable: run eagerly
            self.b.assign_add(x)
            return self.a + self.b

    acc = Acc()
    assert acc(tf.constant(1.0)).numpy() == 6.0  # a = 2, b = 2 + 1 + 1
    assert (acc.a.numpy(), acc.b.numpy(), acc.c.numpy().tolist()) == (2.0, 4.0, [3.0, 3.0])
    assert acc(tf.constant(1.0)).numpy() == 7.0
    assert acc(tf.constant(10.0)).numpy() == 17.0
    assert capsys.readouterr().out == "tracing\ntracing\n"  # as TF: traced again without creating variables
    assert acc.name == "acc" and len(acc.variables) == 3 and acc.trainable_variables == (acc.a, acc.b)


def test_concrete_function_of_a_creating_trace_initialises_on_its_first_call():
    holder = {}

    @tf.function
    def f(x):
        if "v" not in holder:
            holder["v"] = tf.Variable(x + 1.0)
        return holder["v"].assign_add(x)

    concrete = f.get_concrete_function(tf.TensorSpec([], tf.float32))
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
        holder["v"].numpy()
    assert concrete(tf.constant(2.0)).numpy() == 5.0  # v = 3, then += 2
    assert concrete(tf.constant(2.0)).numpy() == 7.0


def test_variable_argument_is_matched_by_identity():
    @tf.function
    def add(a, b):
        return a + b

    v, w = tf.Variable(1.0), tf.Variable(10.0)
    assert add(v, 1.0).numpy() == 2.0
    v.assign(5.0)
    assert add(v, 1.0).numpy() == 6.0
    assert add(w, 1.0).numpy() == 11.0
    assert len(add.experimental_trace_log()) == 2
    text = str(add.get_concrete_function(v, 1.0))
    assert "a (POSITIONAL_OR_KEYWORD): VariableSpec(shape=(), dtype=tfn.float32, trainable=True, alias_id=" in text


# --- captures ---------------------------------------------------------------------------------------------

def test_captures_are_listed_and_read_at_every_call():
    big = tf.ones([256])
    small = tf.constant([1.0, 2.0])
    v = tf.Variable(3.0)

    @tf.function
    def f(x):
        return tf.reduce_sum(x * big) + tf.reduce_sum(small) + v

    concrete = f.get_concrete_function(tf.constant(2.0))
    assert str(concrete) == (
        "ConcreteFunction Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tfn.float32, name=None)\n"
        "Output Type:\n"
        "  TensorSpec(shape=(), dtype=tfn.float32, name=None)\n"
        "Captures:\n"
        f"  {id(big)}: TensorSpec(shape=(256,), dtype=tfn.float32, name=None)\n"
        f"  {id(v)}: VariableSpec(shape=(), dtype=tfn.float32, trainable=True, alias_id={v._uid})")
    ir = concrete.ir()
    signature = next(line for line in ir.splitlines() if "func.func" in line)
    assert "tensor<256xf32>" in signature and "dense<1.0" not in ir  # an input, not a 256-element constant
    assert f(tf.constant(2.0)).numpy() == 512.0 + 3.0 + 3.0
    v.assign(-3.0)
    assert f(tf.constant(2.0)).numpy() == 512.0 + 3.0 - 3.0


# --- tfn.Module ---------------------------------------------------------------------------------------------

def test_module_collects_variables_and_submodules():
    class Dense(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(tf.ones([2, 2]), name="w")
            self.b = tf.Variable(tf.zeros([2]), name="b", trainable=False)

        @tf.function
        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b

    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense("first"), Dense()]
            self.scale = {"s": tf.Variable(2.0, name="scale")}

    net = Net()
    first, second = net.layers
    assert net.name == "net" and first.name == "first" and second.name == "dense"
    assert net.submodules == (first, second)
    assert [v.name for v in net.variables] == ["scale:0", "b:0", "w:0", "b:0", "w:0"]
    assert net.trainable_variables == (net.scale["s"], first.w, second.w)
    assert first.variables == (first.b, first.w)
    x = tf.ones([1, 2])
    second.w.assign(tf.ones([2, 2]) * 3.0)
    assert first(x).numpy().tolist() == [[2.0, 2.0]] and second(x).numpy().tolist() == [[6.0, 6.0]]
    with pytest.raises(ValueError, match="not a valid module name"):
        tf.Module(name="no spaces")


# --- lifetime and leaks -------------------------------------------------------------------------------------

def _counter_concrete():
    v = tf.Variable(3.0)

    @tf.function(autograph=False)
    def bump():
        v.assign_add(1.0)
        return v * 1.0

    return bump.get_concrete_function(), weakref.ref(v)


def test_concrete_function_keeps_its_captured_variables_alive():
    concrete, ref = _counter_concrete()
    gc.collect()
    assert ref() is not None  # the concrete function holds it: no dangling state
    assert concrete().numpy() == 4.0 and concrete().numpy() == 5.0
    assert ref().numpy() == 5.0
    del concrete
    gc.collect()
    assert ref() is None  # and releases it with itself


def test_ten_thousand_assigning_calls_do_not_leak():
    v = tf.Variable(tf.zeros([64]))

    @tf.function
    def step(x):
        v.assign_add(x)
        return tf.reduce_sum(v)

    x = tf.ones([64])
    for _ in range(200):
        step(x)
    gc.collect()
    objects = len(gc.get_objects())
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(10_000):
            step(x)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    growth = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert growth < 64 * 1024, growth  # 10,000 calls x 256-byte arrays would be 2.5 MB
    assert len(gc.get_objects()) - objects < 200
    assert v.numpy()[0] == 10_200.0
